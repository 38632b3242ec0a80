"""SGN, the semantics-guided skeleton recognizer of Zhang et al. (CVPR 2020), topology-generic and CPU-safe.

Architecture as in SPEC_NOTES §3 (dim 256, seg = 20), for any joint count J:

* dynamics: per-joint position and frame difference (zero at t = 0), each through BN over the 3*J
  channels and two 1x1 convs 3 -> 64 -> 64 with ReLU; the two are summed;
* joint semantics: the joint-type one-hot (size J) through 1x1 convs J -> 64 -> 64; concatenated -> 128;
* joint level: a per-frame J x J affinity softmax(theta(x)^T phi(x)) (theta, phi: 1x1 convs 128 -> 256)
  and three residual graph convs 128 -> 128 -> 256 -> 256 (y = W (G x) + W1 x, BN, ReLU; W starts at 0);
* frame semantics: the frame-index one-hot (size seg) through 1x1 convs seg -> 64 -> 256, added;
* frame level: max over joints, a (1 x 3) temporal conv 256 -> 256 (BN, ReLU, Dropout2d 0.2) and a 1x1
  conv 256 -> 512 (BN, ReLU); max over time; FC 512 -> classes.

The public model builds its one-hot inputs with `.cuda()`; here the embeddings of the (constant) one-hot
inputs are computed once per forward on the identity matrix and broadcast over batch and time, which is
the same function without the (batch x seg x J x J) tensors. Activations are kept channels-last,
(B, seg, J, C), and SGN's 1x1 convolutions are the equivalent linear layers (same parameters): on a CPU,
MKL-DNN's 1x1-convolution backward on these small feature maps was over half of a training step, and
the matrix products are about twice as fast overall (docs/recognizers.md). The frame-index embedding, constant over the
joints, is added after the max over joints instead of before (the same result); that split into
`joint_level` (per frame) and `frame_level` lets `forward_windows` share the per-frame work of
overlapping windows. 691,048 parameters for 60 classes, J = 25.
"""

from __future__ import annotations

import math

import torch
from torch import nn

DIM = 256
EMBED_HIDDEN = 64
DEFAULT_SEG = 20


def _init_like_sgn(layer: nn.Linear | nn.Conv1d) -> None:
    """SGN's convolution init, N(0, sqrt(2 / (kernel area x out channels)))."""
    kernel = layer.kernel_size[0] if isinstance(layer, nn.Conv1d) else 1
    out_features = layer.out_channels if isinstance(layer, nn.Conv1d) else layer.out_features
    nn.init.normal_(layer.weight, 0.0, math.sqrt(2.0 / (kernel * out_features)))


class _ChannelNorm(nn.BatchNorm1d):
    """BatchNorm over the last (channel) axis of a channels-last tensor (statistics over all other axes)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.reshape(-1, x.shape[-1])).view(x.shape)


class _Embed(nn.Module):
    """Linear -> ReLU -> linear -> ReLU over the last axis, optionally after BN over the J*C inputs of a frame."""

    def __init__(self, c_in: int, c_out: int, norm_joints: int | None = None):
        super().__init__()
        self.norm = nn.BatchNorm1d(c_in * norm_joints) if norm_joints else None
        self.layers = nn.Sequential(nn.Linear(c_in, EMBED_HIDDEN), nn.ReLU(), nn.Linear(EMBED_HIDDEN, c_out), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.norm is not None:  # x (B, T, J, C): statistics over batch and time, per joint and channel
            b, t, j, c = x.shape
            x = self.norm(x.reshape(b * t, j * c)).view(b, t, j, c)
        return self.layers(x)


class _JointAffinity(nn.Module):
    """(B, T, J, C) -> (B, T, J, J) row-softmaxed affinity between the joints of each frame."""

    def __init__(self, c_in: int, c_hidden: int):
        super().__init__()
        self.theta = nn.Linear(c_in, c_hidden)
        self.phi = nn.Linear(c_in, c_hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.theta(x) @ self.phi(x).transpose(-1, -2), dim=-1)


class _GraphConv(nn.Module):
    """y = ReLU(BN(W (G x) + W1 x)) with the per-frame affinity G; x (B, T, J, C)."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.w = nn.Linear(c_in, c_out, bias=False)
        self.w1 = nn.Linear(c_in, c_out)
        self.bn = _ChannelNorm(c_out)

    def forward(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.w(g @ x) + self.w1(x)))


