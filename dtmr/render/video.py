"""GIF and MP4 export of a side-by-side comparison, written atomically.

MP4 is H.264 (libx264, CRF 20, `-tune animation` for flat-coloured drawings) in yuv420p, which every
player reads, converted with the BT.709 matrix and tagged BT.709 (`MP4_COLOUR_ARGS`); yuv420p needs even
dimensions, so an odd width or height is rounded up by one pixel.
GIF is made in two passes over the frames: ffmpeg's `palettegen` collects one 256-colour palette from
every frame, then `paletteuse` maps the frames onto it without dithering (the drawings are flat colours,
and dithering noise would flicker) and re-encodes only the rectangle that changed between frames. The
frames are rendered twice rather than kept in memory, so progress counts 2 x frames for a GIF.

GIF frame delays are whole centiseconds, so most rates cannot be written exactly (30 fps is 3.33 cs a
frame). ffmpeg's GIF muxer writes each frame's delay as the difference of the frames' timestamps rounded
to centiseconds, so the delays alternate (3, 3, 4 cs at 30 fps; 4, 4, 4, 4, 5 cs at 24 fps) and the whole
GIF lasts as long as the clip, to the nearest centisecond (tests/render/test_render_video.py reads the
delays back). Browsers and most viewers show a delay under 2 cs as 10 cs, so a GIF plays at most
`GIF_MAX_FPS`; a faster rate is refused rather than written to play several times too slowly.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ..errors import DtmrError, InputError
from ..io.atomic import atomic_write
from .camera import DEFAULT_PRESET, Camera
from .ffmpeg import FfmpegPipe
from .frame import ComparisonRenderer, default_size
from .panel import Panel
from .style import DEFAULT_STYLE, Style

FORMATS = (".gif", ".mp4")
#: the frames are converted to YUV with the BT.709 matrix (swscale's default is BT.601) and the stream is tagged
#: BT.709 (primaries, transfer, matrix) in limited range: what players assume for HD video, so colours play back
#: as rendered (untagged BT.601 came out shifted in players that assume BT.709)
MP4_COLOUR_ARGS = (
    "-vf", "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p",
    "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv",
)
MP4_ARGS = (
    "-c:v", "libx264", "-pix_fmt", "yuv420p", *MP4_COLOUR_ARGS, "-preset", "veryfast", "-tune", "animation",
    "-crf", "20", "-movflags", "+faststart",
)
GIF_PALETTE_ARGS = ("-vf", "palettegen=max_colors=256:stats_mode=full", "-frames:v", "1", "-update", "1")
#: 2 cs a frame: the shortest delay that players honour
GIF_MAX_FPS = 50.0
GIF_ARGS = ("-filter_complex", "[0:v][1:v]paletteuse=dither=none:diff_mode=rectangle", "-loop", "0")

ProgressCallback = Callable[[int, int], None]
CancelCallback = Callable[[], bool]


class ExportCancelled(DtmrError):
    """The export was cancelled; nothing was written."""


def check_video_rate(path: str | Path, fps: float) -> None:
    """`InputError` naming `path` when `fps` cannot be played back in its format (a GIF above `GIF_MAX_FPS`)."""
    if Path(path).suffix.lower() == ".gif" and fps > GIF_MAX_FPS:
        raise InputError(path, f"a GIF plays at most {GIF_MAX_FPS:g} frames per second (its frame delays are whole "
                               f"centiseconds, and players show delays under 2 cs as 10 cs), not {fps:g}: "
                               "choose a lower rate or write .mp4")


def video_size(size: tuple[int, int], suffix: str) -> tuple[int, int]:
    """The frame size written for a requested `size`: MP4 (yuv420p) rounds odd dimensions up to even."""
    width, height = (int(v) for v in size)
    if suffix == ".mp4":
        width, height = width + width % 2, height + height % 2
    return width, height


class _Ticker:
    """Calls `progress(done, total)` after each frame and raises `ExportCancelled` when `cancel()` says so."""

    def __init__(self, total: int, progress: ProgressCallback | None, cancel: CancelCallback | None):
        self.total, self.done = total, 0
        self._progress, self._cancel = progress, cancel

    def check(self) -> None:
        if self._cancel is not None and self._cancel():
            raise ExportCancelled("export cancelled")

    def tick(self) -> None:
        self.done += 1
        if self._progress is not None:
            self._progress(self.done, self.total)


def _encode(pipe: FfmpegPipe, renderer: ComparisonRenderer, frames: Sequence[int], ticker: _Ticker) -> None:
    try:
        for frame in frames:
            ticker.check()
            pipe.write(renderer.render_image(frame).tobytes())
            ticker.tick()
    except BaseException:
        pipe.abort()
        raise
    pipe.close()


def _write_mp4(path: Path, renderer: ComparisonRenderer, frames: Sequence[int], fps: float, ticker: _Ticker) -> None:
    _encode(FfmpegPipe(path, renderer.size, fps, MP4_ARGS), renderer, frames, ticker)


def _write_gif(path: Path, renderer: ComparisonRenderer, frames: Sequence[int], fps: float, ticker: _Ticker) -> None:
    with tempfile.TemporaryDirectory(prefix="dtmr-gif-") as folder:
        palette = Path(folder) / "palette.png"
        _encode(FfmpegPipe(palette, renderer.size, fps, GIF_PALETTE_ARGS), renderer, frames, ticker)
        _encode(FfmpegPipe(path, renderer.size, fps, GIF_ARGS, extra_inputs=[palette]), renderer, frames, ticker)


def export_video(
    path: str | Path,
    panels: Sequence[Panel],
    frames: Iterable[int] | None = None,
    fps: float = 30.0,
    size: tuple[int, int] | None = None,
    camera: Camera | None = None,
    style: Style = DEFAULT_STYLE,
    preset: str = DEFAULT_PRESET,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
) -> Path:
    """Write the comparison of `panels` to `path` (.gif or .mp4, by suffix) and return the path.

    `frames` are comparison frames (default: all, see `dtmr.render.timeline`); `size` is the whole
    frame (default 640x480 per panel); `camera` defaults to one fitted to all panels, looking from
    the camera `preset`. `progress(done, total)` is called after each rendered frame; `cancel()` is
    polled before each one and, when it returns True, the export stops with `ExportCancelled`. Nothing
    is left at `path` (nor beside it) unless the export completes.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(path, f"unsupported video format {path.suffix or '(none)'!r}: use .gif or .mp4")
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    check_video_rate(path, fps)
    size = video_size(size or default_size(len(panels)), suffix)
    renderer = ComparisonRenderer(panels, size=size, camera=camera, style=style, preset=preset)
    frames = list(range(renderer.length)) if frames is None else [int(f) for f in frames]
    if not frames:
        raise ValueError("no frames to export")
    bad = [f for f in frames if not 0 <= f < renderer.length]
    if bad:
        raise ValueError(f"frames {bad[:3]} are outside the comparison's {renderer.length} frames")
    passes = 2 if suffix == ".gif" else 1
    ticker = _Ticker(passes * len(frames), progress, cancel)
    writer = _write_gif if suffix == ".gif" else _write_mp4
    with atomic_write(path, suffix=suffix) as tmp:
        writer(tmp, renderer, frames, fps, ticker)
    return path
