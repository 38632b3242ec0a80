"""A raw-RGB pipe into the ffmpeg executable that imageio-ffmpeg ships.

imageio-ffmpeg's own writer neither reports ffmpeg's exit status nor can it stop ffmpeg without waiting
for the queued frames to be encoded; this pipe does both: `close()` raises with ffmpeg's error text when
it failed, `abort()` kills it at once (a cancelled export).
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import imageio_ffmpeg

from ..errors import DtmrError


class FfmpegError(DtmrError):
    """ffmpeg failed; the message ends with the tail of its error output."""


class FfmpegPipe:
    """Feeds (H, W, 3) RGB frames of one fixed `size` = (width, height) to ffmpeg, which writes `output`.

    The frames are ffmpeg's input 0; `extra_inputs` are files read as inputs 1, 2, ...
    """

    def __init__(
        self,
        output: str | Path,
        size: tuple[int, int],
        fps: float,
        output_args: Sequence[str],
        extra_inputs: Sequence[str | Path] = (),
    ):
        self.size = size
        self._frame_bytes = size[0] * size[1] * 3
        rate = Fraction(fps).limit_denominator(1001)
        cmd = [
            imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-hide_banner", "-loglevel", "error", "-nostdin",
            "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{size[0]}x{size[1]}", "-r", str(rate),
            "-i", "pipe:0",
        ]
        for extra in extra_inputs:  # inputs 1, 2, ... of a -filter_complex
            cmd += ["-i", str(extra)]
        cmd += ["-an", *output_args, str(output)]
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._stderr)

    def write(self, frame: bytes) -> None:
        if len(frame) != self._frame_bytes:
            raise ValueError(f"frame has {len(frame)} bytes, expected {self._frame_bytes} for {self.size}")
        try:
            self._process.stdin.write(frame)
        except BrokenPipeError:
            self.close()  # raises with ffmpeg's reason
            raise FfmpegError("ffmpeg stopped reading frames") from None

    def close(self) -> None:
        """Finish the file; raises `FfmpegError` when ffmpeg failed."""
        if self._process.stdin and not self._process.stdin.closed:
            try:
                self._process.stdin.close()
            except BrokenPipeError:
                pass
        code = self._process.wait()
        self._stderr.seek(0)
        message = self._stderr.read().decode("utf-8", "replace").strip()
        self._stderr.close()
        if code != 0:
            tail = " | ".join(message.splitlines()[-3:]) or f"exit status {code}"
            raise FfmpegError(f"ffmpeg failed: {tail}")

    def abort(self) -> None:
        """Stop ffmpeg now; whatever it wrote is incomplete and must be thrown away."""
        self._process.kill()
        self._process.wait()
        if self._process.stdin and not self._process.stdin.closed:
            try:
                self._process.stdin.close()
            except BrokenPipeError:
                pass
        self._stderr.close()
