"""Software rendering of the side-by-side comparison (Pillow + numpy, no display, no OpenGL).

Every panel shares one camera and one ground grid, so the skeletons are comparable in size. A panel is a
header band (title, prediction lines), the 3-D viewport and a footer band (frame counter); text never
covers the skeleton unless the frame is too short to spare the bands (then it is drawn over the view).
Geometry is projected for all frames at once when the renderer is built; a frame then only costs the
draw calls.
Skeletons are drawn at `SUPERSAMPLE` times the output size and box-filtered down, which anti-aliases the
bones; text is drawn at the output size (FreeType anti-aliases it). Bones and joints are painted far to
near. A NaN joint is not drawn, nor is any bone that touches it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from ..skeleton import get_topology
from .camera import DEFAULT_PRESET, PRESETS, Camera, clip_to_near, fit_camera, scene_bounds
from .ground import grid_segments, ground_level
from .panel import Panel
from .style import DEFAULT_STYLE, Style, bone_colours, darker, joint_colours, sliding_colours
from .text import fit_text, load_font
from .timeline import comparison_length, frame_index

SUPERSAMPLE = 2
#: (width, height) of one panel when no size is given
DEFAULT_PANEL_SIZE = (640, 480)
MIN_PANEL_SIZE = 32
#: the camera's pixel i spans [i, i + 1); Pillow draws coordinate i on the centre of pixel i
PIXEL_CENTRE = 0.5


def default_size(num_panels: int) -> tuple[int, int]:
    return (DEFAULT_PANEL_SIZE[0] * num_panels, DEFAULT_PANEL_SIZE[1])


class _PanelGeometry:
    """One panel's projected joints for every frame, and the colours to draw them with."""

    def __init__(self, panel: Panel, camera: Camera, size: tuple[int, int], style: Style):
        topo = get_topology(panel.topology)
        view = camera.to_view(panel.joints)
        pixels = camera.view_to_pixels(view, size) - PIXEL_CENTRE
        self.panel = panel
        self.visible = np.isfinite(pixels).all(axis=-1)  # (T, J)
        self.pixels = np.where(self.visible[..., None], pixels, 0.0)
        self.depth = view[..., 2]
        self.parents, self.children = topo.bone_parents, topo.bone_children
        self.bone_visible = self.visible[:, self.parents] & self.visible[:, self.children]
        self.bone_depth = 0.5 * (self.depth[:, self.parents] + self.depth[:, self.children])
        self.bone_colours = [tuple(c) for c in bone_colours(topo, style).tolist()]
        self.joint_colours = [tuple(c) for c in darker(joint_colours(topo, style)).tolist()]
        self.feet = np.asarray(topo.contact_joints, dtype=np.int64)
        if panel.foot_speeds is not None:
            self.in_contact = np.isfinite(panel.foot_speeds)
            self.foot_colours = sliding_colours(panel.foot_speeds, style)
        else:
            self.in_contact = np.zeros((panel.num_frames, self.feet.size), dtype=bool)
            self.foot_colours = None


