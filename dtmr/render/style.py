"""Colours and sizes of the rendered comparison.

Bones take the side of their child joint (`Topology.sides`): left blue, centre dark grey, right red, the
pyskl convention. Feet in ground contact are drawn as larger dots coloured by their horizontal sliding
speed: green when planted, through amber, to magenta at `sliding_max` m/s and above (magenta, not red,
so a sliding foot is never mistaken for a right-side joint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..skeleton import Topology, get_topology
from ..skeleton.topology import LEFT, RIGHT

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Style:
    background: RGB = (250, 250, 250)
    grid: RGB = (216, 216, 216)
    separator: RGB = (170, 170, 170)
    left: RGB = (31, 119, 180)
    centre: RGB = (70, 70, 70)
    right: RGB = (214, 39, 40)
    title: RGB = (20, 20, 20)
    text: RGB = (60, 60, 60)
    #: sliding colour map stops, for speeds 0, sliding_max / 2 and >= sliding_max
    sliding_stops: tuple[RGB, RGB, RGB] = ((26, 152, 80), (240, 170, 20), (190, 0, 170))
    #: m/s at which a foot in contact is fully "sliding"
    sliding_max: float = 0.3
    #: bone width and joint radius as fractions of the panel height
    bone_width: float = 1.0 / 150.0
    joint_radius: float = 1.0 / 110.0
    foot_radius: float = 1.0 / 65.0
    #: title and body text heights as fractions of the panel height (clamped to readable pixel sizes)
    title_size: float = 1.0 / 26.0
    text_size: float = 1.0 / 32.0
    #: metres between ground grid lines
    grid_spacing: float = 0.5


DEFAULT_STYLE = Style()


def joint_colours(topology: str | Topology, style: Style = DEFAULT_STYLE) -> np.ndarray:
    """(J, 3) uint8: the side colour of every joint."""
    sides = np.asarray(get_topology(topology).sides)
    colours = np.empty((sides.size, 3), dtype=np.uint8)
    colours[:] = style.centre
    colours[sides == LEFT] = style.left
    colours[sides == RIGHT] = style.right
    return colours


def bone_colours(topology: str | Topology, style: Style = DEFAULT_STYLE) -> np.ndarray:
    """(B, 3) uint8 in `Topology.bones` order: each bone has its child joint's side colour."""
    topo = get_topology(topology)
    return joint_colours(topo, style)[topo.bone_children]


def darker(colours: np.ndarray, factor: float = 0.7) -> np.ndarray:
    """Joint dots are a shade darker than their bones so they read as joints."""
    return (np.asarray(colours, dtype=np.float32) * factor).round().astype(np.uint8)


def sliding_colours(speeds: np.ndarray, style: Style = DEFAULT_STYLE) -> np.ndarray:
    """(...) speeds in m/s -> (..., 3) uint8 colours on the sliding map (NaN speeds map to 0)."""
    t = np.clip(np.nan_to_num(np.asarray(speeds, dtype=np.float32)) / style.sliding_max, 0.0, 1.0) * 2.0
    stops = np.asarray(style.sliding_stops, dtype=np.float32)
    low = np.minimum(t.astype(np.int64), 1)
    frac = (t - low)[..., None]
    return (stops[low] * (1.0 - frac) + stops[low + 1] * frac).round().astype(np.uint8)
