"""`DisentangledTMR`: D(E_A(src), E_I(ref)), the model of ../seeds/001 (ECCV 2026).

    src (B, 64, J, 3) -> motion features (B, 64, J, 9) -> E_A -> action memory (B, 64, 768)
    ref (B, 64, J, 3) -> mean pose, bone lengths     -> E_I -> identity        (B, 256)
    D(action memory, identity) -> (B, 64, J, 3), autoregressive (key/value cache at inference)
    release = β·D + (1 − β)·residual(src, ref), residual = src (the paper), naive(src, ref), either re-timed
              onto its action's template, or the k-same average of src on ref's bone lengths (`config.residual`;
              the re-timed ones hold a `TemplateBank`, k-same the templates and a pool of training clips)
    with `output_head = "kinematic"`, D places bone directions on ref's mean-pose bone lengths (a body by construction)

The auxiliary heads of training (classifiers, adversaries, discriminator) are built by the trainer
around `config.action_dim` and `config.identity_dim`; they are not part of this module.
"""

from __future__ import annotations

import torch
from torch import nn

from ..methods import DTMR
from ..skeleton import get_topology
from .action_encoder import ActionEncoder
from .baselines.naive import NaiveRetargeter, mean_pose_bone_lengths
from .checkpoints.checkpoint import register_method
from ..methods import residual as residual_kind
from .config import DTMRConfig
from .decoder import FactorizedDecoder
from .features import motion_features
from .identity_encoder import IdentityEncoder
from .motion.ksame import KSameMotion
from .motion.retime import Retimer
from .motion.templates import TemplateBank

#: β recommended by the paper (one model is trained per β; see DESIGN §3)
DEFAULT_BETA = DTMR.recommended["beta"]


