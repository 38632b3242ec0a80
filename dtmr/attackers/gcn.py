"""The graph-convolution attacker: a small ST-GCN (spatial-temporal graph convolution over the skeleton) on
positions + velocities of the same 64-frame normalized clips as the TCN, trained by the same loop
(`training.py`).

Why a second family beside the TCN: the TCN flattens all joints into the channels of one 1-D convolution, so
it reads the whole body at once; a graph convolution reads each joint with its neighbours along the bones and
shares its weights over joints, so the two pick up different cues and fail on different releases. The audit
takes the worst case over them (issue 40).

The graph is ST-GCN's spatial partitioning of each joint's neighbourhood, from the topology's bones: the
joint itself, its parent (towards the root) and its children, three partitions with their own weights, each
edge divided by the size of the neighbourhood it belongs to, times a learnable edge importance per block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..skeleton.topology import Topology
from .training import TrainedAttacker, TrainingConfig

PARTITIONS = 3  # the joint itself, its parent, its children
#: temporal strides of the four blocks: 64 frames -> 16 -> 8 before the two wide blocks. Every layer runs once
#: per joint, so a graph conv costs ~J times a TCN layer of its width; this keeps an N-UCLA epoch at ~9 s of one core
STRIDES = (4, 2, 1, 1)


@dataclass
class GCNConfig(TrainingConfig):
    width: int = 48  # channels of the first two blocks; the last two have twice as many
    kernel: int = 9  # temporal kernel, frames
    dropout: float = 0.1
    head_dropout: float = 0.3


def partitions(topology: Topology) -> torch.Tensor:
    """(3, J, J) float32 a[k, v, w]: the weight with which joint w reads joint v in partition k (itself, its
    parent, its children); every edge into w divided by w's neighbourhood size (1 + parent + children)."""
    j = topology.num_joints
    a = np.zeros((PARTITIONS, j, j), dtype=np.float32)
    a[0] = np.eye(j, dtype=np.float32)
    for parent, child in topology.bones:
        a[1, parent, child] = 1.0  # the child reads its parent
        a[2, child, parent] = 1.0  # the parent reads its child
    return torch.from_numpy(a / a.sum(axis=(0, 1), keepdims=True))


class GraphConv(nn.Module):
    """(B, C, T, J) -> (B, C', T, J): the input mixed over the joints by each partition's normalized adjacency
    times a learnable edge importance (initially 1), then one 1x1 convolution over the partitions' channels
    (mixing first is cheaper than ST-GCN's convolution first: it runs on C channels, not 3 C')."""

    def __init__(self, c_in: int, c_out: int, adjacency: torch.Tensor):
        super().__init__()
        self.register_buffer("adjacency", adjacency)  # (K, J, J)
        self.importance = nn.Parameter(torch.ones_like(adjacency))
        self.conv = nn.Conv2d(PARTITIONS * c_in, c_out, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, t, j = x.shape
        a = (self.adjacency * self.importance).transpose(0, 1).reshape(j, PARTITIONS * j)  # (J, K J)
        mixed = (x @ a).view(b, c, t, PARTITIONS, j).permute(0, 3, 1, 2, 4)  # (B, K, C, T, J)
        return self.conv(mixed.reshape(b, PARTITIONS * c, t, j))


class STGCNBlock(nn.Module):
    """(B, C, T, J) -> (B, C', T / stride, J): graph conv, BN, ReLU, temporal conv (kernel x 1, stride), BN,
    dropout; plus the input (a strided 1x1 conv and BN when the shape changes); ReLU."""

    def __init__(self, c_in: int, c_out: int, adjacency: torch.Tensor, kernel: int, stride: int, dropout: float):
        super().__init__()
        self.gcn = GraphConv(c_in, c_out, adjacency)
        self.tcn = nn.Sequential(nn.BatchNorm2d(c_out), nn.ReLU(),
                                 nn.Conv2d(c_out, c_out, (kernel, 1), (stride, 1), (kernel // 2, 0), bias=False),
                                 nn.BatchNorm2d(c_out), nn.Dropout(dropout))
        self.residual = nn.Identity() if c_in == c_out and stride == 1 else nn.Sequential(
            nn.Conv2d(c_in, c_out, 1, (stride, 1), bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.tcn(self.gcn(x)) + self.residual(x))


class SpatialTemporalGCN(nn.Module):
    """(B, T, J, 3) -> positions and frame differences (B, 6, T, J) -> BN per (channel, joint) -> four ST-GCN
    blocks (w, w, 2w, 2w channels; STRIDES) -> mean and max over time, per joint (B, 4w J) -> (B, C).

    Pooled over time only, not over the joints as ST-GCN does for actions: the blocks share their weights
    over the joints, so a joint-pooled feature no longer says whose feature it was, and a body's size is read
    joint by joint (a high head, low feet). Pooling over the joints too cost 20 points of raw N-UCLA re-ID
    (34 % against 54 % after 20 epochs)."""

    def __init__(self, topology: Topology, num_classes: int, config: GCNConfig):
        super().__init__()
        a, w, j = partitions(topology), config.width, topology.num_joints
        self.input_norm = nn.BatchNorm1d(6 * j)
        channels = (6, w, w, 2 * w, 2 * w)
        self.blocks = nn.Sequential(*(STGCNBlock(channels[i], channels[i + 1], a, config.kernel, STRIDES[i],
                                                 config.dropout) for i in range(len(STRIDES))))
        self.head_dropout = nn.Dropout(config.head_dropout)
        self.fc = nn.Linear(4 * w * j, num_classes)

    def features(self, joints: torch.Tensor) -> torch.Tensor:
        b, t, j, _ = joints.shape
        x = torch.cat([joints, torch.diff(joints, dim=1, prepend=joints[:, :1])], dim=-1)  # (B, T, J, 6)
        x = self.input_norm(x.permute(0, 3, 2, 1).reshape(b, 6 * j, t))  # (B, 6J, T), channel-major
        h = self.blocks(x.view(b, 6, j, t).transpose(2, 3))  # (B, 2w, T/8, J)
        return torch.cat([h.mean(dim=2), h.amax(dim=2)], dim=1).flatten(1)  # (B, 4w J)

    def forward(self, joints: torch.Tensor) -> torch.Tensor:
        return self.fc(self.head_dropout(self.features(joints)))


class GCNAttacker(TrainedAttacker):
    name = "stgcn"
    family = "graph conv (ST-GCN)"
    config_class = GCNConfig

    def build_network(self, topology: Topology, num_classes: int) -> SpatialTemporalGCN:
        return SpatialTemporalGCN(topology, num_classes, self.config)
