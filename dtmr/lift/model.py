"""The lifter network: a residual MLP over a short window of normalised 2-D COCO-17 frames.

Input: (B, W, 17, 3) features (x, y, present) of W consecutive frames (`dtmr.lift.keypoints.normalise`);
output: (B, 17, 3) the centre frame's joints in metres, in the camera's level frame (y up), relative to the
hip midpoint. Sizes are bounded (`LifterConfig.check`) because a checkpoint's config is untrusted input.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

NUM_JOINTS = 17


@dataclass(frozen=True)
class LifterConfig:
    window: int = 9
    hidden: int = 256
    blocks: int = 2
    dropout: float = 0.1

    def check(self) -> LifterConfig:
        if not (isinstance(self.window, int) and 1 <= self.window <= 61 and self.window % 2 == 1):
            raise ValueError(f"window must be an odd int in 1..61, got {self.window!r}")
        if not (isinstance(self.hidden, int) and 8 <= self.hidden <= 2048):
            raise ValueError(f"hidden must be an int in 8..2048, got {self.hidden!r}")
        if not (isinstance(self.blocks, int) and 0 <= self.blocks <= 8):
            raise ValueError(f"blocks must be an int in 0..8, got {self.blocks!r}")
        if not (isinstance(self.dropout, float) and 0.0 <= self.dropout < 1.0):
            raise ValueError(f"dropout must be a float in [0, 1), got {self.dropout!r}")
        return self

    def as_dict(self) -> dict:
        return asdict(self)


class _Block(nn.Module):
    def __init__(self, width: int, dropout: float):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.net(x)


class LifterNet(nn.Module):
    def __init__(self, config: LifterConfig):
        super().__init__()
        self.config = config.check()
        self.inp = nn.Linear(config.window * NUM_JOINTS * 3, config.hidden)
        self.blocks = nn.Sequential(*(_Block(config.hidden, config.dropout) for _ in range(config.blocks)))
        self.out = nn.Sequential(nn.LayerNorm(config.hidden), nn.Linear(config.hidden, NUM_JOINTS * 3))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.inp(features.flatten(1)))
        return self.out(x).view(-1, NUM_JOINTS, 3)
