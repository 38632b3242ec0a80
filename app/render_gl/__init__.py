"""pyqtgraph GL items and views. Everything here runs on the GUI thread only (never from a worker)."""
