"""The DMR/PMR training schedule as data, their optimizers, and one training step (SPEC_NOTES §2.4–2.5).

The trainer drives the epochs; this module says, per stage, whether batches are quadruplets, which loss
terms the autoencoder gets, and which parameters are updated. Stage flags keep the public code's names:

* `train_autoencoder`: step the encoders and decoder on `generator_losses`;
* `emb_adv` / `discrim_adv`: the autoencoder's loss includes the embedding-classifier terms / Q's term;
* `train_emb_adv` / `train_discrim_adv`: step the four embedding classifiers / Q on `critic_losses`,
  `critic_updates` times per batch (3 on unpaired batches, 1 on quadruplets, as in the public code).

PMR's six stages total 295 epochs; the project page groups them into four (5+20 | 20+50 | 100 | 100,
`paper_stage`). DMR is the same pipeline without critics, so the two critic-only stages drop out (225
epochs).
"""

from __future__ import annotations

import torch

from ... import methods
from .pmr import CRITIC_ROLES, PMR, RetargetingAutoencoder
from .pmr_losses import LossWeights, QuadrupletBatch, UnpairedBatch, critic_losses, generator_losses

PMR_SCHEDULE: tuple[dict, ...] = (
    dict(name="paired warm-up", paper_stage=1, epochs=5, paired=True, train_autoencoder=True,
         emb_adv=False, discrim_adv=False, train_emb_adv=False, train_discrim_adv=False, critic_updates=1),
    dict(name="unpaired reconstruction", paper_stage=1, epochs=20, paired=False, train_autoencoder=True,
         emb_adv=False, discrim_adv=False, train_emb_adv=False, train_discrim_adv=False, critic_updates=3),
    dict(name="paired critics", paper_stage=2, epochs=20, paired=True, train_autoencoder=False,
         emb_adv=False, discrim_adv=False, train_emb_adv=True, train_discrim_adv=True, critic_updates=1),
    dict(name="unpaired critics", paper_stage=2, epochs=50, paired=False, train_autoencoder=False,
         emb_adv=False, discrim_adv=False, train_emb_adv=True, train_discrim_adv=True, critic_updates=3),
    dict(name="unpaired adversarial", paper_stage=3, epochs=100, paired=False, train_autoencoder=True,
         emb_adv=True, discrim_adv=True, train_emb_adv=True, train_discrim_adv=True, critic_updates=3),
    dict(name="paired adversarial", paper_stage=4, epochs=100, paired=True, train_autoencoder=True,
         emb_adv=True, discrim_adv=True, train_emb_adv=True, train_discrim_adv=True, critic_updates=1),
)

DMR_SCHEDULE: tuple[dict, ...] = tuple(
    dict(stage, emb_adv=False, discrim_adv=False, train_emb_adv=False, train_discrim_adv=False)
    for stage in PMR_SCHEDULE if stage["train_autoencoder"]
)

#: The public code's optimizer settings: AdamW (default weight decay 0.01), lr 1e-5 for both the
#: autoencoder and the critics, batch size 32, no scheduler.
DEFAULT_LR = 1e-5
DEFAULT_CRITIC_LR = 1e-5
DEFAULT_WEIGHT_DECAY = 0.01
DEFAULT_BATCH_SIZE = 32


def schedule_for(method: str) -> list[dict]:
    """A fresh copy of the stage list of PMR or DMR."""
    schedules = {methods.PMR.name: PMR_SCHEDULE, methods.DMR.name: DMR_SCHEDULE}
    if method not in schedules:
        raise ValueError(f"no DMR/PMR schedule for method {method!r} (known: {', '.join(schedules)})")
    return [dict(stage) for stage in schedules[method]]


def autoencoder_parameters(model: RetargetingAutoencoder) -> list[torch.nn.Parameter]:
    return [p for part in (model.dynamic_encoder, model.static_encoder, model.decoder) for p in part.parameters()]


def build_optimizers(model: RetargetingAutoencoder, lr: float = DEFAULT_LR, critic_lr: float = DEFAULT_CRITIC_LR,
                     weight_decay: float = DEFAULT_WEIGHT_DECAY) -> dict[str, torch.optim.Optimizer]:
    """"autoencoder" plus, for PMR, one optimizer per critic (keyed by module name, Q = "discriminator")."""
    optimizers = {"autoencoder": torch.optim.AdamW(autoencoder_parameters(model), lr=lr, weight_decay=weight_decay)}
    if isinstance(model, PMR):
        for name in (*CRITIC_ROLES, "discriminator"):
            optimizers[name] = torch.optim.AdamW(getattr(model, name).parameters(), lr=critic_lr,
                                                 weight_decay=weight_decay)
    return optimizers


def training_step(model: RetargetingAutoencoder, optimizers: dict[str, torch.optim.Optimizer],
                  batch: UnpairedBatch | QuadrupletBatch, stage: dict, weights: LossWeights = LossWeights(),
                  faithful: bool = False) -> dict[str, float]:
    """One batch of a stage: the autoencoder step, then the critic steps. Returns the logged losses."""
    if stage["paired"] != isinstance(batch, QuadrupletBatch):
        kind = "QuadrupletBatch" if stage["paired"] else "UnpairedBatch"
        raise ValueError(f"stage {stage['name']!r} expects a {kind}, got {type(batch).__name__}")
    model.train()
    logged: dict[str, float] = {}
    if stage["train_autoencoder"]:
        terms = generator_losses(model, batch, adversarial=stage["emb_adv"], quality=stage["discrim_adv"],
                                 weights=weights, faithful=faithful)
        optimizers["autoencoder"].zero_grad(set_to_none=True)
        terms["total"].backward()
        optimizers["autoencoder"].step()
        logged.update({k: float(v.detach()) for k, v in terms.items()})
    if stage["train_emb_adv"] or stage["train_discrim_adv"]:
        for _ in range(stage["critic_updates"]):
            losses = critic_losses(model, batch, classifiers=stage["train_emb_adv"],
                                   quality=stage["train_discrim_adv"], faithful=faithful)
            for name in losses:
                optimizers[name].zero_grad(set_to_none=True)
            sum(losses.values()).backward()
            for name in losses:
                optimizers[name].step()
        logged.update({f"critic/{k}": float(v.detach()) for k, v in losses.items()})
    return logged
