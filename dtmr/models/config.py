"""`DTMRConfig`: every size of DisentangledTMR, with the `paper` and `small` presets side by side.

The joint count is never a field: it comes from the topology (`DTMRConfig.num_joints`), so the same
preset builds a 25-, 22- or 20-joint model. The feature sizes the training heads are built around
(`action_dim`, `identity_dim`, `frames`) are plain fields.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass

from ..methods import KSAME_RESIDUAL, SOURCE_RESIDUAL
from ..methods import RESIDUALS as RESIDUAL_KINDS
from ..methods import residual as residual_kind
from ..skeleton import MODEL_FRAMES, Topology, get_topology

#: per joint and frame: position, velocity and acceleration (3 coordinates each)
FEATURE_CHANNELS = 9

#: Spatial attention groups of a Skeleton-MixFormer block (fixed by the MixFormer design).
MIXFORMER_ATTENTION_GROUPS = 4

# Field values that differ between presets; every other field keeps its default in both.
#                                 paper                     small
_PRESET_TABLE: dict[str, tuple[object, object]] = {
    "action_conv_channels":       (64,                       24),
    "action_hidden":              (256,                      64),
    "action_heads":               (8,                        4),
    "action_layers":              (2,                        1),
    "action_ffn":                 (512,                      128),
    "action_dim":                 (768,                      128),
    "mixformer_channels":         ((80, 160, 320),           (16, 32, 64)),
    "mixformer_blocks":           ((4, 3, 3),                (1, 1, 1)),
    "mixformer_adjacency_groups": (8,                        4),
    "mixformer_dilations":        ((1, 2),                   (1,)),
    "identity_channels":          ((64, 128, 256, 256),      (32, 64, 64, 64)),
    "identity_heads":             (8,                        4),
    "bone_hidden":                (128,                      64),
    "identity_fusion_hidden":     (512,                      128),
    "identity_dim":               (256,                      64),
    "decoder_layers":             (6,                        3),
    "decoder_dim":                (320,                      128),
    "decoder_heads":              (8,                        4),
    "decoder_ffn":                (2048,                     384),
}
#: the model half of each preset; its training half (epochs, rates, batch) is `dtmr.train.presets.PRESETS`
PRESET_NAMES = ("paper", "small")
#: what the release blends D with (`DisentangledTMR.residual`), by name: `dtmr.methods.RESIDUALS` says what
#: each needs (action templates, a pool of training clips) and computes
RESIDUALS = tuple(r.name for r in RESIDUAL_KINDS)
#: what the decoder's last layer predicts: joint coordinates (the paper) or root + bone directions placed on
#: the reference's bone lengths by forward kinematics (dtmr/models/kinematic_head.py)
OUTPUT_HEADS = ("joints", "kinematic")

# Sane bounds of every integer field (each entry of a tuple field), far above both presets: a config comes
# from a checkpoint, which is untrusted, and `decoder_ffn = 10**9` would ask for terabytes when built.
_WIDTH, _DEPTH, _HEADS, _KERNEL = (1, 8192), (1, 64), (1, 256), (1, 63)
_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "frames": (1, 4096),
    "action_conv_kernels": _KERNEL, "action_conv_channels": _WIDTH, "action_hidden": _WIDTH,
    "action_heads": _HEADS, "action_layers": _DEPTH, "action_ffn": _WIDTH, "action_dim": _WIDTH,
    "mixformer_channels": _WIDTH, "mixformer_blocks": _DEPTH, "mixformer_adjacency_groups": _HEADS,
    "mixformer_temporal_kernel": _KERNEL, "mixformer_dilations": (1, 64),
    "identity_channels": _WIDTH, "identity_heads": _HEADS, "bone_hidden": _WIDTH,
    "identity_fusion_hidden": _WIDTH, "identity_dim": _WIDTH,
    "decoder_layers": _DEPTH, "decoder_dim": _WIDTH, "decoder_heads": _HEADS, "decoder_ffn": _WIDTH,
    "residual_k": (1, 64),
}
#: how many entries a tuple field may have
_TUPLE_LENGTHS = {"action_conv_kernels": (1, 8), "mixformer_channels": (1, 8), "mixformer_blocks": (1, 8),
                  "mixformer_dilations": (1, 8), "identity_channels": (2, 16)}


def _is_int(value) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    return not isinstance(value, bool)


def _check_types_and_bounds(config: DTMRConfig) -> None:
    """TypeError/ValueError naming the field when a value has the wrong type or is outside its sane bound;
    run before anything derived from the sizes (`_check`, the model) is computed."""
    for name in ("topology", "residual", "output_head"):
        if not isinstance(getattr(config, name), str):
            raise TypeError(f"invalid DTMRConfig: {name} must be a string, got {getattr(config, name)!r}")
    if config.preset_name is not None and not isinstance(config.preset_name, str):
        raise TypeError(f"invalid DTMRConfig: preset_name must be a string, got {config.preset_name!r}")
    if isinstance(config.dropout, bool) or not isinstance(config.dropout, (int, float)):
        raise TypeError(f"invalid DTMRConfig: dropout must be a number, got {config.dropout!r}")
    for name, (low, high) in _INT_BOUNDS.items():
        value = getattr(config, name)
        if name in _TUPLE_LENGTHS:
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"invalid DTMRConfig: {name} must be a list of integers, got {value!r}")
            shortest, longest = _TUPLE_LENGTHS[name]
            if not shortest <= len(value) <= longest:
                raise ValueError(f"invalid DTMRConfig: {name} must have {shortest} to {longest} entries, "
                                 f"got {len(value)}")
            values = list(value)
        else:
            values = [value]
        for v in values:
            if not _is_int(v):
                raise TypeError(f"invalid DTMRConfig: {name} must hold integers, got {v!r}")
            if not low <= int(v) <= high:
                raise ValueError(f"invalid DTMRConfig: {name} = {int(v)} is outside {low}..{high}")


@dataclass(frozen=True)
class DTMRConfig:
    """Sizes of DisentangledTMR. Defaults are the `paper` preset (22.7 M parameters on NTU-25)."""

    topology: str = "ntu25"
    frames: int = MODEL_FRAMES
    preset_name: str = "paper"
    dropout: float = 0.1

    # Action encoder, branch A: parallel temporal convolutions over the flattened joints, then
    # temporal self-attention at `action_hidden`, then a projection to `action_dim`.
    action_conv_kernels: tuple[int, ...] = (3, 5, 7)
    action_conv_channels: int = 64  # output channels of each kernel's convolution
    action_hidden: int = 256
    action_heads: int = 8
    action_layers: int = 2
    action_ffn: int = 512
    action_dim: int = 768

    # Action encoder, branch B: Skeleton-MixFormer stages (channels and block count per stage; each
    # stage after the first halves the frame count).
    mixformer_channels: tuple[int, ...] = (80, 160, 320)
    mixformer_blocks: tuple[int, ...] = (4, 3, 3)
    mixformer_adjacency_groups: int = 8  # channel groups sharing one learnable adjacency
    mixformer_temporal_kernel: int = 5
    mixformer_dilations: tuple[int, ...] = (1, 2)

    # Identity encoder: 3 -> channels[0] input projection, GCN channels[0] -> ... -> channels[-1].
    identity_channels: tuple[int, ...] = (64, 128, 256, 256)
    identity_heads: int = 8
    bone_hidden: int = 128
    identity_fusion_hidden: int = 512
    identity_dim: int = 256

    # What the release blends the decoder's output with: "source" (the paper: β·D + (1 − β)·src) or "naive"
    # (β·D + (1 − β)·naive(src, ref), the source kinematically retargeted to the reference's bone lengths,
    # so that the residual path no longer carries the source's proportions), "retimed" or "retimed-naive" (the
    # source or its naive retarget warped onto its action's template timing, dtmr/models/motion/retime.py, so
    # that it no longer carries the source's rhythm either; the model then holds the templates, fitted on its
    # training split), or "ksame" (the time-aligned mean of the source and `residual_k` - 1 training clips of
    # the same action by other subjects, on the reference's bone lengths, dtmr/models/motion/ksame.py; the
    # model then holds the templates and the pool of training clips). Not part of the presets.
    residual: str = SOURCE_RESIDUAL.name
    residual_k: int = 3

    # What the decoder predicts per frame: "joints" (J·3 coordinates, the paper) or "kinematic" (the root and
    # one direction per bone, placed on the reference's bone lengths: every output frame is a body with the
    # reference's proportions). Not part of the presets.
    output_head: str = "joints"

    # Factorized decoder.
    decoder_layers: int = 6
    decoder_dim: int = 320
    decoder_heads: int = 8
    decoder_ffn: int = 2048

    def __post_init__(self) -> None:
        _check_types_and_bounds(self)
        for name in ("action_conv_kernels", "mixformer_channels", "mixformer_blocks", "mixformer_dilations",
                     "identity_channels"):
            object.__setattr__(self, name, tuple(int(v) for v in getattr(self, name)))
        self._check()

    # ------------------------------------------------------------------ construction

    @classmethod
    def preset(cls, name: str, topology: str | Topology = "ntu25", **overrides) -> DTMRConfig:
        """The named preset ("paper" or "small") for `topology`, with optional field overrides."""
        if name not in PRESET_NAMES:
            raise ValueError(f"unknown preset {name!r} (known: {', '.join(PRESET_NAMES)})")
        column = PRESET_NAMES.index(name)
        values = {key: pair[column] for key, pair in _PRESET_TABLE.items()}
        values.update(overrides)
        return cls(topology=get_topology(topology).name, preset_name=name, **values)

    def to_dict(self) -> dict:
        """Plain JSON/checkpoint-safe values (tuples become lists); `residual_k` only for the k-same residual,
        so that every other model's config reads as it did before the field existed."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        if not residual_kind(self.residual).averaged:
            del out["residual_k"]
        return out

    @classmethod
    def from_dict(cls, values: dict) -> DTMRConfig:
        """Inverse of `to_dict`; unknown keys raise ValueError naming them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown DTMRConfig fields: {', '.join(unknown)}")
        return cls(**values)

    # ------------------------------------------------------------------ derived sizes

    @property
    def num_joints(self) -> int:
        return get_topology(self.topology).num_joints

    @property
    def feature_channels(self) -> int:
        return FEATURE_CHANNELS

    def _check(self) -> None:
        topo = get_topology(self.topology)  # raises KeyError for an unknown name
        problems = []
        if topo.num_joints < 2:
            problems.append("the topology needs at least 2 joints")
        if self.frames % (2 ** (len(self.mixformer_channels) - 1)):
            problems.append(f"frames={self.frames} must be divisible by 2^(MixFormer stages - 1)")
        if len(self.mixformer_channels) != len(self.mixformer_blocks) or min(self.mixformer_blocks, default=0) < 1:
            problems.append("mixformer_channels and mixformer_blocks need one entry >= 1 per stage")
        branches = len(self.mixformer_dilations) + 3
        for c in self.mixformer_channels:
            if c % branches or c % self.mixformer_adjacency_groups or c % (2 * MIXFORMER_ATTENTION_GROUPS):
                problems.append(f"MixFormer width {c} must be divisible by {branches} temporal branches, "
                                f"{self.mixformer_adjacency_groups} adjacency groups and "
                                f"{2 * MIXFORMER_ATTENTION_GROUPS} (attention group halves)")
        if self.mixformer_adjacency_groups % MIXFORMER_ATTENTION_GROUPS:
            problems.append(f"mixformer_adjacency_groups must be a multiple of {MIXFORMER_ATTENTION_GROUPS}")
        for dim, heads, what in ((self.action_hidden, self.action_heads, "action_hidden"),
                                 (self.identity_channels[-1], self.identity_heads, "identity_channels[-1]"),
                                 (self.decoder_dim, self.decoder_heads, "decoder_dim")):
            if dim % heads:
                problems.append(f"{what}={dim} is not divisible by its {heads} heads")
        if len(self.identity_channels) < 2:
            problems.append("identity_channels needs the input width and at least one GCN layer")
        if any(k % 2 == 0 for k in self.action_conv_kernels):
            problems.append("action_conv_kernels must be odd (same-length convolutions)")
        if not 0.0 <= self.dropout < 1.0:
            problems.append("dropout must be in [0, 1)")
        if self.residual not in RESIDUALS:
            problems.append(f"residual must be one of {', '.join(RESIDUALS)}, got {self.residual!r}")
        if self.output_head not in OUTPUT_HEADS:
            problems.append(f"output_head must be one of {', '.join(OUTPUT_HEADS)}, got {self.output_head!r}")
        if problems:
            raise ValueError("invalid DTMRConfig: " + "; ".join(problems))


#: the label part that names a training seed (`with_training_seed`); dtmr/eval/row.py reads it back out of the
#: labels of results rows written before rows had a field of their own for it
TRAINING_SEED = "training seed"


def variant_label(config: dict, training: dict | None = None) -> str | None:
    """How tables and model lists tell DisentangledTMR checkpoints apart: `setting_variant`, and the training
    seed when it is not the default 0 (`--seed`; two trainings of one setting are otherwise one label), from
    the checkpoint's `training` record: "small", "small, training seed 1"; None for a config without a
    preset."""
    setting = setting_variant(config, training)
    return None if setting is None else with_training_seed(setting, training_seed(training))


def setting_variant(config: dict, training: dict | None = None) -> str | None:
    """What every training of one DisentangledTMR setting shares: the preset, the residual when it is not the
    paper's, and the loss weights, output adversary learning rate and warmed output critics set by
    `dtmr train --loss-weight` / `--output-adversary-lr` / `--warm-output-critics`, from the checkpoint's
    `training` record: "small", "paper, naive residual", "small, naive residual, kinematic output",
    "small, output_identity_adversary=2", "small, output adversary lr 0.001", "small, output critics warmed",
    "small, bf16 training" (`--precision bf16`), "small, from dtmr_small_beta0.2.pt" (`--init`); None for a config
    without a preset."""
    preset = config.get("preset_name")
    if preset is None:
        return None
    residual = config.get("residual", SOURCE_RESIDUAL.name)
    parts = [str(preset)] + ([] if residual == SOURCE_RESIDUAL.name else [f"{residual} residual"])
    if residual == KSAME_RESIDUAL.name:
        parts[-1] += f" k={config.get('residual_k')}"
    if config.get("output_head", "joints") != "joints":
        parts.append(f"{config['output_head']} output")
    training = training if isinstance(training, dict) else {}  # a checkpoint's, unchecked
    weights = training.get("loss_weights")
    if isinstance(weights, dict):
        parts += [f"{term}={weight:g}" for term, weight in sorted(weights.items(), key=lambda item: str(item[0]))
                  if isinstance(weight, (int, float))]  # sorted as text: a checkpoint's keys may mix types
    adversary_lr = training.get("output_adversary_lr")
    if isinstance(adversary_lr, (int, float)) and not isinstance(adversary_lr, bool):
        parts.append(f"output adversary lr {adversary_lr:g}")
    if training.get("warm_output_critics") is True:
        parts.append("output critics warmed")
    if training.get("precision") == "bf16":  # `dtmr train --precision bf16`: not the fp32 setting's trainings
        parts.append("bf16 training")
    init = training.get("init")
    if isinstance(init, str) and init:  # `dtmr train --init`: fine-tuned from another checkpoint
        parts.append(f"from {init}")
    return ", ".join(parts)


def training_seed(training: dict | None) -> int | None:
    """The seed of a checkpoint's `training` record (`dtmr train --seed`); None when it records none."""
    seed = training.get("seed") if isinstance(training, dict) else None  # a checkpoint's, unchecked
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def with_training_seed(setting: str, seed: int | None) -> str:
    """A setting's label with its training seed named, when it is not the default 0: "small, training seed 1"."""
    return setting if seed is None or seed == 0 else f"{setting}, {TRAINING_SEED} {seed}"
