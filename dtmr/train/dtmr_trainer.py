"""The three-stage training of DisentangledTMR (DESIGN §4; seeds/001 "Loss & Training").

A batch is B quadruplets [(P1,A1), (P1,A2), (P2,A1), (P2,A2)] from the same view. Every clip is encoded
once: A = E_A(x) (4B, 64, Da), I = E_I(x) (4B, Di). Decoding uses four (action, identity) -> target pairs
per quadruplet:

    cross  A(P1,A1) + I(P2,A2) -> x(P2,A1)      self  A(P1,A1) + I(P1,A2) -> x(P1,A1)
    cross  A(P2,A2) + I(P1,A1) -> x(P1,A2)      self  A(P2,A2) + I(P2,A1) -> x(P2,A2)

and every loss on the output is computed on the β-blend `out = β·D + (1-β)·src` (the decoder learns what
complements the source; with `config.residual = "naive"`, src is replaced by the source retargeted to the
identity clip's bone lengths, here and in D*; with `config.output_head = "kinematic"` the decoder builds its
frames on the identity clip's bone lengths). A cross target is another performance than its source, so
it is first warped onto the source's timing (`alignment.align_to_source`, dynamic time warping on bone
directions); with a re-timed residual (`config.residual = "retimed"` or "retimed-naive") every target is
warped onto the residual's timing instead, the action template's, which the release has. With the k-same
residual (`config.residual = "ksame"`) the residual is naive(mean, ref), the mean being the source's k-same
average (its partners depend on the source alone, so each training clip's is computed once when the trainer
starts, `DTMRTrainer.train_averages`); it has the source's timing, and the targets are aligned as usual. Teacher forcing
feeds the decoder the output it should produce, `D* = (target - (1-β)·src) / β`, shifted by one frame; one
draw per batch decides (the stage's schedule).

Stage 1 (decoder frozen): action CE, identity CE, SupCon, KL(identity adversary || uniform),
orthogonality, cross-correlation. Stage 2: reconstruction terms; encoders at 1 % of the base rate.
Stage 3: all of them plus output action CE, the sequence discriminator and the output identity adversary,
at base/10. Critics (the adversaries and the discriminator) and the output action classifier learn in
their own optimizer step on detached inputs after each generator step; the generator sees them frozen.

With `precision = "bf16"` (`dtmr train --precision bf16`) both steps' forward passes and losses run under
bfloat16 autocast (`DTMRTrainer.autocast`); the residual and the aligned targets, data rather than network,
are computed in float32 all the same, and the losses compute their small differences in float32 (losses.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn
from torch.func import functional_call

from ..data.label_set import record_label_set
from ..data.quadruplets import QuadrupletSampler
from ..errors import DtmrError
from ..models.checkpoints.checkpoint import save_checkpoint
from ..models.precision import PRECISIONS
from ..models.serving.prepare import prepare_for_inference
from ..methods import residual as residual_kind
from ..models.config import DTMRConfig
from ..models.dtmr import DisentangledTMR
from ..models.interface import blend_release
from ..models.motion.templates import TemplateBank
from . import body_losses, stage1_cache
from . import losses as L
from .alignment import align_to_source
from .data import TrainingData
from .distributed import DistributedContext
from .heads import AuxiliaryHeads, Critics
from .loop import EpochTrainer, epoch_rng
from .presets import (
    DEFAULT_BETA,
    DEFAULT_PRESET,
    DEFAULT_SEED,
    PRESETS,
    quadruplets_per_epoch,
)
from .progress import EventWriter
from .schedules import StageSpec, dtmr_stages, per_batch_teacher_forcing

#: quadruplet roles (dtmr/data/quadruplets.py): x[:, 0] = (P1,A1), 1 = (P1,A2), 2 = (P2,A1), 3 = (P2,A2)
#: decoding pairs: (action clip, identity clip, target clip); the first two are cross pairs
DECODE_PAIRS = ((0, 3, 2), (3, 0, 1), (0, 1, 0), (3, 2, 3))
CROSS_PAIRS = 2
#: stage-2 terms, computed on the blended output against the target
RECONSTRUCTION_TERMS = ("mse", "end_effector", "bone", "velocity", "smoothness", "foot_contact", "joint_range",
                        "joint_angle", "limb_overlap")


@dataclass
class TrainConfig:
    data: str
    split: str
    out: str
    preset: str = DEFAULT_PRESET
    beta: float = DEFAULT_BETA
    epochs: tuple[int, int, int] | None = None
    batch: int = PRESETS[DEFAULT_PRESET].batch  # quadruplets per optimizer step, over all processes
    lr: float | None = None
    device: str | None = None
    seed: int = DEFAULT_SEED
    quadruplets_per_epoch: int | None = None  # default: twice the training clips, at most 50k
    topology: str | None = None
    model_overrides: dict = field(default_factory=dict)  # DTMRConfig fields (tests use tiny models)
    # loss term -> weight, replacing the published weight in every stage that uses the term (losses.py)
    loss_weights: dict = field(default_factory=dict)
    # stage-3 learning rate of the output identity adversary (it starts untrained there); None: the stage's
    output_adversary_lr: float | None = None
    # train the output critics in stage 2 too, so they are not at chance when stage 3 starts (schedules.py)
    warm_output_critics: bool = False
    # "bf16": the generator's forward and losses and the critics' losses run under bfloat16 autocast on the
    # run's device type (CUDA; the CPU's autocast works too and is what the tests use); weights stay float32
    precision: str = "fp32"


def _parts(model: DisentangledTMR, heads: AuxiliaryHeads, critics: Critics) -> dict[str, nn.Module]:
    """The trainable parts by the names of `StageSpec.learning_rates`."""
    return {
        "action_encoder": model.action_encoder,
        "identity_encoder": model.identity_encoder,
        "decoder": model.decoder,
        "heads": nn.ModuleList([heads.action_classifier, heads.identity_classifier, heads.projection]),
        "output_heads": heads.output_classifier,
        "adversary": critics.identity_adversary,
        "output_adversary": critics.output_identity_adversary,
        "discriminator": critics.discriminator,
    }


GENERATOR_PARTS = ("action_encoder", "identity_encoder", "decoder", "heads")
CRITIC_PARTS = ("adversary", "output_adversary", "discriminator", "output_heads")


def frozen(module: nn.Module):
    """`module` as a function of its input only: its parameters are constants (no gradient reaches them)."""
    params = {n: p.detach() for n, p in module.named_parameters()}
    params.update(dict(module.named_buffers()))
    return lambda x: functional_call(module, params, (x,))


class GeneratorLoss(nn.Module):
    """One generator forward: encodings, decoding and every loss term of the stage (a module so DDP can sync it)."""

    def __init__(self, model: DisentangledTMR, heads: AuxiliaryHeads, critics: Critics):
        super().__init__()
        self.model = model
        self.heads = heads
        self._critics = [critics]  # in a list: not a submodule, so DDP does not manage its parameters

    def forward(self, x: torch.Tensor, subjects: torch.Tensor, actions: torch.Tensor, fps: torch.Tensor,
                stage: int, teacher_forced: bool, averages: torch.Tensor | None = None,
                ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """x (B, 4, 64, J, 3); subjects, actions: class indices (B, 4); fps (B, 4); averages (B, 4, 64, J, 3):
        the k-same averages of x's clips, for the k-same residual only.

        Returns the loss terms and the detached tensors the critic step needs.
        """
        model, heads, critics = self.model, self.heads, self._critics[0]
        b = x.shape[0]
        clips = x.reshape(4 * b, *x.shape[2:])
        subj, act = subjects.reshape(-1), actions.reshape(-1)
        action_features = model.encode_action(clips)  # (4B, 64, Da)
        identity = model.encode_identity(clips)  # (4B, Di)
        pooled = action_features.mean(dim=1)
        terms: dict[str, torch.Tensor] = {}
        saved: dict[str, torch.Tensor] = {"pooled_action": pooled.detach(), "subjects": subj}
        if stage in (1, 3):
            terms["action_ce"] = L.classification_loss(heads.action_classifier(pooled), act)
            terms["identity_ce"] = L.classification_loss(heads.identity_classifier(identity), subj)
            terms["supcon"] = L.supervised_contrastive_loss(heads.projection(pooled), act, subj)
            terms["adversary"] = L.kl_to_uniform(frozen(critics.identity_adversary)(pooled))
            terms["orthogonality"] = L.orthogonality_loss(action_features, identity)
            terms["cross_correlation"] = L.cross_correlation_loss(action_features, identity)
        if stage in (2, 3):
            beta = model.beta

            def view(t: torch.Tensor, role: int) -> torch.Tensor:
                return t.view(b, 4, *t.shape[1:])[:, role]

            src = torch.cat([x[:, a] for a, _, _ in DECODE_PAIRS])  # (4B, 64, J, 3), pair-major
            target = torch.cat([x[:, t] for _, _, t in DECODE_PAIRS])
            references = torch.cat([x[:, i] for _, i, _ in DECODE_PAIRS])
            cross = slice(0, CROSS_PAIRS * b)  # the cross pairs come first; the self pairs' targets are their sources
            # the residual and the targets are data, not the network's: float32 even under bf16 autocast (its
            # einsum in the DTW warp would otherwise round the targets to bfloat16, 8 mm steps at 1 m)
            with torch.autocast(x.device.type, enabled=False):
                if averages is not None:  # k-same: naive(average of the source and its partners, ref)
                    base = model.ksame.naive(torch.cat([averages[:, a] for a, _, _ in DECODE_PAIRS]), references)
                else:
                    base = model.residual(src, references)  # src, naive(src, ref), or either re-timed
                if model.retimes:  # the release has the template's timing: every target is warped onto it
                    target = align_to_source(target, base, model.topology)
                else:
                    target[cross] = align_to_source(target[cross], src[cross], model.topology)
            memory = torch.cat([view(action_features, a) for a, _, _ in DECODE_PAIRS])
            ident = torch.cat([view(identity, i) for _, i, _ in DECODE_PAIRS])
            target_fps = torch.cat([fps[:, t] for _, _, t in DECODE_PAIRS])
            decoder_target = (target - (1.0 - beta) * base) / beta if beta > 0 else target
            full = model.decode(memory, ident, decoder_target, teacher_forcing=1.0 if teacher_forced else 0.0,
                                bone_lengths=model.body(references))
            out = blend_release(full, base, beta)
            topo = model.topology
            terms["mse"] = L.mse_loss(out, target)
            terms["end_effector"] = L.end_effector_loss(out, target, topo)
            terms["bone"] = L.bone_length_loss(out, target, topo)
            terms["velocity"] = L.velocity_loss(out, target)
            terms["smoothness"] = L.smoothness_loss(out, target)
            terms["foot_contact"] = L.foot_contact_loss(out, target, topo, target_fps)
            terms["joint_range"] = L.joint_range_loss(out, target, topo)
            terms["joint_angle"] = body_losses.joint_angle_loss(out, topo)
            terms["limb_overlap"] = body_losses.limb_overlap_loss(out, topo)
            saved.update(out=out.detach(), real=clips, real_actions=act,
                         source_actions=torch.cat([actions[:, a] for a, _, _ in DECODE_PAIRS]),
                         source_subjects=torch.cat([subjects[:, a] for a, _, _ in DECODE_PAIRS]))
            if stage == 3:
                terms["output_action_ce"] = L.classification_loss(frozen(heads.output_classifier)(out),
                                                                  saved["source_actions"])
                terms["discriminator"] = L.generator_adversarial_loss(frozen(critics.discriminator)(out))
                terms["output_identity_adversary"] = L.kl_to_uniform(
                    frozen(critics.output_identity_adversary)(out[cross]))
        return terms, saved


#: training clips per k-same average call (its DTW cost matrices grow with it)
AVERAGE_CHUNK = 64


def ksame_averages(ksame: nn.Module, train) -> torch.Tensor:
    """(N, 64, J, 3) every training clip's k-same average (`KSameMotion.average`, its own subject excluded
    from its partners and its action's partners taken), computed once, on the CPU."""
    clips = torch.from_numpy(train.joints)
    actions, subjects = torch.from_numpy(train.actions), torch.from_numpy(train.subjects)
    with torch.no_grad():
        return torch.cat([ksame.average(clips[i:i + AVERAGE_CHUNK], actions[i:i + AVERAGE_CHUNK],
                                        subjects[i:i + AVERAGE_CHUNK]) for i in range(0, len(clips), AVERAGE_CHUNK)])


