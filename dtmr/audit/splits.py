"""The folds of an audit: which released clips train an attacker and which test it.

`--split NAME` gives one fold, the named split of `dtmr.data.splits` read from the key's labels. Otherwise
the folds are derived from the key:
- by repetition, else by view, when the key records that field for every clip with at least two distinct
  values and every subject has clips under two of them: leave-one-value-out folds, the values grouped into K
  folds (balanced by clip count) when there are more than K;
- else K folds stratified by subject (each subject's clips dealt round the folds in a seeded order).
Every clip is in the test part of exactly one derived fold and never in the training part of its own.
Inside a fold, clips are ordered by their source index, so the raw-trained attackers of two releases of
one data set see the same training clips in the same order (and are trained once; suite.py caches them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data.splits import split_indices
from ..errors import DtmrError

DEFAULT_FOLDS = 3
VALUE_FIELDS = ("repetition", "view")


@dataclass(frozen=True)
class Fold:
    train: np.ndarray  # release indices, ordered by source index
    test: np.ndarray
    values: tuple[int, ...] = ()  # the repetitions or views tested (value folds only)


@dataclass(frozen=True)
class AuditSplit:
    kind: str  # "repetition" | "view" | "folds" | "named"
    folds: list[Fold] = field(default_factory=list)
    name: str | None = None

    def describe(self) -> dict:
        out = {"kind": self.kind, "folds": len(self.folds), "name": self.name}
        if self.kind in VALUE_FIELDS:
            out["values"] = [list(f.values) for f in self.folds]
        return out


def _by_source(indices: np.ndarray, sources: np.ndarray) -> np.ndarray:
    indices = np.asarray(indices, dtype=np.int64)
    return indices[np.argsort(sources[indices], kind="stable")]


def group_values(values: np.ndarray, k: int) -> list[tuple[int, ...]]:
    """The distinct values in min(k, #values) groups of about equal clip counts (largest first, each to the
    group with fewest clips so far; ties to the lower value / group), each group sorted."""
    distinct, counts = np.unique(values, return_counts=True)
    if len(distinct) <= k:
        return [(int(v),) for v in distinct]
    groups: list[list[int]] = [[] for _ in range(k)]
    sizes = [0] * k
    for i in sorted(range(len(distinct)), key=lambda i: (-counts[i], distinct[i])):
        g = min(range(k), key=lambda g: (sizes[g], g))
        groups[g].append(int(distinct[i]))
        sizes[g] += int(counts[i])
    return sorted(tuple(sorted(g)) for g in groups)


def _value_split(name: str, values: np.ndarray, subjects: np.ndarray, sources: np.ndarray,
                 k: int) -> AuditSplit | None:
    """Leave-one-value(-group)-out folds on `values`, or None when the field cannot carry an audit."""
    if (values < 0).any() or np.unique(values).size < 2:
        return None
    groups = group_values(values, k)
    group_of = {v: g for g, vals in enumerate(groups) for v in vals}
    fold_of = np.array([group_of[int(v)] for v in values])
    for s in np.unique(subjects):  # a subject seen under one value only is never in its own training part
        if np.unique(fold_of[subjects == s]).size < 2:
            return None
    everything = np.arange(len(values))
    folds = [Fold(_by_source(everything[fold_of != g], sources), _by_source(everything[fold_of == g], sources),
                  groups[g]) for g in range(len(groups))]
    return AuditSplit(name, folds)


def stratified_folds(subjects: np.ndarray, sources: np.ndarray, k: int, seed: int) -> AuditSplit:
    """K folds with each subject's clips spread evenly over them; DtmrError when a subject has < k clips."""
    if k < 2:
        raise DtmrError(f"an audit needs at least 2 folds, got {k}")
    distinct, counts = np.unique(subjects, return_counts=True)
    few = counts < k
    if few.any():
        s, n = int(distinct[few][0]), int(counts[few][0])
        raise DtmrError(f"subject {s} has {n} released clip{'s' if n != 1 else ''}, too few for a {k}-fold audit: "
                        f"it needs at least {k} clips of every subject"
                        + (f" (or use --folds {max(n, 2)})" if n >= 2 else ""))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xA0D]))
    fold_of = np.empty(len(subjects), dtype=np.int64)
    offset = 0
    for s in distinct:
        members = _by_source(np.flatnonzero(subjects == s), sources)
        members = members[rng.permutation(len(members))]
        fold_of[members] = (np.arange(len(members)) + offset) % k
        offset = (offset + len(members)) % k  # the next subject starts where this one stopped: balanced folds
    everything = np.arange(len(subjects))
    folds = [Fold(_by_source(everything[fold_of != g], sources), _by_source(everything[fold_of == g], sources))
             for g in range(k)]
    return AuditSplit("folds", folds)


def audit_split(subjects: np.ndarray, sources: np.ndarray, columns: dict[str, np.ndarray], *,
                split: str | None = None, folds: int | None = None, seed: int = 0) -> AuditSplit:
    """The folds of an audit of clips with these subjects and source indices (release order); `columns`:
    the key's "action", "view" and "repetition" (-1 unknown)."""
    subjects = np.asarray(subjects, dtype=np.int64)
    sources = np.asarray(sources, dtype=np.int64)
    if (subjects < 0).any():
        raise DtmrError(f"the key gives no subject for {int((subjects < 0).sum())} released clips; "
                        "an audit needs every clip's subject")
    if np.unique(subjects).size < 2:
        raise DtmrError("the release holds clips of one subject only; re-identification needs at least two")
    if split is not None:
        metadata = {"subject": subjects, **{k: np.asarray(v, dtype=np.int64) for k, v in columns.items()}}
        train, test = split_indices(split, metadata)
        return AuditSplit("named", [Fold(_by_source(train, sources), _by_source(test, sources))], split)
    k = DEFAULT_FOLDS if folds is None else int(folds)
    if k < 2:
        raise DtmrError(f"an audit needs at least 2 folds, got --folds {k}")
    for name in VALUE_FIELDS:
        if name in columns:
            found = _value_split(name, np.asarray(columns[name], dtype=np.int64), subjects, sources, k)
            if found is not None:
                return found
    return stratified_folds(subjects, sources, k, seed)
