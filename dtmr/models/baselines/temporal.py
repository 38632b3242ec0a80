"""Linear resampling of a batch of sequences along time, in torch.

DMR and PMR were built for 75-frame clips (their Conv2d takes the frames as input channels), while the
library's model input is 64 frames; the baselines move between the two with this function. It matches
`dtmr.skeleton.resample` (first and last frames kept exactly), so the round trip is the same linear
interpolation the rest of the library uses.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def resample_frames(x: torch.Tensor, frames: int) -> torch.Tensor:
    """(B, T, ...) -> (B, frames, ...) by linear interpolation in time (align-corners)."""
    if x.shape[1] == frames:
        return x
    batch, length = x.shape[:2]
    rest = x.shape[2:]
    flat = x.reshape(batch, length, -1).transpose(1, 2)
    if length == 1:
        out = flat.expand(-1, -1, frames)
    else:
        out = F.interpolate(flat, size=frames, mode="linear", align_corners=True)
    return out.transpose(1, 2).reshape(batch, frames, *rest)
