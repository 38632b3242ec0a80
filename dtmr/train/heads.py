"""The auxiliary networks of training, discarded at inference (seeds/001: "auxiliary heads").

`AuxiliaryHeads` learn with the model (generator side):
  action_classifier   time-averaged action features (B, Da) -> action logits     (stage 1 action CE)
  identity_classifier identity features (B, Di)            -> subject logits     (stage 1 identity CE)
  projection          time-averaged action features        -> (B, 128) unit-free (stage 1 SupCon)
  output_classifier   a joint sequence (B, 64, J, 3)        -> action logits     (stage 3 output action CE)

`Critics` learn in their own optimizer steps on detached inputs (no gradient reversal):
  identity_adversary        action features (B, Da)  -> subject logits  (stage 1 adversary)
  output_identity_adversary (B, 64, J, 3) sequence   -> subject logits  (stage 3 output identity adversary)
  discriminator             (B, 64, J, 3) sequence   -> real/fake logit (stage 3 sequence discriminator)
"""

from __future__ import annotations

import torch
from torch import nn

PROJECTION_DIM = 128


def mlp(sizes: list[int], dropout: float = 0.1) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers += [nn.GELU(), nn.Dropout(dropout)]
    return nn.Sequential(*layers)


class SequenceClassifier(nn.Module):
    """A small temporal-convolution classifier of joint sequences (positions and velocities).

    (B, T, J, 3) -> per-frame (B, 6J, T) -> three 1-D convolutions (the last two with stride 2)
    -> mean and max over time -> linear -> (B, classes).
    """

    def __init__(self, num_joints: int, num_classes: int, width: int = 128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(6 * num_joints, width, 5, padding=2), nn.GELU(),
            nn.Conv1d(width, width, 5, stride=2, padding=2), nn.GELU(),
            nn.Conv1d(width, width, 3, stride=2, padding=1), nn.GELU(),
        )
        self.out = nn.Linear(2 * width, num_classes)

    def forward(self, joints: torch.Tensor) -> torch.Tensor:
        b, t = joints.shape[:2]
        pos = joints.reshape(b, t, -1)
        vel = torch.diff(pos, dim=1, prepend=pos[:, :1])
        h = self.net(torch.cat([pos, vel], dim=-1).transpose(1, 2))  # (B, width, T/4)
        return self.out(torch.cat([h.mean(dim=-1), h.amax(dim=-1)], dim=-1))


class AuxiliaryHeads(nn.Module):
    def __init__(self, action_dim: int, identity_dim: int, num_joints: int, num_actions: int, num_subjects: int):
        super().__init__()
        self.action_classifier = mlp([action_dim, 256, num_actions])
        self.identity_classifier = mlp([identity_dim, 256, num_subjects])
        self.projection = mlp([action_dim, 256, PROJECTION_DIM])
        self.output_classifier = SequenceClassifier(num_joints, num_actions)


class Critics(nn.Module):
    def __init__(self, action_dim: int, num_joints: int, num_subjects: int):
        super().__init__()
        self.identity_adversary = mlp([action_dim, 256, num_subjects])
        self.output_identity_adversary = SequenceClassifier(num_joints, num_subjects)
        self.discriminator = SequenceClassifier(num_joints, 1)