def stage_weights(overrides: dict[str, float]) -> dict[int, dict[str, float]]:
    """The published per-stage loss weights with `overrides` (term -> weight) applied wherever a term is used."""
    known = sorted(set().union(*L.STAGE_WEIGHTS.values()))
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise DtmrError(f"unknown loss terms {unknown}; the terms are {known}")
    bad = {k: v for k, v in overrides.items()
           if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0}
    if bad:
        raise DtmrError(f"loss weights must be finite numbers >= 0, got {bad}")
    return {stage: {k: float(overrides.get(k, w)) for k, w in weights.items()}
            for stage, weights in L.STAGE_WEIGHTS.items()}


def with_output_adversary_lr(stages: tuple[StageSpec, ...], lr: float | None) -> tuple[StageSpec, ...]:
    """`stages` with the output identity adversary's learning rate set to `lr` wherever it trains (stage 3,
    and stage 2 when the output critics are warmed).

    The adversary is created untrained and, unless warmed in stage 2, first steps in stage 3, whose
    learning rates are base/10 for fine-tuning (DESIGN §4); at that rate its loss stays at chance (log N)
    for the whole stage, so its KL term has nothing to push against. `lr` sets its own rate (e.g. the base
    rate, the stage-1 adversary's)."""
    if lr is None:
        return stages
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise DtmrError(f"the output adversary's learning rate must be a positive number, got {lr!r}")
    return tuple(dataclasses.replace(s, learning_rates={**s.learning_rates, "output_adversary": float(lr)})
                 if "output_adversary" in s.learning_rates else s for s in stages)


