"""DTMR Studio: the PySide6 desktop application over the `dtmr` library.

Layout (napari/JABS style): `state/` Qt-free evented state, `core/` Qt-free glue to the library
(checkpoint catalogue, inference and recognition jobs), `workers/` long-lived QThreads
that run those jobs, `render_gl/` pyqtgraph GL items, `ui/` widgets that listen to the state.
"""
