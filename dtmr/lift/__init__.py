"""2-D -> 3-D lifting of COCO-17 keypoints (docs/models.md, "Lifter").

`lift_keypoints(keypoints_2d (T, 17, 2) pixels, scores=None) -> (T, 17, 3)` metres, coco17, y up, hip
midpoint at the origin; trained on the synthetic set projected through random pinhole cameras.
"""

from .apply import DEFAULT_LIFTER, MIN_SCORE, default_lifter, lift_keypoints
from .checkpoint import load_lifter, save_lifter

__all__ = ["DEFAULT_LIFTER", "MIN_SCORE", "default_lifter", "lift_keypoints", "load_lifter", "save_lifter"]
