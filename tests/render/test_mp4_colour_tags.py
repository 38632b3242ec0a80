"""Exported MP4s say which colours they hold: BT.709 primaries, transfer and matrix, limited range, and the
RGB -> YUV conversion really uses the BT.709 matrix (issue 45). Inspected with the ffmpeg binary that
imageio-ffmpeg ships (`ffmpeg -i` prints the stream's colour tags, like ffprobe)."""

import subprocess

import imageio_ffmpeg
import numpy as np

from dtmr.render import Panel, export_video
from dtmr.render.ffmpeg import FfmpegPipe
from dtmr.render.video import MP4_ARGS
from render_fakes import swaying_clip

FFMPEG = imageio_ffmpeg.get_ffmpeg_exe()


def stream_line(path) -> str:
    """The `Video:` line of `ffmpeg -i path` (e.g. `h264 (High) ..., yuv420p(tv, bt709, progressive), ...`)."""
    result = subprocess.run([FFMPEG, "-hide_banner", "-i", str(path)], capture_output=True, text=True)
    return next(line for line in result.stderr.splitlines() if "Video:" in line)


def test_exported_mp4_is_tagged_bt709(tmp_path):
    panels = [Panel.from_clip(swaying_clip(frames=4), "source")]
    out = export_video(tmp_path / "tagged.mp4", panels, fps=15, size=(96, 64))
    line = stream_line(out)
    # ffmpeg prints "yuv420p(tv, bt709, ...)" when matrix, primaries and transfer all are bt709 (it lists them
    # one by one, "bt709/bt470bg/...", when they differ)
    assert "yuv420p(tv, bt709" in line, line


def test_the_rgb_to_yuv_matrix_is_bt709(tmp_path):
    """Pure red has luma 16 + 219 * 0.2126 = 62.6 under BT.709 and 16 + 219 * 0.299 = 81.5 under BT.601."""
    out = tmp_path / "red.mp4"
    pipe = FfmpegPipe(out, (64, 64), 10.0, MP4_ARGS)
    red = np.zeros((64, 64, 3), np.uint8)
    red[..., 0] = 255
    for _ in range(3):
        pipe.write(red.tobytes())
    pipe.close()
    raw = subprocess.run([FFMPEG, "-hide_banner", "-loglevel", "error", "-i", str(out), "-frames:v", "1",
                          "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], capture_output=True, check=True).stdout
    luma = np.frombuffer(raw[: 64 * 64], np.uint8)
    assert abs(float(np.median(luma)) - 62.6) <= 2, np.median(luma)
