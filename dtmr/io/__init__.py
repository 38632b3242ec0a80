"""Readers and writers, one module per format, and the HDF5 clip library."""