class DTMRTrainer(EpochTrainer):
    def __init__(self, config: TrainConfig, data: TrainingData, ctx: DistributedContext,
                 events: EventWriter | None = None, resume: bool = False,
                 stage1_cache_dir: str | Path | None = None):
        """`stage1_cache_dir`: a folder where the state at the end of stage 1 is stored and, when a training of
        the same seed, data and settings (β and the residual aside) stored it, taken from (stage1_cache.py)."""
        super().__init__(config.out, ctx, config.seed, events, resume)
        if not 0.0 <= config.beta <= 1.0:
            raise DtmrError(f"beta must lie in [0, 1], got {config.beta}")
        if config.precision not in PRECISIONS:
            raise DtmrError(f"precision must be one of {', '.join(PRECISIONS)}, got {config.precision!r}")
        self.config = config
        self.data = data
        torch.manual_seed(config.seed)
        try:
            model_config = DTMRConfig.preset(config.preset, data.topology, **config.model_overrides)
        except (TypeError, ValueError) as exc:
            raise DtmrError(f"invalid model options {config.model_overrides}: {exc}") from None
        # a re-timed residual warps onto the action templates of the training half, k-same averages with its
        # clips (dtmr/models/motion)
        kind = residual_kind(model_config.residual)
        templates = TemplateBank.fit(data.topology, data.train.joints, data.train.actions) \
            if kind.needs_templates else None
        pool = tuple(torch.from_numpy(a) for a in (data.train.joints, data.train.actions, data.train.subjects)) \
            if kind.needs_pool else None
        try:
            self.model = DisentangledTMR(model_config, beta=config.beta, templates=templates, pool=pool)
        except ValueError as exc:  # e.g. an action with fewer subjects than k
            raise DtmrError(f"{data.path}: {exc}") from None
        # the generation fed back in scheduled sampling and the evaluations run on the served paths
        prepare_for_inference(self.model)
        #: each training clip's k-same average (N, 64, J, 3), for the k-same residual
        self.train_averages = ksame_averages(self.model.ksame, data.train) if pool is not None else None
        self.model.to(ctx.device)
        n_subjects, n_actions = len(data.subject_labels), len(data.action_labels)
        joints = self.model.topology.num_joints
        self.heads = AuxiliaryHeads(model_config.action_dim, model_config.identity_dim, joints, n_actions,
                                    n_subjects).to(ctx.device)
        self.critics = Critics(model_config.action_dim, joints, n_subjects).to(ctx.device)
        for part in (self.model, self.heads, self.critics):
            ctx.synchronize_batch_norm(part)
        self.stages: tuple[StageSpec, ...] = with_output_adversary_lr(
            dtmr_stages(config.preset, config.lr, config.epochs, config.warm_output_critics),
            config.output_adversary_lr)
        self.stage_weights = stage_weights(config.loss_weights)
        self.train_x = torch.from_numpy(data.train.joints)
        self.train_subjects = torch.from_numpy(data.subject_classes(data.train.subjects))
        self.train_actions = torch.from_numpy(data.action_classes(data.train.actions))
        self.train_fps = torch.from_numpy(data.train.fps)
        self.quadruplets_per_epoch = quadruplets_per_epoch(config.quadruplets_per_epoch, len(data.train), config.batch)
        self.sampler_metadata = data.train.sampler_metadata()
        QuadrupletSampler(self.sampler_metadata, seed=0)  # fail early when no quadruplet exists
        self.optimizers: dict[str, torch.optim.Optimizer] = {}
        self.generator: nn.Module | None = None
        self.critic_steps: dict[str, nn.Module] = {}
        self.stage1_cache_dir = stage1_cache_dir if self.stages[0].epochs > 0 else None
        self._stage1_key = stage1_cache.stage1_key(self.run_config(), data, ctx.device, ctx.world_size) \
            if self.stage1_cache_dir is not None else None

    # ---------------------------------------------------------------- plan

    def run_config(self) -> dict:
        c = dataclasses.asdict(self.config)
        c.pop("out")
        c.pop("device")
        for option, unset in (("loss_weights", {}), ("output_adversary_lr", None), ("warm_output_critics", False),
                              ("precision", "fp32")):
            if c[option] == unset:
                c.pop(option)  # runs from before the option resume as they were
        return json.loads(json.dumps(c))  # tuples -> lists, as stored

    def stage_plan(self) -> list[tuple[int, str, int]]:
        return [(s.stage, s.name, s.epochs) for s in self.stages]

    def steps_per_epoch(self, stage: int) -> int:
        return self.quadruplets_per_epoch // self.config.batch

    def start_stage(self, stage: int) -> None:
        spec = self.stages[stage - 1]
        parts = _parts(self.model, self.heads, self.critics)
        for name, module in parts.items():
            module.requires_grad_(name in spec.learning_rates)
        groups = [{"params": list(parts[n].parameters()), "lr": spec.learning_rates[n]}
                  for n in GENERATOR_PARTS if n in spec.learning_rates]
        self.optimizers = {"generator": torch.optim.Adam(groups)}
        self.critic_steps = {}
        for name in CRITIC_PARTS:
            if name in spec.learning_rates:
                self.optimizers[name] = torch.optim.Adam(parts[name].parameters(), lr=spec.learning_rates[name])
                self.critic_steps[name] = self.ctx.wrap(parts[name])
        self.generator = self.ctx.wrap(GeneratorLoss(self.model, self.heads, self.critics))
        self.teacher_forcing = spec.teacher_forcing

    # ---------------------------------------------------------------- steps

    def autocast(self) -> contextlib.AbstractContextManager:
        """Where the forward passes and losses run: bf16 autocast on the run's device type with `precision`
        "bf16", else nothing. Backward passes and optimizer steps run outside it, and the weights stay float32
        (autocast casts each op's inputs, never the parameters). No GradScaler: bfloat16 has float32's exponent
        range, so gradients do not underflow the way float16's do (fp16 would need loss scaling)."""
        if self.config.precision == "bf16":
            return torch.autocast(self.ctx.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def epoch_steps(self, stage: int, epoch: int) -> Iterator[tuple[dict[str, float], int]]:
        rng = epoch_rng(self.seed, stage, epoch)
        sampler = QuadrupletSampler(self.sampler_metadata, seed=int(rng.integers(2**63)))
        quads = torch.from_numpy(sampler.sample(self.quadruplets_per_epoch))
        steps = self.steps_per_epoch(stage)
        weights = self.stage_weights[stage]
        share = self.ctx.share(self.config.batch)
        self.model.train()
        self.heads.train()
        self.critics.train()
        for step in range(steps):
            q = quads[step * self.config.batch:(step + 1) * self.config.batch][share]
            tf_prob = self.teacher_forcing.at(step + epoch * steps, steps * self.stages[stage - 1].epochs) \
                if self.teacher_forcing else 0.0
            teacher_forced = per_batch_teacher_forcing(tf_prob, rng)
            device = self.ctx.device
            averages = None if self.train_averages is None else self.train_averages[q].to(device)
            with self.autocast():
                terms, saved = self.generator(
                    self.train_x[q].to(device), self.train_subjects[q].to(device), self.train_actions[q].to(device),
                    self.train_fps[q].to(device), stage, teacher_forced, averages)
                total = L.weighted_total(terms, weights)
            self.optimizers["generator"].zero_grad(set_to_none=True)
            total.backward()
            self.optimizers["generator"].step()
            logged = {k: float(v.detach()) for k, v in terms.items()}
            logged["total"] = float(total.detach())
            logged.update(self._critic_step(saved))
            yield logged, 4 * len(q)

    def _critic_step(self, saved: dict[str, torch.Tensor]) -> dict[str, float]:
        with self.autocast():
            losses = self._critic_losses(saved)
        if not losses:
            return {}
        for name in self.critic_steps:
            self.optimizers[name].zero_grad(set_to_none=True)
        sum(losses.values()).backward()
        for name in self.critic_steps:
            self.optimizers[name].step()
        return {k: float(v.detach()) for k, v in losses.items()}

    def _critic_losses(self, saved: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The loss of every critic that learns in this stage, on the generator step's detached tensors."""
        losses: dict[str, torch.Tensor] = {}
        if "adversary" in self.critic_steps:
            losses["critic_adversary"] = L.adversary_loss(self.critic_steps["adversary"], saved["pooled_action"],
                                                          saved["subjects"])
        if "output_adversary" in self.critic_steps:  # stage 3, and stage 2 with warmed output critics
            n_cross = saved["out"].shape[0] * CROSS_PAIRS // len(DECODE_PAIRS)
            losses["critic_output_adversary"] = L.adversary_loss(
                self.critic_steps["output_adversary"], saved["out"][:n_cross], saved["source_subjects"][:n_cross])
        if "discriminator" in self.critic_steps:
            losses["critic_discriminator"] = L.discriminator_loss(
                self.critic_steps["discriminator"], saved["real"], saved["out"])
        if "output_heads" in self.critic_steps:
            losses["critic_output_classifier"] = L.adversary_loss(
                self.critic_steps["output_heads"], saved["real"], saved["real_actions"])
        return losses

    # ---------------------------------------------------------------- stage-1 cache

    def start_state(self) -> tuple[dict, str] | None:
        if self.stage1_cache_dir is None:
            return None
        state = stage1_cache.load(self.stage1_cache_dir, self._stage1_key, self.model.state_dict())
        if state is None:
            return None
        return state, f"stage 1 from {stage1_cache.entry_path(self.stage1_cache_dir, self._stage1_key)}"

    def stage_finished(self, stage_index: int, state: dict) -> None:
        if stage_index == 0 and self.stage1_cache_dir is not None:
            stage1_cache.store(self.stage1_cache_dir, self._stage1_key, state)

    # ---------------------------------------------------------------- state

    def trainer_state(self) -> dict:
        return {
            "model": self.model.state_dict(),
            "heads": self.heads.state_dict(),
            "critics": self.critics.state_dict(),
            "optimizers": {k: o.state_dict() for k, o in self.optimizers.items()},
        }

    def load_trainer_state(self, state: dict, optimizers: bool) -> None:
        self.model.load_state_dict(state["model"])
        self.heads.load_state_dict(state["heads"])
        self.critics.load_state_dict(state["critics"])
        if optimizers:
            for name, opt in self.optimizers.items():
                opt.load_state_dict(state["optimizers"][name])

    def save_release(self, metrics: dict) -> Path:
        path = Path(self.config.out) / "model.pt"
        training = {k: v for k, v in self.training_record().items() if k != "model_overrides"}
        return save_checkpoint(path, self.model, data=record_label_set(self.data.describe()),
                               metrics={**metrics, "history": self.history}, extra={"training": training})
