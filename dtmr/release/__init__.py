"""Releases: what `dtmr anonymize` publishes, the key the data owner keeps, and whole-library export.

A release holds nothing that identifies a person or a source clip (see docs/privacy.md); the key maps each
opaque release id back to its source, for evaluation and audit only.
"""
