"""The stage × epoch × step loop shared by every trainer: progress events, atomic per-epoch checkpoints and an
exact `--resume`.

A subclass says what its stages are and how one epoch runs (`epoch_steps` yields the losses of each step);
this class emits the events, averages the logged numbers over processes, and after every epoch writes
`train_state.pt` (everything needed to continue: weights, optimizer states, RNG state, position) and the
release checkpoint, both atomically. Everything random in an epoch derives from (seed, stage, epoch) or from
the torch RNG state saved with the epoch, so a run killed at any moment and resumed from its last finished
epoch ends bit-for-bit where an uninterrupted run ends (same machine, same thread count).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from ..errors import CheckpointError, DtmrError
from ..io.atomic import atomic_write
from ..models.checkpoints.header import load_untrusted
from .distributed import DistributedContext
from .progress import EtaEstimator, EventWriter

STATE_FILE = "train_state.pt"
STATE_FORMAT = "dtmr-train-state"
#: at most this many "step" events per second (the epoch events carry every epoch's means anyway)
STEP_EVENTS_PER_S = 4.0


def epoch_rng(seed: int, stage: int, epoch: int) -> np.random.Generator:
    """The NumPy generator of one epoch: independent of everything that ran before it."""
    return np.random.default_rng(np.random.SeedSequence([seed, stage, epoch]))


class EpochTrainer:
    """Base class; subclasses implement the methods marked "subclass"."""

    def __init__(self, out_dir: str | Path, ctx: DistributedContext, seed: int, events: EventWriter | None,
                 resume: bool = False):
        self.out_dir = Path(out_dir)
        self.ctx = ctx
        self.seed = int(seed)
        self.events = events if ctx.is_main else None
        self.resume = resume
        self.history: list[dict] = []  # per-epoch mean losses
        self._start_message: str | None = None  # where a state from `start_state` came from
        #: the file name of the checkpoint whose weights the run started from (`dtmr train --init`), or None
        self.initialized_from: str | None = None

    # ---------------------------------------------------------------- subclass

    def stage_plan(self) -> list[tuple[int, str, int]]:
        """(stage number, name, epochs) in order."""
        raise NotImplementedError

    def steps_per_epoch(self, stage: int) -> int:
        raise NotImplementedError

    def start_stage(self, stage: int) -> None:
        """Freeze/unfreeze parts and build the stage's optimizers."""
        raise NotImplementedError

    def epoch_steps(self, stage: int, epoch: int) -> Iterator[tuple[dict[str, float], int]]:
        """Run one epoch; yield (losses of the step, samples it processed on this process)."""
        raise NotImplementedError

    def trainer_state(self) -> dict:
        """Weights and optimizer states (plain containers of tensors and numbers)."""
        raise NotImplementedError

    def load_trainer_state(self, state: dict, optimizers: bool) -> None:
        """Restore the weights, and the optimizer states when `optimizers` (resuming inside a stage; a
        stage that starts anew starts with fresh optimizers, as in an uninterrupted run)."""
        raise NotImplementedError

    def save_release(self, metrics: dict) -> Path:
        """Write the usable checkpoint (model only) and return its path."""
        raise NotImplementedError

    def run_config(self) -> dict:
        """The settings a resumed run must share with the interrupted one."""
        raise NotImplementedError

    def training_record(self) -> dict:
        """What the released checkpoint says of its training: `run_config()`, and `init` (the starting
        checkpoint's file name, not its path) for a run started with `--init`."""
        record = self.run_config()
        if self.initialized_from is not None:
            record["init"] = self.initialized_from
        return record

    # ---------------------------------------------------------------- loop

    @property
    def state_path(self) -> Path:
        return self.out_dir / STATE_FILE

    def _emit(self, kind: str, **fields) -> None:
        if self.events is not None:
            self.events.emit(kind, **fields)

    def start_state(self) -> tuple[dict, str] | None:
        """Subclass, optional: a training state (the format `_save_state` writes) to start from instead of
        from scratch, and the message saying where it comes from; read when not resuming."""
        return None

    def stage_finished(self, stage_index: int, state: dict) -> None:
        """Subclass, optional: called on the main process once the last epoch of a stage is saved, with the
        training state just written."""

    def _load_state(self) -> tuple[int, int] | None:
        if not self.resume:
            start = self.start_state()
            if start is None:
                return None
            self._resumed_state, self._start_message = start
            self.history = list(self._resumed_state["history"])
            return int(self._resumed_state["stage_index"]), int(self._resumed_state["epoch"])
        if not self.state_path.is_file():
            raise DtmrError(f"{self.state_path}: nothing to resume (no training state in {self.out_dir})")
        state = load_untrusted(self.state_path, "cpu", mmap=False, what="training state")
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise CheckpointError(self.state_path, "not a DTMR training state")
        if state["config"] != self.run_config():
            diff = sorted(k for k in set(state["config"]) | set(self.run_config())
                          if state["config"].get(k) != self.run_config().get(k))
            raise DtmrError(f"{self.state_path}: the run was started with other settings ({', '.join(diff)}); "
                            "resume with the same arguments or use a new --out folder")
        self._resumed_state = state
        self.history = list(state["history"])
        return int(state["stage_index"]), int(state["epoch"])

    def _save_state(self, stage_index: int, next_epoch: int) -> dict:
        state = {
            "format": STATE_FORMAT,
            "config": self.run_config(),
            "stage_index": stage_index,
            "epoch": next_epoch,
            "history": self.history,
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "trainer": self.trainer_state(),
        }
        with atomic_write(self.state_path) as tmp:
            torch.save(state, tmp)
        return state

    def _restore_finished(self, stage: int) -> Path | None:
        """`--resume` of a run whose every epoch is done: restore the last state and write the release
        again from it, with the metrics the last epoch gave it (every tensor bitwise equal to the release
        that epoch wrote; the file's bytes differ only in the zip's record names, from the temporary name).

        Also repairs a run killed between its last state save and its release save."""
        self.start_stage(stage)
        self.load_trainer_state(self._resumed_state["trainer"], optimizers=True)
        if not self.ctx.is_main:
            return None
        last = dict(self.history[-1])
        metrics = {"stage": last.pop("stage"), "epoch": last.pop("epoch"), "losses": last}
        return self.save_release(metrics)

    def run(self) -> Path:
        """Train every stage; returns the release checkpoint's path."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        plan = self.stage_plan()
        position = self._load_state()
        start_stage, start_epoch = position or (0, 0)
        total_steps = sum(e * self.steps_per_epoch(s) for s, _, e in plan)
        done_steps = sum(e * self.steps_per_epoch(s) for s, _, e in plan[:start_stage])
        if start_stage < len(plan):
            done_steps += start_epoch * self.steps_per_epoch(plan[start_stage][0])
        resumed_at = done_steps
        eta = EtaEstimator(max(total_steps - resumed_at, 1))
        message = "starting"
        if position:
            message = self._start_message or f"resuming at stage {start_stage + 1}, epoch {start_epoch + 1}"
        self._emit("start", message=message, steps=total_steps)
        release = None
        restore = position is not None
        for index in range(start_stage, len(plan)):
            stage, name, epochs = plan[index]
            first_epoch = start_epoch if index == start_stage else 0
            if first_epoch >= epochs:
                continue
            self.start_stage(stage)
            if restore:
                restore = False
                self.load_trainer_state(self._resumed_state["trainer"], optimizers=first_epoch > 0)
                torch.set_rng_state(self._resumed_state["torch_rng"])
                if torch.cuda.is_available() and self._resumed_state["cuda_rng"]:
                    torch.cuda.set_rng_state_all(self._resumed_state["cuda_rng"])
            self._emit("stage", stage=stage, epochs=epochs, message=name)
            steps = self.steps_per_epoch(stage)
            for epoch in range(first_epoch, epochs):
                sums: dict[str, float] = {}
                counted = 0
                last_event = 0.0
                started = time.monotonic()
                samples = 0
                for step, (losses, n) in enumerate(self.epoch_steps(stage, epoch), start=1):
                    losses = self.ctx.mean(losses)
                    samples += n * self.ctx.world_size
                    for k, v in losses.items():
                        sums[k] = sums.get(k, 0.0) + v
                    counted += 1
                    done_steps += 1
                    remaining = eta.update(done_steps - resumed_at)
                    now = time.monotonic()
                    if now - last_event >= 1.0 / STEP_EVENTS_PER_S or step == steps:
                        last_event = now
                        self._emit("step", stage=stage, epoch=epoch + 1, epochs=epochs, step=step, steps=steps,
                                   losses=losses, samples_per_s=samples / max(now - started, 1e-9), eta_s=remaining)
                means = {k: v / max(counted, 1) for k, v in sums.items()}
                self.history.append({"stage": stage, "epoch": epoch + 1, **means})
                self._emit("epoch", stage=stage, epoch=epoch + 1, epochs=epochs, step=steps, steps=steps,
                           losses=means, samples_per_s=samples / max(time.monotonic() - started, 1e-9))
                if self.ctx.is_main:
                    state = self._save_state(index, epoch + 1)
                    release = self.save_release({"stage": stage, "epoch": epoch + 1, "losses": means})
                    self._emit("checkpoint", stage=stage, epoch=epoch + 1, epochs=epochs, message=str(release))
                    if epoch + 1 == epochs:
                        self.stage_finished(index, state)
                self.ctx.barrier()
        if release is None and restore:
            release = self._restore_finished(plan[start_stage][0])
        elif release is None and self.ctx.is_main:
            release = self.save_release({"history": self.history})
        self._emit("done", message=str(release))
        return release