class DisentangledTMR(nn.Module):
    method = DTMR.name

    def __init__(self, config: DTMRConfig, beta: float = DEFAULT_BETA, templates: TemplateBank | None = None,
                 pool: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None):
        """`templates`: the action templates of the training split (`TemplateBank.fit`), which a "retimed" or
        "ksame" residual needs and every other residual refuses; `pool`: the k-same residual's training clips
        (N, 64, J, 3) with their (N,) action and subject labels, which only it takes."""
        super().__init__()
        if not 0.0 <= beta <= 1.0:
            raise ValueError(f"beta must be in [0, 1], got {beta}")
        kind = residual_kind(config.residual)
        if (templates is not None) != kind.needs_templates:
            raise ValueError(f"the {config.residual!r} residual "
                             + ("needs action templates: pass them (TemplateBank.fit on the training clips)"
                                if templates is None else "takes no action templates"))
        if (pool is not None) != kind.needs_pool:
            raise ValueError(f"the {config.residual!r} residual "
                             + ("averages with a pool of training clips: pass it (clips, actions, subjects)"
                                if pool is None else "takes no pool of clips"))
        self.config = config
        self.topology = get_topology(config.topology)
        self.beta = float(beta)
        self.action_encoder = ActionEncoder(config, self.topology)
        self.identity_encoder = IdentityEncoder(config, self.topology)
        self.decoder = FactorizedDecoder(config, self.topology)
        #: the residual's kind (`dtmr.methods.RESIDUALS`) and the parts that compute it
        self.residual_kind = kind
        plain_naive = kind.on_reference and not kind.needs_templates
        self.naive = NaiveRetargeter(self.topology) if plain_naive else None
        self.retimer = Retimer(self.topology, templates, naive=kind.on_reference) if kind.retimed else None
        self.ksame = KSameMotion(self.topology, templates, *pool, k=config.residual_k) if kind.averaged else None

    def _check_clip(self, x: torch.Tensor, what: str) -> None:
        expected = (self.config.frames, self.topology.num_joints, 3)
        if x.ndim != 4 or tuple(x.shape[1:]) != expected:
            raise ValueError(f"{what} must be (B, {', '.join(map(str, expected))}) for {self.topology.name}, "
                             f"got {tuple(x.shape)}")

    def encode_action(self, src: torch.Tensor) -> torch.Tensor:
        """(B, 64, J, 3) normalized source -> (B, 64, action_dim)."""
        self._check_clip(src, "source")
        return self.action_encoder(motion_features(src))

    def encode_identity(self, ref: torch.Tensor) -> torch.Tensor:
        """(B, 64, J, 3) normalized reference -> (B, identity_dim)."""
        self._check_clip(ref, "reference")
        return self.identity_encoder(ref)

    def body(self, ref: torch.Tensor) -> torch.Tensor | None:
        """(B, 64, J, 3) reference -> (B, J-1) the bone lengths the kinematic head builds on; None for the
        joint head, which does not use them."""
        return None if self.decoder.kinematic is None else mean_pose_bone_lengths(ref, self.topology)

    def decode(self, action_memory: torch.Tensor, identity: torch.Tensor, target: torch.Tensor | None = None,
               teacher_forcing: float = 0.0, use_cache: bool = True,
               bone_lengths: torch.Tensor | None = None) -> torch.Tensor:
        """-> (B, 64, J, 3). See `FactorizedDecoder.forward` for teacher forcing and caching; `bone_lengths`
        is `body(ref)`."""
        return self.decoder(action_memory, identity, target, teacher_forcing, use_cache, bone_lengths)

    def forward(self, src: torch.Tensor, ref: torch.Tensor, target: torch.Tensor | None = None,
                teacher_forcing: float = 0.0) -> torch.Tensor:
        """The full retarget (no β blend), optionally teacher-forced towards `target`."""
        return self.decode(self.encode_action(src), self.encode_identity(ref), target, teacher_forcing,
                           bone_lengths=self.body(ref))

    def retarget(self, src: torch.Tensor, ref: torch.Tensor, use_cache: bool = True) -> torch.Tensor:
        """D(E_A(src), E_I(ref)), (B, 64, J, 3) in the normalized space, decoded autoregressively."""
        return self.decode(self.encode_action(src), self.encode_identity(ref), use_cache=use_cache,
                           bone_lengths=self.body(ref))

    @property
    def retimes(self) -> bool:
        """True when the residual has its action template's timing, not the source's (so must the targets)."""
        return self.retimer is not None

    @property
    def residual_labels(self) -> tuple[str, ...]:
        """The labels `residual` takes (`Anonymizer` passes them), `Residual.labels`."""
        return self.residual_kind.labels

    def residual(self, src: torch.Tensor, ref: torch.Tensor, actions: torch.Tensor | None = None,
                 subjects: torch.Tensor | None = None) -> torch.Tensor:
        """What the release blends with D, (B, 64, J, 3): the source, or the source naively retargeted to
        the reference's bone lengths, or either re-timed onto its action template, or the k-same average on the
        reference's bone lengths (`config.residual`). `actions` and `subjects` (B,) are data-set labels, -1
        unknown; without them the template is the nearest one and no subject is excluded."""
        if self.ksame is not None:
            return self.ksame(src, ref, actions, subjects)
        if self.retimer is not None:
            return self.retimer(src, ref, actions)
        return src if self.naive is None else self.naive(src, ref)

    def config_dict(self) -> dict:
        return self.config.to_dict()

    def parameter_counts(self) -> dict[str, int]:
        """Trainable parameters per component (the paper's table)."""
        def count(module: nn.Module) -> int:
            return sum(p.numel() for p in module.parameters() if p.requires_grad)

        return {
            "total": count(self),
            "action_encoder": count(self.action_encoder),
            "mixformer": count(self.action_encoder.mixformer),
            "identity_encoder": count(self.identity_encoder),
            "decoder": count(self.decoder),
        }


#: the state-dict entries of the k-same residual's pool
KSAME_POOL = ("ksame.pool", "ksame.pool_actions", "ksame.pool_subjects")


def _build_from_checkpoint(checkpoint: dict) -> DisentangledTMR:
    beta = checkpoint.get("beta")
    config = DTMRConfig.from_dict(checkpoint["config"])
    state = checkpoint["state_dict"]
    templates, pool = None, None
    kind = residual_kind(config.residual)
    if kind.retimed:
        templates = TemplateBank.from_state_dict(config.topology, state, "retimer.bank.")
    elif kind.averaged:
        templates = TemplateBank.from_state_dict(config.topology, state, "ksame.bank.")
        if not all(name in state for name in KSAME_POOL):
            raise ValueError(f"the file holds no k-same pool ({', '.join(KSAME_POOL)})")
        pool = tuple(state[name] for name in KSAME_POOL)
    return DisentangledTMR(config, beta=DEFAULT_BETA if beta is None else beta, templates=templates, pool=pool)


register_method(DTMR.name, _build_from_checkpoint)