class _FrameLevel(nn.Module):
    """(B, T, C) per-frame features -> a temporal convolution (k = 3) and a pointwise layer, each with BN
    and ReLU -> (B, T, 2C)."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.temporal = nn.Conv1d(c_in, c_in, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm1d(c_in)
        self.dropout = nn.Dropout1d(0.2)  # whole channels, as SGN's Dropout2d on (B, C, 1, T)
        self.pointwise = nn.Linear(c_in, c_out)
        self.bn2 = _ChannelNorm(c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.dropout(torch.relu(self.bn1(self.temporal(x.transpose(1, 2)))))
        return torch.relu(self.bn2(self.pointwise(h.transpose(1, 2))))


class SGN(nn.Module):
    """(B, seg, J, 3) sampled, normalized frames -> (B, num_classes) logits."""

    def __init__(self, num_classes: int, num_joints: int, seg: int = DEFAULT_SEG):
        super().__init__()
        if num_classes < 1 or num_joints < 2 or seg < 2:
            raise ValueError(f"SGN needs num_classes >= 1, num_joints >= 2 and seg >= 2, "
                             f"got {num_classes}, {num_joints}, {seg}")
        self.num_classes = num_classes
        self.num_joints = num_joints
        self.seg = seg
        half = DIM // 2
        self.joint_embed = _Embed(3, EMBED_HIDDEN, norm_joints=num_joints)
        self.dif_embed = _Embed(3, EMBED_HIDDEN, norm_joints=num_joints)
        self.spa_embed = _Embed(num_joints, EMBED_HIDDEN)
        self.tem_embed = _Embed(seg, DIM)
        self.compute_g1 = _JointAffinity(half, DIM)
        self.gcn1 = _GraphConv(half, half)
        self.gcn2 = _GraphConv(half, DIM)
        self.gcn3 = _GraphConv(DIM, DIM)
        self.cnn = _FrameLevel(DIM, 2 * DIM)
        self.fc = nn.Linear(2 * DIM, num_classes)
        self.register_buffer("joint_types", torch.eye(num_joints), persistent=False)
        self.register_buffer("frame_indices", torch.eye(seg), persistent=False)
        for m in self.modules():
            if m is not self.fc and isinstance(m, (nn.Linear, nn.Conv1d)):
                _init_like_sgn(m)
        for gcn in (self.gcn1, self.gcn2, self.gcn3):
            nn.init.zeros_(gcn.w.weight)

    def joint_level(self, pos: torch.Tensor, dif: torch.Tensor) -> torch.Tensor:
        """(B, T, J, 3) positions and frame differences -> (B, T, 256): the graph convolutions of each
        frame, max-pooled over the joints. Frames are independent here (in eval mode)."""
        dynamics = self.joint_embed(pos) + self.dif_embed(dif)
        joint_type = self.spa_embed(self.joint_types).expand(*pos.shape[:2], -1, -1)
        h = torch.cat([dynamics, joint_type], dim=-1)
        g = self.compute_g1(h)
        return self.gcn3(self.gcn2(self.gcn1(h, g), g), g).amax(dim=2)

    def frame_level(self, features: torch.Tensor) -> torch.Tensor:
        """(B, seg, 256) per-frame features -> (B, classes) logits. The frame-index embedding is constant
        over the joints, so adding it after the max over joints equals SGN's adding it before."""
        return self.fc(self.clip_embedding(features))

    def clip_embedding(self, features: torch.Tensor) -> torch.Tensor:
        """(B, seg, 256) per-frame features -> (B, 512), the input of the final FC layer."""
        return self.cnn(features + self.tem_embed(self.frame_indices)).amax(dim=1)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """(B, seg, J, 3) -> (B, 512) clip embedding (what the classifier reads)."""
        return self.clip_embedding(self.joint_level(x, self._differences(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or tuple(x.shape[1:]) != (self.seg, self.num_joints, 3):
            raise ValueError(f"SGN input must be (B, {self.seg}, {self.num_joints}, 3), got {tuple(x.shape)}")
        return self.frame_level(self.joint_level(x, self._differences(x)))

    @staticmethod
    def _differences(x: torch.Tensor) -> torch.Tensor:
        """(B, seg, J, 3) -> frame differences, zero at the first frame."""
        return torch.cat([torch.zeros_like(x[:, :1]), x[:, 1:] - x[:, :-1]], dim=1)

    def forward_windows(self, sequence: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        """Logits of many sampled windows of one sequence, `forward(sequence[indices])` in eval mode.

        sequence (T, J, 3), indices (W, seg) -> (W, classes). Overlapping windows share frames, and a
        sampled frame's joint-level features depend only on it and the previously sampled frame, so each
        distinct (frame, previous frame) pair goes through the graph convolutions once.
        """
        if self.training:
            raise RuntimeError("forward_windows shares per-frame work, which batch statistics forbid: call eval()")
        previous = torch.cat([torch.full_like(indices[:, :1], -1), indices[:, :-1]], dim=1)
        pairs, which = torch.unique(torch.stack([indices, previous], dim=-1).view(-1, 2), dim=0, return_inverse=True)
        pos = sequence[pairs[:, 0]]
        dif = torch.where((pairs[:, 1] >= 0)[:, None, None], pos - sequence[pairs[:, 1].clamp(min=0)], 0.0)
        features = self.joint_level(pos.unsqueeze(1), dif.unsqueeze(1))[:, 0]  # (pairs, 256)
        return self.frame_level(features[which.view(indices.shape)])  # windows (W, seg, 256)
