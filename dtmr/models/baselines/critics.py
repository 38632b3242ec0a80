"""PMR's critics: the four embedding classifiers and the quality controller Q (SPEC_NOTES §2.3).

Both return **logits**. The public code ends the embedding classifiers with a softmax and then applies
`CrossEntropyLoss` (a second softmax); `pmr_losses` reproduces that when asked (`faithful=True`) and
otherwise uses the logits directly. Q's sigmoid likewise lives in the loss (BCE with logits).
"""

from __future__ import annotations

import torch
from torch import nn

from .autoencoder import NATIVE_FRAMES

CLASSIFIER_WIDTHS = (128, 256, 512)
CLASSIFIER_HIDDEN = (1024, 512)
QUALITY_WIDTHS = (64, 32, 16, 8)
QUALITY_HIDDEN = 32


class EmbeddingClassifier(nn.Module):
    """(B, C, L) latent -> (B, num_classes) logits.

    Three ConvTranspose1d (stride 2, so L doubles each time) with BN + ReLU, global average pooling,
    then FC 512 -> 1024 -> 512 -> classes with ReLU and dropout 0.5. PMR has four of them: `priv_adv`
    (subject from the motion code), `priv_coop` (subject from the privacy code), `util_adv` (action from
    the privacy code) and `util_coop` (action from the motion code).
    """

    def __init__(self, in_channels: int, num_classes: int):
        super().__init__()
        widths = (in_channels, *CLASSIFIER_WIDTHS)
        layers: list[nn.Module] = []
        for c_in, c_out in zip(widths[:-1], widths[1:]):
            layers += [
                nn.ConvTranspose1d(c_in, c_out, kernel_size=3, stride=2, padding=1, output_padding=1),
                nn.BatchNorm1d(c_out),
                nn.ReLU(),
            ]
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool1d(1), nn.Flatten())
        hidden = (widths[-1], *CLASSIFIER_HIDDEN)
        head: list[nn.Module] = []
        for h_in, h_out in zip(hidden[:-1], hidden[1:]):
            head += [nn.Linear(h_in, h_out), nn.ReLU(), nn.Dropout(0.5)]
        head.append(nn.Linear(hidden[-1], num_classes))
        self.head = nn.Sequential(*head)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(z))


def _quality_length(length: int) -> int:
    """Length after Q's four (reflection pad 3 -> conv k3 p1 -> max-pool 2) blocks."""
    for _ in QUALITY_WIDTHS:
        length = (length + 6) // 2
    return length


class QualityController(nn.Module):
    """(B, frames, J*3) decoder-layout sequence -> (B,) logit of "real motion".

    Four blocks of ReflectionPad1d(3) -> Conv1d k3 (frames -> 64 -> 32 -> 16 -> 8 channels) ->
    LeakyReLU(0.2) -> MaxPool1d(2) over the coordinate axis (75 -> 40 -> 23 -> 14 -> 10 for NTU-25),
    then FC 80 -> 32 -> ReLU -> 1.
    """

    def __init__(self, num_joints: int, frames: int = NATIVE_FRAMES):
        super().__init__()
        widths = (frames, *QUALITY_WIDTHS)
        layers: list[nn.Module] = []
        for c_in, c_out in zip(widths[:-1], widths[1:]):
            layers += [
                nn.ReflectionPad1d(3),
                nn.Conv1d(c_in, c_out, kernel_size=3, padding=1),
                nn.LeakyReLU(0.2),
                nn.MaxPool1d(2),
            ]
        self.features = nn.Sequential(*layers, nn.Flatten())
        flat = QUALITY_WIDTHS[-1] * _quality_length(num_joints * 3)
        self.head = nn.Sequential(nn.Linear(flat, QUALITY_HIDDEN), nn.ReLU(), nn.Linear(QUALITY_HIDDEN, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x)).squeeze(-1)
