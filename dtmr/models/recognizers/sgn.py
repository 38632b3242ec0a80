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
the same function without the (batch x seg x J x J) tensors. The frame-index embedding, constant over the
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


class _Embed(nn.Module):
    """1x1 conv -> ReLU -> 1x1 conv -> ReLU over (B, C, J, T), optionally after BN over the C*J channels."""

    def __init__(self, c_in: int, c_out: int, norm_joints: int | None = None):
        super().__init__()
        self.norm = nn.BatchNorm1d(c_in * norm_joints) if norm_joints else None
        self.layers = nn.Sequential(
            nn.Conv2d(c_in, EMBED_HIDDEN, 1), nn.ReLU(), nn.Conv2d(EMBED_HIDDEN, c_out, 1), nn.ReLU()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.norm is not None:
            b, c, j, t = x.shape
            x = self.norm(x.reshape(b, c * j, t)).view(b, c, j, t)
        return self.layers(x)


class _JointAffinity(nn.Module):
    """(B, C, J, T) -> (B, T, J, J) row-softmaxed affinity between the joints of each frame."""

    def __init__(self, c_in: int, c_hidden: int):
        super().__init__()
        self.theta = nn.Conv2d(c_in, c_hidden, 1)
        self.phi = nn.Conv2d(c_in, c_hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        theta = self.theta(x).permute(0, 3, 2, 1)  # (B, T, J, C)
        phi = self.phi(x).permute(0, 3, 1, 2)  # (B, T, C, J)
        return torch.softmax(theta @ phi, dim=-1)


class _GraphConv(nn.Module):
    """y = ReLU(BN(W (G x) + W1 x)) with the per-frame affinity G."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.w = nn.Conv2d(c_in, c_out, 1, bias=False)
        self.w1 = nn.Conv2d(c_in, c_out, 1)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        mixed = (g @ x.permute(0, 3, 2, 1)).permute(0, 3, 2, 1)
        return torch.relu(self.bn(self.w(mixed) + self.w1(x)))


class _FrameLevel(nn.Module):
    """(B, C, T) per-frame features -> a temporal (1 x 3) conv and a 1x1 conv, each with BN and ReLU."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.temporal = nn.Conv2d(c_in, c_in, kernel_size=(1, 3), padding=(0, 1))
        self.bn1 = nn.BatchNorm2d(c_in)
        self.dropout = nn.Dropout2d(0.2)
        self.pointwise = nn.Conv2d(c_in, c_out, 1)
        self.bn2 = nn.BatchNorm2d(c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.dropout(torch.relu(self.bn1(self.temporal(x.unsqueeze(2)))))
        return torch.relu(self.bn2(self.pointwise(x)))


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
        self.register_buffer("joint_types", torch.eye(num_joints).view(1, num_joints, num_joints, 1), persistent=False)
        self.register_buffer("frame_indices", torch.eye(seg).view(1, seg, 1, seg), persistent=False)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan))
        for gcn in (self.gcn1, self.gcn2, self.gcn3):
            nn.init.zeros_(gcn.w.weight)

    def joint_level(self, pos: torch.Tensor, dif: torch.Tensor) -> torch.Tensor:
        """(B, 3, J, T) positions and frame differences -> (B, 256, T): the graph convolutions of each
        frame, max-pooled over the joints. Frames are independent here (in eval mode)."""
        dynamics = self.joint_embed(pos) + self.dif_embed(dif)
        joint_type = self.spa_embed(self.joint_types).expand(pos.shape[0], -1, -1, pos.shape[-1])
        h = torch.cat([dynamics, joint_type], dim=1)
        g = self.compute_g1(h)
        return self.gcn3(self.gcn2(self.gcn1(h, g), g), g).amax(dim=2)

    def frame_level(self, features: torch.Tensor) -> torch.Tensor:
        """(B, 256, seg) per-frame features -> (B, classes) logits. The frame-index embedding is constant
        over the joints, so adding it after the max over joints equals SGN's adding it before."""
        return self.fc(self.clip_embedding(features))

    def clip_embedding(self, features: torch.Tensor) -> torch.Tensor:
        """(B, 256, seg) per-frame features -> (B, 512), the input of the final FC layer."""
        h = self.cnn(features + self.tem_embed(self.frame_indices)[:, :, 0])
        return h.amax(dim=(2, 3))

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """(B, seg, J, 3) -> (B, 512) clip embedding (what the classifier reads)."""
        return self.clip_embedding(self.joint_level(*self._dynamics(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or tuple(x.shape[1:]) != (self.seg, self.num_joints, 3):
            raise ValueError(f"SGN input must be (B, {self.seg}, {self.num_joints}, 3), got {tuple(x.shape)}")
        return self.frame_level(self.joint_level(*self._dynamics(x)))

    def _dynamics(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, seg, J, 3) -> positions and frame differences, each (B, 3, J, seg)."""
        pos = x.permute(0, 3, 2, 1)
        dif = torch.cat([torch.zeros_like(pos[..., :1]), pos[..., 1:] - pos[..., :-1]], dim=-1)
        return pos, dif

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
        features = self.joint_level(pos.permute(0, 2, 1).unsqueeze(-1), dif.permute(0, 2, 1).unsqueeze(-1))
        per_window = features[:, :, 0][which.view(indices.shape)]  # (W, seg, 256)
        return self.frame_level(per_window.permute(0, 2, 1))
