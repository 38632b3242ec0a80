"""`EvaluationRow`: one row of `dtmr evaluate`'s results.json (one method over the seeds), typed and checked
once, so that the tables, `--append`, the training summaries and the scripts read fields rather than parse the
dict again (docs/evaluation.md, "results.json").

Version 2 records the training setting and the training seed as fields of their own. Rows of version 1
(written before 2026-12, the results.json files under results/) named the training seed only at the end of
their label; `_setting_of_label` reads them back from there, the one place that parses a label.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..errors import InputError
from ..models.config import TRAINING_SEED

#: the version this code writes; 1: rows without `version`, `setting` and `training_seed`
ROW_VERSION = 2
#: a row's keys that are not metrics
_FIELDS = ("version", "method", "beta", "label", "checkpoint", "setting", "training_seed", "seeds")
#: the label ending of a training seed in rows of version 1 (`dtmr.models.config.with_training_seed`)
_SEED_IN_LABEL = re.compile(f", {TRAINING_SEED} (-?\\d+)$")


class Summary(NamedTuple):
    """A metric over the seeds: mean and sample std (`dtmr.eval.metrics.summarize`)."""

    mean: float
    std: float


@dataclass(frozen=True)
class EvaluationRow:
    #: the method (`dtmr.methods` name)
    method: str
    #: DisentangledTMR's β, None for the other methods
    beta: float | None
    #: the table's name of the method: "DisentangledTMR β=0.2 small, training seed 1"
    label: str
    #: the evaluated checkpoint, None for a parameter-free method
    checkpoint: str | None
    #: the label without the training seed: what every training of one setting shares
    setting: str
    #: the checkpoint's `dtmr train --seed`; None for a parameter-free method, a checkpoint that records none, or
    #: a version-1 row whose label names none
    training_seed: int | None
    #: metric name -> mean ± std over the seeds, in the row's order (accuracies in percent)
    metrics: Mapping[str, Summary]
    #: every seed's values, metric name -> value (NaN where undefined)
    seeds: tuple[Mapping[str, float], ...] = ()
    #: the version it was read from (`ROW_VERSION` when made by this code)
    version: int = field(default=ROW_VERSION, compare=False)

    def to_json(self) -> dict:
        """results.json's form: the identity keys, each metric as {"mean", "std"}, the per-seed values under
        "seeds"; always of `ROW_VERSION`."""
        out = {"version": ROW_VERSION, "method": self.method, "beta": self.beta, "label": self.label,
               "checkpoint": self.checkpoint, "setting": self.setting, "training_seed": self.training_seed}
        out.update({name: {"mean": s.mean, "std": s.std} for name, s in self.metrics.items()})
        out["seeds"] = [dict(values) for values in self.seeds]
        return out

    @classmethod
    def from_json(cls, data: object, where: str | Path = "results.json") -> EvaluationRow:
        """A row of results.json (any version up to `ROW_VERSION`); `InputError` naming `where` when an entry
        is missing or of a wrong type."""
        if not isinstance(data, dict):
            raise InputError(where, f"a row is a JSON object, not {type(data).__name__}")
        version = data.get("version", 1)
        if not _is_int(version) or not 1 <= version <= ROW_VERSION:
            raise InputError(where, f"row version {version!r} (this dtmr reads 1 to {ROW_VERSION}: written by a "
                                    "newer one?)")
        method, label = data.get("method"), data.get("label")
        if not isinstance(method, str) or not isinstance(label, str):
            raise InputError(where, "a row without a method and a label")
        beta, checkpoint = data.get("beta"), data.get("checkpoint")
        if not (beta is None or _is_number(beta)) or not (checkpoint is None or isinstance(checkpoint, str)):
            raise InputError(where, f"{label}: beta must be a number or null, checkpoint a text or null")
        if version == 1:
            setting, seed = _setting_of_label(label)
        else:
            setting, seed = data.get("setting"), data.get("training_seed")
            if not isinstance(setting, str) or not (seed is None or _is_int(seed)):
                raise InputError(where, f"{label}: setting must be a text, training_seed an integer or null")
        metrics = {}
        for name, value in data.items():
            if name in _FIELDS:
                continue
            if not (isinstance(value, dict) and _is_number(value.get("mean")) and _is_number(value.get("std"))):
                raise InputError(where, f"{label}: metric {name!r} is not a {{\"mean\", \"std\"}} pair of numbers")
            metrics[name] = Summary(float(value["mean"]), float(value["std"]))
        seeds = data.get("seeds", [])
        if not isinstance(seeds, list) or not all(isinstance(s, dict) and all(map(_is_number, s.values()))
                                                  for s in seeds):
            raise InputError(where, f"{label}: seeds must be a list of {{metric: number}} objects")
        return cls(method, None if beta is None else float(beta), label, checkpoint, setting, seed, metrics,
                   tuple({str(k): float(v) for k, v in s.items()} for s in seeds), version)


def read_rows(path: str | Path) -> list[EvaluationRow]:
    """The rows of a results.json file; `InputError` naming it when it cannot be read, is not JSON, or is not
    a list of rows."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(path, f"cannot read the results ({exc.strerror or exc})") from None
    except ValueError as exc:  # a JSON error, or bytes that are not UTF-8
        raise InputError(path, f"cannot read the results: not JSON ({exc})") from None
    if not isinstance(data, list):
        raise InputError(path, f"not the rows of a `dtmr evaluate` run (a JSON list, not {type(data).__name__})")
    rows = []
    for index, item in enumerate(data, 1):
        try:
            rows.append(EvaluationRow.from_json(item, path))
        except InputError as exc:
            raise InputError(path, f"not the rows of a `dtmr evaluate` run: row {index}: {exc.reason}") from None
    return rows


def rows_json(rows: Sequence[EvaluationRow]) -> str:
    """results.json's text of `rows`."""
    return json.dumps([row.to_json() for row in rows], indent=1) + "\n"


def _setting_of_label(label: str) -> tuple[str, int | None]:
    """(setting, training seed) of a version-1 row, read from its label: the label without a trailing
    ", training seed N", and N (None when the label names no seed)."""
    match = _SEED_IN_LABEL.search(label)
    return (label, None) if match is None else (label[:match.start()], int(match.group(1)))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)  # NaN included: undefined
