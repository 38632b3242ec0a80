"""Branch B of the action encoder: a Skeleton-MixFormer-style stack (Xie et al., ACM MM 2023).

Written from the description in SPEC_NOTES §4, made topology-generic (V = J of any registered
topology, adjacency subsets built from its parent tree), CPU-capable (no device assumptions) and
vectorized over subsets and channel groups. Tensors inside are (N, C, T, V) like the original.

    features (B, 64, J, 9)
      -> Linear 9 -> C0 per joint + learnable joint embedding -> BatchNorm over (V * C0)   (B, C0, 64, J)
      -> stage 1: blocks at C0, 64 frames (the first without residual)
      -> stage 2: blocks at C1, 32 frames (the first with temporal stride 2)
      -> stage 3: blocks at C2, 16 frames (the first with temporal stride 2)
      -> + "retrospect" fusion of the stage-1 and stage-2 outputs (time average-pool, 1x1 conv, BN, ReLU)
      -> mean over joints, Linear C2 -> action_dim                                       (B, 16, D)
      -> linear interpolation in time back to 64 frames                                  (B, 64, D)

A block is SpatialMixFormer -> TemporalMixFormer, plus a residual, then ReLU. Where this differs
from the original (documented in docs/model.md): 9 input channels instead of 3; the joint pre-mixing
(I - A_out^8) is left out because A_out^8 is zero for every tree shallower than 8 bones (all the
registered ones, and the original NTU graph), so it is the identity; the unused layers of the
original are not created; each temporal branch has one BatchNorm where the original stacks two; the
classifier head is replaced by the per-frame projection above.

The paper's modules only: `dtmr.models.serving.prepare_for_inference` computes the same function with
fewer passes over the activations at inference (BatchNorm folded into the convolutions, the max-pool as a
maximum of shifted views, the batch in chunks of a few clips: `batch_chunk`); the state dict is unchanged.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..skeleton import Topology
from .config import MIXFORMER_ATTENTION_GROUPS, DTMRConfig


def adjacency_subsets(topology: Topology) -> np.ndarray:
    """(3, J, J) float32: self, inward (child -> parent) and outward (parent -> child) adjacency.

    Entry [k, v, w] weighs the message from joint v to joint w; each column is normalized to sum to 1
    (a joint averages what it receives), as in ST-GCN's spatial partitioning.
    """
    n = topology.num_joints
    inward = np.zeros((n, n), dtype=np.float32)
    inward[topology.bone_children, topology.bone_parents] = 1.0
    outward = inward.T.copy()

    def column_normalized(a: np.ndarray) -> np.ndarray:
        degree = a.sum(axis=0, keepdims=True)
        return np.divide(a, degree, out=np.zeros_like(a), where=degree > 0)

    return np.stack([np.eye(n, dtype=np.float32), column_normalized(inward), column_normalized(outward)])


def _conv_bn(in_channels: int, out_channels: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride=(stride, 1)), nn.BatchNorm2d(out_channels))


class SpatialMixFormer(nn.Module):
    """Channel-grouped spatial attention over the joint graph, mixed with fixed and learnable adjacency.

    A 1x1 conv gives `out` channels per adjacency subset. Per subset, the channels form 4 attention
    groups; each group pools the first half of its channels over (C, T) into a query V-vector and the
    second half into a key V-vector, maps both through a shared Linear(V, V) + ReLU, and takes
    softmax(q k^T) as its (V, V) map. Adjacent groups are mixed ("mix-attention"):
    m_i <- m_i / 2 + (softmax(k_{i-1} q_i^T) + softmax(k_i q_{i+1}^T)) / 4. The adjacency used by a
    channel group is 0.5 * its map + the fixed subset + a learnable copy of it (one per adjacency group
    of channels). The aggregate is re-weighted per channel (ECA-style "channel reforming"), batch
    normalized (gamma starts at 1e-6, so the block starts close to its residual) and added to the input.
    """

    def __init__(self, in_channels: int, out_channels: int, subsets: np.ndarray, adjacency_groups: int):
        super().__init__()
        num_subsets, num_joints = subsets.shape[0], subsets.shape[1]
        self.out_channels = out_channels
        self.adjacency_groups = adjacency_groups
        self.project = nn.Conv2d(in_channels, out_channels * num_subsets, 1)
        fixed = torch.from_numpy(subsets).unsqueeze(1)  # (K, 1, V, V)
        self.register_buffer("fixed_adjacency", fixed.clone())
        self.learned_adjacency = nn.Parameter(fixed.repeat(1, adjacency_groups, 1, 1))  # (K, G, V, V)
        self.group_scores = nn.Linear(num_joints, num_joints)
        self.mix_scores = nn.Linear(num_joints, num_joints)
        self.reform = nn.Conv1d(1, 1, 3, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(out_channels)
        self.down = nn.Identity() if in_channels == out_channels else _conv_bn(in_channels, out_channels)

    def attention_maps(self, m: torch.Tensor) -> torch.Tensor:
        """m: (N, K, 4, C/4, T, V) -> mixed attention maps (N, K, 4, V, V)."""
        half = m.shape[3] // 2
        q = m[:, :, :, :half].mean(dim=(3, 4))  # (N, K, 4, V)
        k = m[:, :, :, half:].mean(dim=(3, 4))
        qa, ka = F.relu(self.group_scores(q)), F.relu(self.group_scores(k))
        own = torch.softmax(qa.unsqueeze(-1) * ka.unsqueeze(-2), dim=-1)  # (N, K, 4, V, V)
        kc, qc = F.relu(self.mix_scores(k[:, :, :-1])), F.relu(self.mix_scores(q[:, :, 1:]))
        cross = torch.softmax(kc.unsqueeze(-1) * qc.unsqueeze(-2), dim=-1)  # (N, K, 3, V, V): pairs (i, i+1)
        edge = torch.zeros_like(cross[:, :, :1])
        return own / 2 + (torch.cat([edge, cross], dim=2) + torch.cat([cross, edge], dim=2)) / 4

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, _, t, v = x.shape
        k, c, g = self.fixed_adjacency.shape[0], self.out_channels, self.adjacency_groups
        m = self.project(x).view(n, k, MIXFORMER_ATTENTION_GROUPS, c // MIXFORMER_ATTENTION_GROUPS, t, v)
        maps = self.attention_maps(m).repeat_interleave(g // MIXFORMER_ATTENTION_GROUPS, dim=2)
        adjacency = 0.5 * maps + self.fixed_adjacency + self.learned_adjacency  # (N, K, G, V, V)
        out = torch.matmul(m.reshape(n, k, g, (c // g) * t, v), adjacency).sum(dim=1)  # (N, G, C/G * T, V)
        out = out.reshape(n, c, t, v)
        gate = torch.sigmoid(self.reform(out.mean(dim=(2, 3)).unsqueeze(1))).squeeze(1)  # (N, C)
        out = out * (1.0 + gate[:, :, None, None])
        return F.relu(self.norm(out) + self.down(x))


class TemporalAttentionBranch(nn.Module):
    """MixFormer's "Tem_Trans": a (T, T) sigmoid attention from pooled frame descriptors.

    Q = mean of the first half of the channels over (C/2, V), K = max of the second half; both pass a
    shared Linear(T, T) + ReLU (this ties the block to its frame count); the map is sigmoid(q k^T).
    """

    def __init__(self, in_channels: int, out_channels: int, frames: int, stride: int):
        super().__init__()
        self.project = nn.Conv2d(in_channels, out_channels, 1, stride=(stride, 1))
        self.scores = nn.Linear(frames, frames)
        self.norm = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.project(x)  # (N, C, T, V)
        half = x.shape[1] // 2
        q = F.relu(self.scores(x[:, :half].mean(dim=(1, 3))))  # (N, T)
        k = F.relu(self.scores(x[:, half:].amax(dim=(1, 3))))
        attention = torch.sigmoid(q.unsqueeze(-1) * k.unsqueeze(-2))  # (N, T, T)
        return self.norm(torch.einsum("nctv,ntm->ncmv", x, attention))


class SequentialHoldingBranch(nn.Module):
    """MixFormer's "Tem_Seq_h": one sigmoid gate per frame from the frame's mean and max."""

    def __init__(self, in_channels: int, out_channels: int, stride: int):
        super().__init__()
        self.project = nn.Conv2d(in_channels, out_channels, 1, stride=(stride, 1))
        self.combine = nn.Linear(2, 1)
        self.norm = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.project(x)
        pooled = torch.stack([x.mean(dim=(1, 3)), x.amax(dim=(1, 3))], dim=-1)  # (N, T, 2)
        gate = torch.sigmoid(self.combine(pooled)).squeeze(-1)  # (N, T)
        return self.norm(x * gate[:, None, :, None])


class TemporalMixFormer(nn.Module):
    """Multi-scale temporal mixing: dilated temporal convs, a max-pool branch, temporal attention and
    sequential holding, each on 1/(len(dilations) + 3) of the channels, concatenated."""

    def __init__(self, channels: int, frames_out: int, kernel: int, dilations: tuple[int, ...], stride: int):
        super().__init__()
        width = channels // (len(dilations) + 3)
        branches: list[nn.Module] = [
            nn.Sequential(
                nn.Conv2d(channels, width, 1), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                nn.Conv2d(width, width, (kernel, 1), stride=(stride, 1), padding=((kernel - 1) * d // 2, 0),
                          dilation=(d, 1)),
                nn.BatchNorm2d(width),
            )
            for d in dilations
        ]
        branches.append(nn.Sequential(
            nn.Conv2d(channels, width, 1), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.MaxPool2d((3, 1), stride=(stride, 1), padding=(1, 0)), nn.BatchNorm2d(width),
        ))
        branches.append(TemporalAttentionBranch(channels, width, frames_out, stride))
        branches.append(SequentialHoldingBranch(channels, width, stride))
        self.branches = nn.ModuleList(branches)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([branch(x) for branch in self.branches], dim=1)


class MixFormerBlock(nn.Module):
    """relu(TemporalMixFormer(SpatialMixFormer(x)) + residual(x))."""

    def __init__(self, in_channels: int, out_channels: int, subsets: np.ndarray, config: DTMRConfig,
                 frames_out: int, stride: int, residual: bool):
        super().__init__()
        self.spatial = SpatialMixFormer(in_channels, out_channels, subsets, config.mixformer_adjacency_groups)
        self.temporal = TemporalMixFormer(out_channels, frames_out, config.mixformer_temporal_kernel,
                                          config.mixformer_dilations, stride)
        if not residual:
            self.residual = None
        elif in_channels == out_channels and stride == 1:
            self.residual = nn.Identity()
        else:
            self.residual = _conv_bn(in_channels, out_channels, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.temporal(self.spatial(x))
        if self.residual is not None:
            out = out + self.residual(x)
        return F.relu(out)


class SkeletonMixFormer(nn.Module):
    """(B, T, J, 9) motion features -> (B, T, action_dim) per-frame features (see the module docstring)."""

    def __init__(self, config: DTMRConfig, topology: Topology):
        super().__init__()
        channels, num_joints = config.mixformer_channels, topology.num_joints
        subsets = adjacency_subsets(topology)
        self.frames = config.frames
        #: clips per pass at inference (eval mode); None: the whole batch in one pass. The result does not depend
        #: on it (eval-mode BatchNorm uses running statistics) beyond rounding; serving sets it (see the docstring).
        self.batch_chunk: int | None = None
        self.embed = nn.Linear(config.feature_channels, channels[0])
        self.joint_embedding = nn.Parameter(torch.randn(num_joints, channels[0]))
        self.input_norm = nn.BatchNorm1d(num_joints * channels[0])

        self.stages = nn.ModuleList()
        in_channels, frames = channels[0], config.frames
        for stage, (width, blocks) in enumerate(zip(channels, config.mixformer_blocks)):
            stride = 1 if stage == 0 else 2
            frames //= stride
            layers = [MixFormerBlock(in_channels, width, subsets, config, frames, stride, residual=stage > 0)]
            layers += [MixFormerBlock(width, width, subsets, config, frames, 1, residual=True)
                       for _ in range(blocks - 1)]
            self.stages.append(nn.Sequential(*layers))
            in_channels = width
        self.out_frames = frames
        # "Retrospect" fusion: every earlier stage's output, pooled to the last stage's frame count.
        self.retrospect = nn.ModuleList(
            nn.Sequential(nn.AvgPool2d((2 ** (len(channels) - 1 - s), 1)), nn.Conv2d(width, channels[-1], 1),
                             nn.BatchNorm2d(channels[-1]), nn.ReLU(inplace=True))
            for s, width in enumerate(channels[:-1])
        )
        self.project = nn.Linear(channels[-1], config.action_dim)
        self._init_weights()

    def _init_weights(self) -> None:
        for module in self.modules():
            if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(module.weight, mode="fan_out")
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d)):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
        for module in self.modules():
            if isinstance(module, SpatialMixFormer):
                nn.init.constant_(module.norm.weight, 1e-6)
            elif isinstance(module, SequentialHoldingBranch):
                # a Kaiming-scaled 2 -> 1 map saturates the sigmoid (zero gradient); start every gate at 0.5
                nn.init.zeros_(module.combine.weight)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """(B, T, J, 9) -> (B, T, action_dim); at inference `batch_chunk` clips at a time when it is set."""
        if not self.training and self.batch_chunk and features.shape[0] > self.batch_chunk:
            return torch.cat([self._forward(chunk) for chunk in features.split(self.batch_chunk)])
        return self._forward(features)

    def _forward(self, features: torch.Tensor) -> torch.Tensor:
        b, t, v, _ = features.shape
        x = self.embed(features) + self.joint_embedding  # (B, T, V, C0)
        c0 = x.shape[-1]
        x = self.input_norm(x.reshape(b, t, v * c0).transpose(1, 2))  # (B, V*C0, T)
        x = x.reshape(b, v, c0, t).permute(0, 2, 3, 1).contiguous()  # (B, C0, T, V)
        stage_outputs = []
        for stage in self.stages:
            x = stage(x)
            stage_outputs.append(x)
        for fuse, earlier in zip(self.retrospect, stage_outputs[:-1]):
            x = x + fuse(earlier)
        x = self.project(x.mean(dim=-1).transpose(1, 2))  # (B, T_last, D)
        if self.out_frames != self.frames:
            x = F.interpolate(x.transpose(1, 2), size=self.frames, mode="linear", align_corners=False).transpose(1, 2)
        return x
