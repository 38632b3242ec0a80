"""`dtmr evaluate`'s work split into independent cells, run in this process or over `--workers` processes.

A cell is one method and the seeds that share its retrained models: every seed alone when nothing is
retrained or `--retrain-per-seed` retrains for each, all of the method's seeds otherwise (they are tested
with the models trained on the first seed's references; splitting them would train those models twice).
A cell's numbers depend only on its method and seeds (the draws, the segment sampling and every model's
initial weights are seeded from them, and `seed_cell` seeds the global generators from the key), so the
rows are the same whichever process computes a cell and in whatever order: `--workers N` writes the
results.json of a one-process run (tests/eval/test_parallel_evaluate.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from ..models.recognizers import TEST_SAMPLES
from ..parallel import Workers, run_cells, seed_cell
from ..train.data import TrainingData
from .methods import EvalMethod
from .protocol import EvalSettings, SeedDraw, draw_seed, method_row, seed_values
from .row import EvaluationRow

Cell = tuple[int, tuple[int, ...]]  # (index of the method, its seeds)


@dataclass
class EvalContext:
    """What every cell reads: built once per process (`worker_context` in a worker)."""

    data: TrainingData
    methods: list[EvalMethod]
    evaluators: tuple
    settings: EvalSettings
    device: str
    _draws: dict[int, SeedDraw] = field(default_factory=dict)
    _raw_embeddings: dict[int, np.ndarray] = field(default_factory=dict)

    def draw(self, seed: int) -> SeedDraw:
        if seed not in self._draws:
            self._draws[seed] = draw_seed(self.data, seed)
        return self._draws[seed]

    def raw_embedding(self, seed: int) -> np.ndarray:
        """The subject evaluator's embeddings of the raw test clips for `seed` (shared by the methods)."""
        if seed not in self._raw_embeddings:
            self._raw_embeddings[seed] = self.evaluators[1].embed(self.data.test.clips, TEST_SAMPLES, seed)
        return self._raw_embeddings[seed]


@dataclass(frozen=True)
class EvalJob:
    """How a worker process rebuilds the context from files: the data, the evaluators' folder (complete
    before the workers start) and each method as (name, checkpoint or None), in the run's order."""

    data: str
    split: str
    recognizers: str
    methods: tuple[tuple[str, str | None], ...]
    settings: EvalSettings


def cells(methods: Sequence[EvalMethod], settings: EvalSettings) -> list[Cell]:
    seeds = tuple(range(settings.seeds))
    if settings.retrain and not settings.retrain_per_seed:
        return [(i, seeds) for i in range(len(methods))]
    return [(i, (s,)) for i in range(len(methods)) for s in seeds]


def describe(labels: Sequence[str], cell: Cell) -> str:
    index, seeds = cell
    return f"{labels[index]}, seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"


def evaluate_cell(context: EvalContext, cell: Cell, log: Callable[[str], None]) -> list[dict]:
    """The per-seed values of one cell."""
    index, seeds = cell
    method = context.methods[index]
    seed_cell("evaluate", method.method, method.beta, method.variant, seeds)
    return seed_values(method, context.data, [context.draw(s) for s in seeds], context.evaluators,
                       context.settings, log, {s: context.raw_embedding(s) for s in seeds}, context.device)


def worker_context(job: EvalJob, device: str) -> EvalContext:
    from ..train.data import load_training_data
    from .methods import checkpoint_method
    from .protocol import ensure_evaluators

    data = load_training_data(job.data, job.split)
    evaluators = ensure_evaluators(data, Path(job.recognizers), job.settings.recognizer_epochs, lambda m: None,
                                   device)
    methods = [EvalMethod(name) if path is None else checkpoint_method(path, device) for name, path in job.methods]
    return EvalContext(data, methods, evaluators, job.settings, device)


def evaluate(data: TrainingData, methods: Sequence[EvalMethod], evaluators, settings: EvalSettings,
             log: Callable[[str], None] = print, device: str = "cpu", workers: Workers | None = None,
             job: EvalJob | None = None) -> list[EvaluationRow]:
    """One row per method (`protocol.method_row`), the cells computed here or by `workers` (which rebuild
    the context from `job`)."""
    keys = cells(methods, settings)
    if workers is None or not workers.parallel:
        context = EvalContext(data, list(methods), evaluators, settings, str(device))
        values = {key: evaluate_cell(context, key, log) for key in keys}
    else:
        log(f"{len(keys)} cells over {workers.count} worker processes ({workers.threads} torch thread(s) each)")
        values = run_cells(keys, evaluate_cell, worker_context, (job,), workers=workers.count,
                           devices=workers.devices, describe=partial(describe, [m.label for m in methods]),
                           threads=workers.threads, log=log)
    return [method_row(m, [v for key in keys if key[0] == i for v in values[key]]) for i, m in enumerate(methods)]