class ComparisonRenderer:
    """Renders frames of `panels` side by side into a `size` = (width, height) RGB image.

    Each panel gets width // len(panels) columns (leftover columns are split between the outer margins).
    `camera` defaults to `fit_camera` over all panels for the viewport's shape, looking from `preset`.
    """

    def __init__(
        self,
        panels: Sequence[Panel],
        size: tuple[int, int] | None = None,
        camera: Camera | None = None,
        style: Style = DEFAULT_STYLE,
        preset: str = DEFAULT_PRESET,
    ):
        if not panels:
            raise ValueError("a comparison needs at least one panel")
        self.panels = list(panels)
        self.size = tuple(int(v) for v in (size or default_size(len(self.panels))))
        width, height = self.size
        self.panel_width = width // len(self.panels)
        if self.panel_width < MIN_PANEL_SIZE or height < MIN_PANEL_SIZE:
            raise ValueError(f"size {width}x{height} leaves panels smaller than {MIN_PANEL_SIZE} pixels")
        self.length = comparison_length(p.num_frames for p in self.panels)
        self.style = style
        self._offsets = [(width - self.panel_width * len(self.panels)) // 2 + i * self.panel_width
                         for i in range(len(self.panels))]
        self._title_font = load_font(int(np.clip(round(height * style.title_size), 10, 40)), bold=True)
        self._text_font = load_font(int(np.clip(round(height * style.text_size), 9, 32)))
        self._text_pad = max(4, round(height / 60))
        self._title_height = round(self._title_font.size * 1.3)
        self._line_height = round(self._text_font.size * 1.25)
        self.viewport = self._viewport()
        #: no room for the text bands: the text is drawn over the view, after the skeletons
        self._text_over_view = self.viewport == (0, height)
        viewport_size = (self.panel_width, self.viewport[1] - self.viewport[0])
        if camera is None:
            if preset not in PRESETS:
                raise ValueError(f"unknown camera preset {preset!r} (known: {', '.join(PRESETS)})")
            azimuth, elevation = PRESETS[preset]
            camera = fit_camera(self.panels, aspect=viewport_size[0] / viewport_size[1], azimuth=azimuth,
                                elevation=elevation)
        self.camera = camera
        ss_size = (viewport_size[0] * SUPERSAMPLE, viewport_size[1] * SUPERSAMPLE)
        self._geometry = [_PanelGeometry(p, self.camera, ss_size, style) for p in self.panels]
        # at least 2 output pixels wide, so thin bones keep their colour in small exports
        self._bone_width = max(2 * SUPERSAMPLE, round(height * style.bone_width * SUPERSAMPLE))
        self._joint_radius = max(1.5 * SUPERSAMPLE, height * style.joint_radius * SUPERSAMPLE)
        self._foot_radius = max(2.5 * SUPERSAMPLE, height * style.foot_radius * SUPERSAMPLE)
        self._panel_background = self._draw_panel_background(ss_size)
        self._base = self._draw_base()

    def _viewport(self) -> tuple[int, int]:
        """(top, bottom) rows of the 3-D view: below the header, above the footer, when room allows."""
        height = self.size[1]
        lines = max((len(lines) for p in self.panels if p.predictions is not None for lines in p.predictions),
                    default=0)
        header = self._text_pad + self._title_height + lines * self._line_height + self._text_pad // 2
        footer = self._line_height + self._text_pad
        if height - header - footer < height // 2:
            return 0, height
        return header, height - footer

    def image_pixels(self, points: np.ndarray, panel: int = 0) -> np.ndarray:
        """(..., 3) world points -> (..., 2) continuous (x, y) of the output image, in panel `panel`'s view.

        Pixel (column c, row r) spans [c, c + 1) x [r, r + 1); NaN where the camera cannot see the point.
        """
        view_size = (self.panel_width, self.viewport[1] - self.viewport[0])
        return self.camera.project(points, view_size) + (self._offsets[panel], self.viewport[0])

    def _draw_panel_background(self, ss_size: tuple[int, int]) -> Image.Image:
        """The floor grid as seen by the shared camera, at the supersampled size (same for every panel)."""
        image = Image.new("RGB", ss_size, self.style.background)
        bounds = scene_bounds(self.panels)
        if bounds is None:
            return image
        floor = ground_level([p.joints for p in self.panels], [p.topology for p in self.panels])
        segments = grid_segments(bounds[0], bounds[1], floor, self.style.grid_spacing)
        pixels = self.camera.view_to_pixels(clip_to_near(self.camera.to_view(segments)), ss_size) - PIXEL_CENTRE
        pixels = pixels[np.isfinite(pixels).all(axis=(1, 2))]
        draw = ImageDraw.Draw(image)
        for (x0, y0), (x1, y1) in pixels.tolist():
            draw.line([(x0, y0), (x1, y1)], fill=self.style.grid, width=SUPERSAMPLE)
        return image

    def _draw_base(self) -> Image.Image:
        """Everything that does not change with the frame: floors, titles, separators (output size)."""
        base = Image.new("RGB", self.size, self.style.background)
        floor = self._panel_background.reduce(SUPERSAMPLE)
        draw = ImageDraw.Draw(base)
        for panel, left in zip(self.panels, self._offsets):
            base.paste(floor, (left, self.viewport[0]))
            if not self._text_over_view:
                self._draw_title(draw, panel, left)
        for left in self._offsets[1:]:
            draw.line([(left, 0), (left, self.size[1] - 1)], fill=self.style.separator, width=1)
        return base

    def _skeleton_box(self, geometry: _PanelGeometry, t: int) -> tuple[int, int, int, int] | None:
        """Supersampled (left, top, right, bottom) around the skeleton, on even pixels, or None if nothing shows.

        Only this box is drawn and downsampled; being aligned to the supersampling factor, the result is
        the same as downsampling the whole panel, at a fraction of the cost.
        """
        visible = geometry.visible[t]
        if not visible.any():
            return None
        xy = geometry.pixels[t, visible]
        pad = self._foot_radius + self._bone_width + SUPERSAMPLE
        width, height = self._panel_background.size
        left, top = np.floor((xy.min(axis=0) - pad) / SUPERSAMPLE).astype(int) * SUPERSAMPLE
        right, bottom = np.ceil((xy.max(axis=0) + pad) / SUPERSAMPLE).astype(int) * SUPERSAMPLE
        left, top, right, bottom = max(left, 0), max(top, 0), min(right, width), min(bottom, height)
        if left >= right or top >= bottom:
            return None
        return int(left), int(top), int(right), int(bottom)

    def _draw_skeleton(self, geometry: _PanelGeometry, t: int, box: tuple[int, int, int, int]) -> Image.Image:
        """The skeleton of frame `t` over the floor inside `box`, downsampled to the output scale."""
        image = self._panel_background.crop(box)
        draw = ImageDraw.Draw(image)
        bones = np.flatnonzero(geometry.bone_visible[t])
        joints = np.flatnonzero(geometry.visible[t])
        depth = np.concatenate([geometry.bone_depth[t, bones], geometry.depth[t, joints]])
        items = np.concatenate([bones, joints + len(geometry.parents)])
        order = items[np.argsort(-depth, kind="stable")].tolist()
        xy = (geometry.pixels[t] - np.array(box[:2])).tolist()
        feet = dict(zip(geometry.feet.tolist(), range(geometry.feet.size)))
        num_bones = len(geometry.parents)
        for item in order:
            if item < num_bones:
                a, b = geometry.parents[item], geometry.children[item]
                draw.line([tuple(xy[a]), tuple(xy[b])], fill=geometry.bone_colours[item], width=self._bone_width)
                continue
            j = item - num_bones
            x, y = xy[j]
            foot = feet.get(j)
            if foot is not None and geometry.in_contact[t, foot]:
                r = self._foot_radius
                colour = tuple(geometry.foot_colours[t, foot].tolist())
                draw.ellipse([x - r, y - r, x + r, y + r], fill=colour, outline=self.style.title, width=SUPERSAMPLE)
            else:
                r = self._joint_radius
                draw.ellipse([x - r, y - r, x + r, y + r], fill=geometry.joint_colours[j])
        return image.reduce(SUPERSAMPLE)

    def _draw_title(self, draw: ImageDraw.ImageDraw, panel: Panel, left: int) -> None:
        pad = self._text_pad
        title = fit_text(panel.title, self._title_font, self.panel_width - 2 * pad)
        draw.text((left + pad, pad), title, font=self._title_font, fill=self.style.title)

    def _draw_text(self, draw: ImageDraw.ImageDraw, panel: Panel, left: int, t: int) -> None:
        """Prediction lines under the title and the frame counter at the bottom.

        The title is already in the base image, unless the text goes over the view.
        """
        pad = self._text_pad
        line_h = self._line_height
        if self._text_over_view:
            self._draw_title(draw, panel, left)
        if panel.predictions is not None:
            y = pad + self._title_height
            for line in panel.predictions[t]:
                text = fit_text(line, self._text_font, self.panel_width - 2 * pad)
                draw.text((left + pad, y), text, font=self._text_font, fill=self.style.text)
                y += line_h
        counter = f"frame {t + 1}/{panel.num_frames}"
        if t == panel.num_frames - 1 and panel.num_frames < self.length:
            counter += " · held"
        draw.text((left + pad, self.size[1] - pad - line_h), counter, font=self._text_font, fill=self.style.text)

    def render_image(self, frame: int) -> Image.Image:
        """Comparison frame `frame` (0 <= frame < length) as a Pillow RGB image."""
        if not 0 <= frame < self.length:
            raise ValueError(f"frame {frame} is outside the comparison's {self.length} frames")
        canvas = self._base.copy()
        draw = ImageDraw.Draw(canvas)
        for geometry, left in zip(self._geometry, self._offsets):
            t = int(frame_index(frame, geometry.panel.num_frames))
            box = self._skeleton_box(geometry, t)
            if box is not None:
                corner = (left + box[0] // SUPERSAMPLE, self.viewport[0] + box[1] // SUPERSAMPLE)
                canvas.paste(self._draw_skeleton(geometry, t, box), corner)
            self._draw_text(draw, geometry.panel, left, t)
        return canvas

    def render(self, frame: int) -> np.ndarray:
        """Comparison frame `frame` as an (H, W, 3) uint8 array (read-only: it shares the image's bytes)."""
        return np.asarray(self.render_image(frame))


def render_comparison(
    panels: Sequence[Panel],
    frame: int,
    size: tuple[int, int] | None = None,
    camera: Camera | None = None,
    style: Style = DEFAULT_STYLE,
    preset: str = DEFAULT_PRESET,
) -> np.ndarray:
    """One (H, W, 3) uint8 frame of `panels` side by side (see `ComparisonRenderer`; build one to render many)."""
    return ComparisonRenderer(panels, size=size, camera=camera, style=style, preset=preset).render(frame)
