"""Draw the DTMR Studio icon: resources/icons/dtmr-studio.svg and a 256-pixel PNG rendered from it.

The picture is the Studio's idea in one tile: the same pose performed by two bodies. A grey, translucent
"source" figure stands behind a coloured "released" one that has other bone lengths (left limbs blue,
right limbs red, the side colours of `dtmr.render.style`). Both figures come from one set of bone angles
through 2-D forward kinematics, so they really are the same pose retargeted.

    python packaging/make_icon.py            # rewrites both files
    python packaging/make_icon.py --check    # exit 1 when the checked-in SVG differs from what this draws
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SVG_NAME = "dtmr-studio.svg"
PNG_NAME = "dtmr-studio.png"
PNG_SIZE = 256
VIEWBOX = 256

TILE = "#1f2a36"
SOURCE = "#9aa7b4"
LEFT = "#1f77b4"  # dtmr.render.style: left blue, right red, centre grey (lightened for a dark tile)
RIGHT = "#d62728"
CENTRE = "#e6e6e6"

# (name, parent, side, angle in degrees: 0 = straight down, positive = towards the figure's left / +x)
BONES = (
    ("spine", "pelvis", "c", 180.0),
    ("neck", "spine", "c", 180.0),
    ("head", "neck", "c", 180.0),
    ("l_shoulder", "neck", "l", 90.0),
    ("l_elbow", "l_shoulder", "l", 25.0),
    ("l_hand", "l_elbow", "l", 120.0),
    ("r_shoulder", "neck", "r", -90.0),
    ("r_elbow", "r_shoulder", "r", -35.0),
    ("r_hand", "r_elbow", "r", -10.0),
    ("l_hip", "pelvis", "l", 90.0),
    ("l_knee", "l_hip", "l", 25.0),
    ("l_foot", "l_knee", "l", -5.0),
    ("r_hip", "pelvis", "r", -90.0),
    ("r_knee", "r_hip", "r", -30.0),
    ("r_foot", "r_knee", "r", 5.0),
)
#: bone lengths in viewbox units: the source body, and the (taller, longer-limbed) released body
SOURCE_LENGTHS = {"spine": 34, "neck": 26, "head": 16, "l_shoulder": 17, "l_elbow": 30, "l_hand": 28,
                  "r_shoulder": 17, "r_elbow": 30, "r_hand": 28, "l_hip": 12, "l_knee": 40, "l_foot": 38,
                  "r_hip": 12, "r_knee": 40, "r_foot": 38}
RELEASED_SCALE = {"spine": 1.15, "neck": 1.1, "head": 1.0, "l_shoulder": 0.85, "r_shoulder": 0.85,
                  "l_elbow": 1.2, "r_elbow": 1.2, "l_hand": 1.15, "r_hand": 1.15, "l_hip": 0.8, "r_hip": 0.8,
                  "l_knee": 1.25, "r_knee": 1.25, "l_foot": 1.25, "r_foot": 1.25}


GROUND_Y = 214.0
HEAD_RADIUS = 14.0


def pose(lengths: dict[str, float], pelvis_x: float) -> dict[str, np.ndarray]:
    """Joint positions (SVG coordinates, y down) of the pose `BONES` with these bone lengths, the pelvis
    at `pelvis_x` and the lower foot on the ground line."""
    joints = {"pelvis": np.zeros(2)}
    for name, parent, _, angle in BONES:
        theta = np.radians(angle)
        joints[name] = joints[parent] + lengths[name] * np.array([np.sin(theta), np.cos(theta)])
    lowest = max(joints["l_foot"][1], joints["r_foot"][1])
    return {name: xy + (pelvis_x, GROUND_Y - lowest) for name, xy in joints.items()}


def _figure(joints: dict[str, np.ndarray], colours: dict[str, str], width: float, opacity: float) -> list[str]:
    lines = [f'  <g stroke-linecap="round" stroke-linejoin="round" fill="none" opacity="{opacity:g}">']
    for name, parent, side, _ in BONES:
        if name == "head":
            continue
        (x0, y0), (x1, y1) = joints[parent], joints[name]
        lines.append(f'    <line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" '
                     f'stroke="{colours[side]}" stroke-width="{width:g}"/>')
    hx, hy = joints["head"]
    lines.append(f'    <circle cx="{hx:.1f}" cy="{hy:.1f}" r="{HEAD_RADIUS:g}" fill="{colours["c"]}"/>')
    lines.append("  </g>")
    return lines


def icon_svg() -> str:
    source = pose(SOURCE_LENGTHS, 100.0)
    released_lengths = {name: SOURCE_LENGTHS[name] * RELEASED_SCALE[name] for name in SOURCE_LENGTHS}
    released = pose(released_lengths, 150.0)
    svg = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{VIEWBOX}" height="{VIEWBOX}" '
         f'viewBox="0 0 {VIEWBOX} {VIEWBOX}">'),
        "  <title>DTMR Studio</title>",
        f'  <rect x="8" y="8" width="240" height="240" rx="44" fill="{TILE}"/>',
        (f'  <line x1="40" y1="{GROUND_Y + 8:g}" x2="216" y2="{GROUND_Y + 8:g}" stroke="#3b4a5a" '
         'stroke-width="6" stroke-linecap="round"/>'),
        *_figure(source, {"l": SOURCE, "r": SOURCE, "c": SOURCE}, 11, 0.55),
        *_figure(released, {"l": LEFT, "r": RIGHT, "c": CENTRE}, 12, 1.0),
        "</svg>",
    ]
    return "\n".join(svg) + "\n"


def render_png(svg: str, size: int = PNG_SIZE):
    """The SVG rasterised by Qt's SVG renderer on a transparent `size`-pixel square (a QImage)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # QPainter needs one alive
    renderer = QSvgRenderer(QByteArray(svg.encode()))
    if not renderer.isValid():
        raise ValueError("the icon SVG does not parse")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare the checked-in SVG")
    parser.add_argument("--out", type=Path, default=ICONS, help="folder to write (default: resources/icons)")
    args = parser.parse_args(argv)
    svg = icon_svg()
    if args.check:
        current = (args.out / SVG_NAME).read_text() if (args.out / SVG_NAME).is_file() else ""
        if current != svg:
            print(f"{args.out / SVG_NAME} is not what packaging/make_icon.py draws; run it", file=sys.stderr)
            return 1
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / SVG_NAME).write_text(svg)
    if not render_png(svg).save(str(args.out / PNG_NAME), "PNG"):
        raise OSError(f"cannot write {args.out / PNG_NAME}")
    print(f"wrote {args.out / SVG_NAME} and {args.out / PNG_NAME} ({PNG_SIZE}x{PNG_SIZE})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
