"""DMR and PMR (ICCV 2025) as the public code really builds them (SPEC_NOTES §2.3).

Both are a pair of `Encoder2D` (motion `E_M` = "dynamic" encoder, privacy `E_P` = "static" encoder) and a
`Decoder1D` over the channel concatenation of the two codes; retargeting is
`dec(cat(E_M(src), E_P(ref)))`. They differ in latent size, (128, 16) per encoder for PMR and (256, 32)
for DMR (the README's 256x32 for PMR is not what the code trains), and in PMR's critics: four embedding
classifiers and the quality controller Q (DMR trains without them).

The library's model input is normalized 64-frame clips (DESIGN §2.3); the public models take 75 frames,
so clips are resampled 64 -> 75 on the way in and the decoder's 75 frames back to 64 on the way out.
Module names match the public checkpoints' keys (`dynamic_encoder`, `static_encoder`, `decoder`,
`priv_adv`, `priv_coop`, `util_adv`, `util_coop`, `discriminator`).
"""

from __future__ import annotations

import torch
from torch import nn

from ... import methods
from ...skeleton import MODEL_FRAMES, Topology, get_topology
from .autoencoder import NATIVE_FRAMES, Decoder1D, Encoder2D
from .critics import EmbeddingClassifier, QualityController
from .retarget_inputs import check_retarget_inputs
from .temporal import resample_frames

PMR_LATENT = (128, 16)
DMR_LATENT = (256, 32)
#: Critic name -> (which code it reads, which label it predicts, adversarial?)
CRITIC_ROLES = {
    "priv_adv": ("motion", "subject", True),
    "priv_coop": ("privacy", "subject", False),
    "util_adv": ("privacy", "action", True),
    "util_coop": ("motion", "action", False),
}


class RetargetingAutoencoder(nn.Module):
    """Two `Encoder2D` + one `Decoder1D`, with the retargeter interface of docs/ARCHITECTURE.md."""

    method = "autoencoder"

    def __init__(self, topology: str | Topology, latent: tuple[int, int],
                 num_subjects: int | None = None, num_actions: int | None = None):
        super().__init__()
        self.topology = get_topology(topology)
        self.beta = 1.0
        self.latent = tuple(latent)
        self.num_subjects = num_subjects
        self.num_actions = num_actions
        channels, length = self.latent
        self.dynamic_encoder = Encoder2D(channels, length)
        self.static_encoder = Encoder2D(channels, length)
        self.decoder = Decoder1D(2 * channels, self.topology.num_joints)

    @property
    def has_critics(self) -> bool:
        return False

    def config_dict(self) -> dict:
        """What a checkpoint needs to rebuild this model (besides the topology)."""
        return {"latent": list(self.latent), "num_subjects": self.num_subjects, "num_actions": self.num_actions}

    def encode_motion(self, x: torch.Tensor) -> torch.Tensor:
        """E_M: (B, T, J, 3) normalized clips (any T) -> (B, C, L)."""
        return self.dynamic_encoder(resample_frames(x, NATIVE_FRAMES))

    def encode_privacy(self, x: torch.Tensor) -> torch.Tensor:
        """E_P: (B, T, J, 3) normalized clips (any T) -> (B, C, L)."""
        return self.static_encoder(resample_frames(x, NATIVE_FRAMES))

    def decode(self, motion: torch.Tensor, privacy: torch.Tensor, frames: int = MODEL_FRAMES) -> torch.Tensor:
        """(B, C, L) codes -> (B, frames, J, 3)."""
        out = self.decoder(torch.cat([motion, privacy], dim=1))
        out = out.view(out.shape[0], NATIVE_FRAMES, self.topology.num_joints, 3)
        return resample_frames(out, frames)

    def forward(self, src: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        return self.decode(self.encode_motion(src), self.encode_privacy(ref), frames=src.shape[1])

    def retarget(self, src: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        """Full retarget of normalized (B, 64, J, 3) `src` onto `ref`'s body: (B, 64, J, 3)."""
        check_retarget_inputs(src, ref, self.topology)
        return self(src, ref)


class DMR(RetargetingAutoencoder):
    """DMR: the autoencoder alone, latent (256, 32) per encoder, no critics."""

    method = methods.DMR.name

    def __init__(self, topology: str | Topology, latent: tuple[int, int] = DMR_LATENT):
        super().__init__(topology, latent)


class PMR(RetargetingAutoencoder):
    """PMR: latent (128, 16) per encoder plus four embedding classifiers and the quality controller."""

    method = methods.PMR.name

    def __init__(self, topology: str | Topology, num_subjects: int, num_actions: int,
                 latent: tuple[int, int] = PMR_LATENT):
        super().__init__(topology, latent, num_subjects, num_actions)
        channels = self.latent[0]
        classes = {"subject": num_subjects, "action": num_actions}
        for name, (_, label, _) in CRITIC_ROLES.items():
            self.add_module(name, EmbeddingClassifier(channels, classes[label]))
        self.discriminator = QualityController(self.topology.num_joints)

    @property
    def has_critics(self) -> bool:
        return True

    def embedding_classifiers(self) -> dict[str, EmbeddingClassifier]:
        return {name: getattr(self, name) for name in CRITIC_ROLES}

    def quality_logits(self, x: torch.Tensor) -> torch.Tensor:
        """Q on (B, T, J, 3) clips (resampled to the 75 frames Q was built for): (B,) logits."""
        x = resample_frames(x, NATIVE_FRAMES)
        return self.discriminator(x.reshape(x.shape[0], NATIVE_FRAMES, -1))

