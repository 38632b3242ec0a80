"""GL colours taken from `dtmr.render.style`, so the views look like the exported videos.

The style gives uint8 RGB; pyqtgraph GL items take float RGBA in [0, 1].
"""

from __future__ import annotations

import numpy as np

from dtmr.render.style import DEFAULT_STYLE, Style, bone_colours as style_bone_colours
from dtmr.render.style import darker, joint_colours as style_joint_colours
from dtmr.render.style import sliding_colours as style_sliding_colours
from dtmr.skeleton import Topology

BACKGROUND = DEFAULT_STYLE.background
GRID = (*DEFAULT_STYLE.grid, 255)
#: trail segments on frames where the foot is in the air
AIRBORNE_RGBA = (0.55, 0.55, 0.55, 1.0)
#: the source drawn under the released clip in overlay mode: translucent teal, a hue no side, sliding or
#: reliance colour uses
GHOST_RGBA = (0.0, 0.62, 0.62, 0.45)
#: the Privacy panel's colour map, from no reliance (grey) through amber to most relied on (crimson);
#: (position in [0, 1], RGB uint8) stops, shared by the joint colours and the panel's legend
RELIANCE_STOPS = ((0.0, (150, 150, 150)), (0.5, (250, 150, 40)), (1.0, (190, 0, 40)))


def _rgba(rgb: np.ndarray) -> np.ndarray:
    rgb = np.asarray(rgb, dtype=np.float32) / 255.0
    return np.concatenate([rgb, np.ones(rgb.shape[:-1] + (1,), dtype=np.float32)], axis=-1)


def joint_colours(topology: str | Topology, style: Style = DEFAULT_STYLE) -> np.ndarray:
    """(J, 4) float32 RGBA: the side colour of each joint, a shade darker than its bones (as exported)."""
    return _rgba(darker(style_joint_colours(topology, style)))


def bone_colours(topology: str | Topology, style: Style = DEFAULT_STYLE) -> np.ndarray:
    """(J-1, 4) float32 RGBA: a bone takes its child joint's side (left blue, centre grey, right red)."""
    return _rgba(style_bone_colours(topology, style))


def sliding_colours(speeds: np.ndarray, style: Style = DEFAULT_STYLE) -> np.ndarray:
    """(...,) speeds in m/s -> (..., 4) RGBA on the export's sliding map; NaN (no contact) -> grey."""
    speeds = np.asarray(speeds, dtype=np.float32)
    rgba = _rgba(style_sliding_colours(speeds, style))
    rgba[np.isnan(speeds)] = AIRBORNE_RGBA
    return rgba


def reliance_colours(scores: np.ndarray) -> np.ndarray:
    """(...,) reliance in [0, 1] -> (..., 4) float32 RGBA on `RELIANCE_STOPS` (NaN counts as 0)."""
    scores = np.clip(np.nan_to_num(np.asarray(scores, dtype=np.float32)), 0.0, 1.0)
    positions = np.array([p for p, _ in RELIANCE_STOPS], dtype=np.float32)
    rgb = np.array([c for _, c in RELIANCE_STOPS], dtype=np.float32)
    channels = np.stack([np.interp(scores, positions, rgb[:, k]) for k in range(3)], axis=-1)
    return _rgba(channels)
