"""The temporal-convolution attacker: a ~0.47M-parameter 1-D CNN on positions + velocities of 64-frame
normalized clips (DESIGN §5 calibrates one at 55-63 % raw N-UCLA re-ID, against SGN's 44.7 %).

Input and training are `training.py`'s: clips normalized on the first frame and resampled to 64 frames;
random crops, rotations about the vertical and global scales; AdamW until a held-out part of the training
clips stops improving. Small data sets (N-UCLA: ~1000 training clips) overfit a network this size in a few
epochs, so it has dropout, weight decay and label smoothing, and keeps the best held-out epoch's weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..skeleton.topology import Topology
from .training import TrainedAttacker, TrainingConfig


@dataclass
class TCNConfig(TrainingConfig):
    width: int = 128
    dropout: float = 0.1
    head_dropout: float = 0.3


class TemporalConvNet(nn.Module):
    """(B, T, J, 3) -> positions and frame differences (B, 6J, T) -> BN -> four conv blocks (two with
    stride 2; width, width, 2 width, 2 width channels) -> mean and max over time (B, 4 width) -> (B, C)."""

    def __init__(self, num_joints: int, num_classes: int, config: TCNConfig):
        super().__init__()
        w, c_in = config.width, 6 * num_joints

        def block(a: int, b: int, k: int, stride: int) -> list[nn.Module]:
            return [nn.Conv1d(a, b, k, stride=stride, padding=k // 2, bias=False), nn.BatchNorm1d(b), nn.GELU(),
                    nn.Dropout(config.dropout)]

        self.input_norm = nn.BatchNorm1d(c_in)
        self.net = nn.Sequential(*block(c_in, w, 5, 1), *block(w, w, 5, 2), *block(w, 2 * w, 3, 2),
                                 *block(2 * w, 2 * w, 3, 1))
        self.head_dropout = nn.Dropout(config.head_dropout)
        self.fc = nn.Linear(4 * w, num_classes)

    def features(self, joints: torch.Tensor) -> torch.Tensor:
        b, t = joints.shape[:2]
        pos = joints.reshape(b, t, -1)  # (B, T, 3J)
        vel = torch.diff(pos, dim=1, prepend=pos[:, :1])
        h = self.net(self.input_norm(torch.cat([pos, vel], dim=-1).transpose(1, 2)))  # (B, 2w, T/4)
        return torch.cat([h.mean(dim=-1), h.amax(dim=-1)], dim=-1)  # (B, 4w)

    def forward(self, joints: torch.Tensor) -> torch.Tensor:
        return self.fc(self.head_dropout(self.features(joints)))


class TCNAttacker(TrainedAttacker):
    name = "tcn"
    family = "temporal conv (positions + velocities)"
    config_class = TCNConfig

    def build_network(self, topology: Topology, num_classes: int) -> TemporalConvNet:
        return TemporalConvNet(topology.num_joints, num_classes, self.config)
