"""Software (Pillow) rendering of side-by-side skeleton comparisons and their GIF/MP4 export.

No Qt and no OpenGL: `dtmr export` and the Studio's export dialog call the same functions, so their
frames are identical, with or without a display.
"""

from .camera import DEFAULT_PRESET, PRESETS, Camera, fit_camera
from .comparison import Recognizers, build_comparison, load_recognizers, pick_reference
from .frame import ComparisonRenderer, render_comparison
from .panel import MAX_PREDICTION_LINES, Panel
from .style import DEFAULT_STYLE, Style
from .timeline import comparison_length, frame_index
from .video import FORMATS, ExportCancelled, export_video

__all__ = [
    "DEFAULT_PRESET", "DEFAULT_STYLE", "FORMATS", "MAX_PREDICTION_LINES", "PRESETS", "Camera", "ComparisonRenderer",
    "ExportCancelled", "Panel", "Recognizers", "Style", "build_comparison", "comparison_length", "export_video",
    "fit_camera", "frame_index", "load_recognizers", "pick_reference", "render_comparison",
]
