"""The encoder and decoder of DMR and PMR, as the public code that trained them builds them.

SPEC_NOTES §2.3 (`legacy_scripts/model_ae.py`). Both are unusual and kept that way on purpose:

* `Encoder2D` treats the **frames as Conv2d channels** and convolves over the (J x 3) grid of joint
  coordinates; four stages of reflection pad -> 3x3 conv -> LeakyReLU(0.2) -> 2x2 max-pool, then global
  average pooling and a linear layer whose output is reshaped to a (C, L) latent. L is not a time axis.
* `Decoder1D` is a ConvTranspose1d stack whose output **channels are the frames** and whose length axis
  is the J*3 coordinates; a LeakyReLU(0.2) acts on the output coordinates themselves, and the last
  nearest-neighbour resize brings the length (218 for PMR, 346 for DMR) down to J*3.

Shapes for NTU-25 (J*3 = 75, 75 frames): encoder (B, 75, 25, 3) -> (12, 13, 2) -> (24, 7, 2) -> (32, 4, 2)
-> (C, 3, 2) -> (C, L); decoder (B, 2C, L) -> ... -> (B, 75, 75). Any J >= 2 works: the pooling stages
shrink the grid differently (J = 20: 11, 6, 4, 3 rows) but the global pooling makes the head independent
of it.
"""

from __future__ import annotations

import torch
from torch import nn

#: Frame count the public DMR/PMR were trained with (one random 75-frame window per NTU sequence).
NATIVE_FRAMES = 75
ENCODER_WIDTHS = (12, 24, 32)
DECODER_WIDTHS = (256, 128, 96)


class Encoder2D(nn.Module):
    """(B, frames, J, 3) -> (B, channels, length) latent."""

    def __init__(self, channels: int, length: int, frames: int = NATIVE_FRAMES):
        super().__init__()
        self.channels = channels
        self.length = length
        self.frames = frames
        widths = (frames, *ENCODER_WIDTHS, channels)
        stages: list[nn.Module] = []
        for c_in, c_out in zip(widths[:-1], widths[1:]):
            stages += [
                nn.ReflectionPad2d(1),
                nn.Conv2d(c_in, c_out, kernel_size=3, stride=1, padding=1),
                nn.LeakyReLU(0.2),
                nn.MaxPool2d(2),
            ]
        self.features = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.project = nn.Linear(channels, channels * length)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pooled = self.pool(self.features(x)).flatten(1)
        return self.project(pooled).view(x.shape[0], self.channels, self.length)


class Decoder1D(nn.Module):
    """(B, in_channels, L) latent -> (B, frames, J*3) coordinates."""

    def __init__(self, in_channels: int, num_joints: int, frames: int = NATIVE_FRAMES):
        super().__init__()
        self.num_joints = num_joints
        self.frames = frames
        widths = (in_channels, *DECODER_WIDTHS)
        layers: list[nn.Module] = []
        for c_in, c_out in zip(widths[:-1], widths[1:]):
            layers += [
                nn.ReflectionPad1d(3),
                nn.ConvTranspose1d(c_in, c_out, kernel_size=3, stride=1, padding=1),
                nn.LeakyReLU(0.2),
                nn.Upsample(scale_factor=2, mode="nearest"),
            ]
        layers += [
            nn.ReflectionPad1d(3),
            nn.ConvTranspose1d(widths[-1], frames, kernel_size=3, stride=1, padding=1),
            # The public model squashes negative output coordinates by 0.2; kept for fidelity.
            nn.LeakyReLU(0.2),
            nn.Upsample(size=num_joints * 3, mode="nearest"),
        ]
        self.layers = nn.Sequential(*layers)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.layers(z)
