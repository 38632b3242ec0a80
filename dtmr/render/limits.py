"""Bounds on the frame size a user may ask of an export, from what rendering one frame allocates.

Rendering holds the frame, the floor drawn at `SUPERSAMPLE` times the panel size and the skeleton layer
at that size: about `BYTES_PER_PIXEL` bytes per output pixel (measured: 19.1-19.4 at 3000x1000 and
6000x2000). The largest frame allowed is 8K (8192x4320), about 0.7 GB while rendering; one side may be
up to 16384 pixels (a wide strip of panels), which is also the most H.264 encoders accept.
"""

from __future__ import annotations

from ..errors import DtmrError

BYTES_PER_PIXEL = 20
MAX_SIDE = 16384
MAX_PIXELS = 8192 * 4320


def check_frame_size(size: tuple[int, int], option: str = "--size") -> None:
    """Raise `DtmrError` naming `option` when a `size` = (width, height) frame is too large to render."""
    width, height = (int(v) for v in size)
    need = BYTES_PER_PIXEL * width * height / 1e9
    if max(width, height) > MAX_SIDE or width * height > MAX_PIXELS:
        raise DtmrError(f"{option} {width}x{height} is too large: rendering it needs about {need:.3g} GB; "
                        f"the limit is {MAX_PIXELS // 10**6} million pixels (8192x4320), at most "
                        f"{MAX_SIDE} on a side")
