"""Training of the lifter on 3-D clips projected through random cameras (`dtmr.lift.data`).

Loss: MPJPE (mean joint distance, metres) of the centre frame. AdamW, the learning rate decayed by a
cosine to 1 % over the steps. Batches are drawn afresh each step (new cameras, noise and dropped joints),
so there are no epochs and the model never sees the same 2-D twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from .data import Augmentation, WindowSampler
from .model import LifterConfig, LifterNet


@dataclass(frozen=True)
class TrainSettings:
    steps: int = 6000
    batch: int = 256
    lr: float = 2e-3
    weight_decay: float = 1e-4
    seed: int = 0


def mpjpe_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(pred - target, dim=-1).mean()


def train_lifter(clips: list[np.ndarray], config: LifterConfig | None = None,
                 settings: TrainSettings | None = None, *, augmentation: Augmentation | None = None,
                 log: Callable[[int, float, float], None] | None = None, log_every: int = 200
                 ) -> tuple[LifterNet, list[float]]:
    """A lifter trained on `clips` ((T, 17, 3) COCO-17-like world joints each); returns it (eval mode) and
    the mean training loss (m) of each `log_every` steps. `log(step, loss, seconds)` reports progress."""
    config, settings = config or LifterConfig(), settings or TrainSettings()
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    sampler = WindowSampler(clips, config.window, augmentation or Augmentation())
    net = LifterNet(config)
    opt = torch.optim.AdamW(net.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.01 + 0.99 * 0.5 * (1 + np.cos(np.pi * min(s / settings.steps, 1.0))))
    history, running, started = [], [], time.monotonic()
    net.train()
    for step in range(1, settings.steps + 1):
        batch = sampler.sample(settings.batch, rng)
        loss = mpjpe_loss(net(torch.from_numpy(batch.features)), torch.from_numpy(batch.targets))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        running.append(loss.item())
        if step % log_every == 0 or step == settings.steps:
            history.append(float(np.mean(running)))
            running = []
            if log is not None:
                log(step, history[-1], time.monotonic() - started)
    return net.eval(), history
