"""The action encoder E_A: source clip -> per-frame action memory (B, 64, action_dim).

    motion features (B, 64, J, 9)
      branch A: BatchNorm over the J*9 inputs -> Conv1d k=3 | k=5 | k=7 (J*9 -> c each, in parallel)
                -> concat (3c) -> GELU -> Linear -> 256 (+ learned frame positions)
                -> 2 x [8-head temporal self-attention + FFN] (pre-norm) -> LayerNorm -> Linear -> 768
      branch B: Skeleton-MixFormer stack (mixformer.py) -> 768
      fusion:   g = sigmoid(W [a; b] + bias),  h = g * a + (1 - g) * b           (B, 64, 768)

The encoder is not causal: every frame sees the whole source clip.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..skeleton import Topology
from .autocast_safe import lerp
from .config import DTMRConfig
from .mixformer import SkeletonMixFormer


class TemporalConvAttention(nn.Module):
    """Branch A: multi-kernel temporal convolutions over the flattened joints, then temporal attention."""

    def __init__(self, config: DTMRConfig, num_joints: int):
        super().__init__()
        inputs = num_joints * config.feature_channels
        self.input_norm = nn.BatchNorm1d(inputs)
        self.convs = nn.ModuleList(
            nn.Conv1d(inputs, config.action_conv_channels, k, padding=k // 2) for k in config.action_conv_kernels
        )
        self.merge = nn.Linear(config.action_conv_channels * len(config.action_conv_kernels), config.action_hidden)
        self.positions = nn.Parameter(torch.zeros(config.frames, config.action_hidden))
        nn.init.normal_(self.positions, std=0.02)
        layer = nn.TransformerEncoderLayer(
            config.action_hidden, config.action_heads, config.action_ffn, dropout=config.dropout,
            activation="gelu", batch_first=True, norm_first=True,
        )
        self.attention = nn.TransformerEncoder(layer, config.action_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(config.action_hidden)
        self.project = nn.Linear(config.action_hidden, config.action_dim)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        b, t = features.shape[:2]
        x = self.input_norm(features.reshape(b, t, -1).transpose(1, 2))  # (B, J*9, T)
        x = torch.cat([conv(x) for conv in self.convs], dim=1).transpose(1, 2)  # (B, T, 3c)
        x = self.merge(F.gelu(x)) + self.positions  # (B, T, 256)
        return self.project(self.norm(self.attention(x)))  # (B, T, 768)


class ActionEncoder(nn.Module):
    """(B, T, J, 9) motion features -> (B, T, action_dim), the two branches fused by a sigmoid gate."""

    def __init__(self, config: DTMRConfig, topology: Topology):
        super().__init__()
        self.temporal = TemporalConvAttention(config, topology.num_joints)
        self.mixformer = SkeletonMixFormer(config, topology)
        self.gate = nn.Linear(2 * config.action_dim, config.action_dim)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        a = self.temporal(features)
        b = self.mixformer(features)
        g = torch.sigmoid(self.gate(torch.cat([a, b], dim=-1)))
        return lerp(b, a, g)  # g * a + (1 - g) * b
