"""The release methods, declared once: the name commands, checkpoints and result files use, the name tables and
model lists show, the order of tables, the kind of method, what it needs, and the setting the project recommends.

Everything that lists, orders, names or dispatches on a method (the CLI's choices, `dtmr evaluate`'s tables,
the audit tables, checkpoint headers, the Studio's lists, the docs' tables) reads this module. It imports
nothing heavy, so that building a command-line parser or the Studio's lists never loads torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .errors import DtmrError

#: parameter-free: a function of the clip (and a reference); fitted: a file fitted on a training split in
#: seconds (`dtmr fit-motion-model`); trained: a network (`dtmr train`)
Kind = Literal["parameter-free", "fitted", "trained"]


@dataclass(frozen=True)
class Method:
    name: str
    display: str
    kind: Kind
    #: the body comes from a reference clip (`dtmr anonymize --references`, a reference per source)
    needs_references: bool
    summary: str
    #: the settings the project's audits and the paper recommend (docs/RESULTS.md), e.g. {"beta": 0.2}
    recommended: dict = field(default_factory=dict)

    @property
    def needs_model(self) -> bool:
        """A file (a fitted motion model or a trained checkpoint) is needed to run it."""
        return self.kind != "parameter-free"

    @property
    def order(self) -> int:
        return METHODS.index(self)


RAW = Method("raw", "raw", "parameter-free", False,
             "the clips themselves (the ceiling an audit reads the others against; never for publication)")
NOISE = Method("noise", "noise", "parameter-free", False, "Gaussian noise on every joint")
NAIVE = Method("naive", "naive retarget", "parameter-free", True,
               "the source's joint rotations on the reference's bone lengths")
RETIME = Method("retime", "re-timing", "fitted", False, "the source's poses on its action's canonical timing")
RETIME_NAIVE = Method("retime-naive", "re-timing + naive", "fitted", True,
                      "re-timing, then the naive retarget onto the reference")
KSAME = Method("ksame", "k-same", "fitted", True,
               "the time-aligned mean of the source and k - 1 other people doing the action, on the reference's body",
               recommended={"k": 3})
DMR = Method("dmr", "DMR", "trained", True, "the deep motion retargeting baseline (ICCV 2025), reimplemented from its code")
PMR = Method("pmr", "PMR", "trained", True, "privacy-centric deep motion retargeting (ICCV 2025), reimplemented from its code")
DTMR = Method("dtmr", "DisentangledTMR", "trained", True,
              "the ECCV 2026 method: action and identity encoders, a factorized decoder, a residual blended by beta",
              recommended={"beta": 0.2})

#: every method, in the order tables list them
METHODS: tuple[Method, ...] = (RAW, NOISE, NAIVE, RETIME, RETIME_NAIVE, KSAME, DMR, PMR, DTMR)
_BY_NAME = {m.name: m for m in METHODS}
#: names older files spell differently
_ALIASES = {"disentangledtmr": DTMR}


def method(name: str) -> Method:
    """The method called `name` (as files and commands spell it); DtmrError naming the known ones otherwise."""
    found = _BY_NAME.get(name) or _ALIASES.get(name)
    if found is None:
        raise DtmrError(f"unknown method {name!r} (known: {', '.join(_BY_NAME)})")
    return found


def is_method(name: str) -> bool:
    return name in _BY_NAME or name in _ALIASES


def names(*kinds: Kind) -> tuple[str, ...]:
    """The methods' names in table order, of the given kinds (all without)."""
    return tuple(m.name for m in METHODS if not kinds or m.kind in kinds)


def display_name(name: str) -> str:
    return method(name).display


def order(name: str) -> int:
    return method(name).order


# ---------------------------------------------------------------------------------------------- residuals

@dataclass(frozen=True)
class Residual:
    """What a DisentangledTMR release blends the decoder's output with: β·D + (1 − β)·residual(src, ref)
    (`DTMRConfig.residual`). The model builds the parts it names, the anonymizer blends with it, the trainer
    fits what it needs on the training split; all three read these flags rather than the name."""

    name: str
    summary: str
    #: the source's motion on the reference's bone lengths (the naive retarget) rather than on its own body
    on_reference: bool = False
    #: warped onto its action template's timing (dtmr/models/motion/retime.py): no source frame is kept
    retimed: bool = False
    #: the time-aligned mean of the source and k − 1 training clips of other people (dtmr/models/motion/ksame.py)
    averaged: bool = False

    @property
    def needs_templates(self) -> bool:
        """The model holds the action templates of its training split."""
        return self.retimed or self.averaged

    @property
    def needs_pool(self) -> bool:
        """The model holds a pool of training clips with their action and subject labels."""
        return self.averaged

    @property
    def computed_by_model(self) -> bool:
        """Only the model can compute it (`DisentangledTMR.residual`); the others are functions of the clips."""
        return self.needs_templates

    @property
    def labels(self) -> tuple[str, ...]:
        """The data-set labels it is told: k-same excludes the source's subject and takes its action's
        partners; re-timing takes the action's template."""
        if self.averaged:
            return ("actions", "subjects")
        return ("actions",) if self.retimed else ()


SOURCE_RESIDUAL = Residual("source", "the source itself (the paper)")
NAIVE_RESIDUAL = Residual("naive", "the source on the reference's bone lengths", on_reference=True)
RETIMED_RESIDUAL = Residual("retimed", "the source on its action template's timing", retimed=True)
RETIMED_NAIVE_RESIDUAL = Residual("retimed-naive", "the naive residual on its action template's timing",
                                  on_reference=True, retimed=True)
KSAME_RESIDUAL = Residual("ksame", "the k-same mean of the source on the reference's bone lengths",
                          on_reference=True, averaged=True)
#: every residual; the first is the paper's
RESIDUALS: tuple[Residual, ...] = (SOURCE_RESIDUAL, NAIVE_RESIDUAL, RETIMED_RESIDUAL, RETIMED_NAIVE_RESIDUAL,
                                   KSAME_RESIDUAL)
_RESIDUALS_BY_NAME = {r.name: r for r in RESIDUALS}


def residual(name: str) -> Residual:
    """The residual called `name` (`DTMRConfig.residual`); ValueError naming the known ones otherwise."""
    found = _RESIDUALS_BY_NAME.get(name)
    if found is None:
        raise ValueError(f"residual must be one of {', '.join(_RESIDUALS_BY_NAME)}, got {name!r}")
    return found
