"""Fitting a motion anonymizer on a training split: what `dtmr fit-motion-model` runs.

Re-timing needs one template per action; k-same needs the templates (the action of an unlabelled source) and
the pool (every training clip with its action and subject label). Both come from the training half of a split
only, so that the people a release is made from are not the templates' or the pool's (under a cross-subject
split). Nothing is learned: the "fit" is a medoid search, n(n-1)/2 DTWs per action of n clips.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ...methods import KSAME, RETIME_NAIVE, names
from ...skeleton import Topology, get_topology
from ..recognizers import Recognizer
from .ksame import KSameMotion
from .retime import RETIME_METHODS, Retimer
from .templates import TemplateBank

MOTION_METHODS = names("fitted")


def fit_motion_model(method: str, topology: str | Topology, joints: np.ndarray, actions: np.ndarray,
                     subjects: np.ndarray, k: int = 2, timing: str = "source",
                     embedder: Recognizer | None = None, partners: str = "nearest") -> nn.Module:
    """The `method` anonymizer fitted on (N, 64, J, 3) normalized training clips and their (N,) action and
    subject labels; `k`, `timing`, `embedder` (an action recognizer for unlabelled sources) and `partners` are
    k-same's. ValueError when the clips do not allow it (an unlabelled clip, an action with fewer than k
    subjects)."""
    if embedder is not None and method != KSAME.name:
        raise ValueError(f"an action embedder serves k-same only, not {method}")
    if method not in MOTION_METHODS:
        raise ValueError(f"unknown motion anonymizer {method!r} (known: {', '.join(MOTION_METHODS)})")
    topo = get_topology(topology)
    bank = TemplateBank.fit(topo, joints, actions)
    if method in RETIME_METHODS:
        return Retimer(topo, bank, naive=method == RETIME_NAIVE.name)
    return KSameMotion(topo, bank, torch.as_tensor(np.asarray(joints, dtype=np.float32)),
                       torch.as_tensor(np.asarray(actions, dtype=np.int64)),
                       torch.as_tensor(np.asarray(subjects, dtype=np.int64)), k=k, timing=timing, embedder=embedder,
                       partners=partners)


def describe_motion_model(method: str, config: dict) -> str | None:
    """How tables tell two fitted files of one method apart ("k=3", "k=3, template timing"); None for the
    re-timing methods, whose name says everything."""
    if method != KSAME.name:
        return None
    timing = config.get("timing", "source")
    return (f"k={config.get('k')}" + ("" if timing == "source" else f", {timing} timing")
            + {"cluster": ", cluster partners", "cluster-mean": ", cluster means"}.get(config.get("partners"), "")
            + (", action embedding" if "embedder" in config else ""))
