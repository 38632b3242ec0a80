"""`dtmr anonymize … --max-risk 2x`: the most useful setting of a mechanism whose audited worst case meets a
risk target (issue 40; docs/privacy.md, "A release at a target risk").

What ARX does for tables, for skeleton clips: the mechanism's privacy settings are tried in order of the
utility they keep (most first), each release is audited by the full suite (`dtmr audit`), and the first whose
worst case meets the target is the release. Nothing weaker than the target is ever written to OUT; when no
setting meets it, the command stops with the table of what each reached and writes no release.

The ladder (`privacy_ladder`):
- a k-same file (`dtmr fit-motion-model --method ksame`, nearest or cluster partners): its own k, then each
  k of `KSAME_LADDER` above it that its pool supports (more partners per average keep less of the source's
  motion and of the action's detail). The file is rewritten with the other k in the scratch folder; the pool,
  templates and partner rule are the file's own;
- any other checkpoint and the parameter-free methods: the one setting they have (a DisentangledTMR's β is
  fixed by its training: train models at several β and try each).

The target is a multiple of chance (`2x`) or a re-identification rate (`15%`), compared with the audit's
`worst` (every attacker and form, side channels included). The scratch folder `OUT.h5.risk/` holds each
rung's release, key and audit while the search runs; the winner's release and key become OUT and its key,
its audit OUT.audit/, a rewritten model OUT's stem + `_k<K>.pt` (the name its key records); the folder is then
removed (it holds the other rungs' keys). The audits share OUT's folder's `.audit-cache`, so a rerun retrains nothing raw-trained.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import DtmrError
from ..io.outputs import check_output
from ..methods import KSAME
from ..release.key import key_path_for
from .result import AuditResult

#: the k values tried above a k-same file's own, in order
KSAME_LADDER = (2, 3, 5, 8, 13, 20)
_TARGET = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(x|×|%)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class RiskTarget:
    """At most `value` times chance (unit "x") or `value` percent re-identified (unit "%")."""

    value: float
    unit: str

    @classmethod
    def parse(cls, text: str) -> "RiskTarget":
        match = _TARGET.match(text or "")
        if not match or float(match.group(1)) <= 0:
            raise DtmrError(f"--max-risk must be a multiple of chance such as 2x, or a rate such as 15%, got {text!r}")
        unit = "%" if match.group(2) == "%" else "x"
        value = float(match.group(1))
        if unit == "%" and value > 100:
            raise DtmrError(f"--max-risk {text}: a rate is at most 100%")
        return cls(value, unit)

    def figure(self, result: AuditResult) -> float:
        return result.worst_times_chance if self.unit == "x" else result.worst_accuracy

    def met_by(self, result: AuditResult) -> bool:
        return self.figure(result) <= self.value

    def __str__(self) -> str:
        return f"{self.value:g}× chance" if self.unit == "x" else f"{self.value:g} % re-identified"


@dataclass(frozen=True)
class Rung:
    """One setting of the ladder: a checkpoint (`model`) or a parameter-free `method`, named `label`."""

    label: str
    model: Path | None = None
    method: str | None = None
    #: a model file written for this rung (moved beside OUT when it wins)
    derived: bool = False


def privacy_ladder(model: str | Path | None, method: str | None, scratch: Path, stem: str,
                   log: Callable[[str], None]) -> list[Rung]:
    """The settings to try, most utility first (see the module docstring); a rewritten k-same file is
    `scratch/<stem>_k<K>.pt`, the name it keeps beside the release when it wins."""
    if model is None:
        return [Rung(label=str(method), method=method)]
    from ..models.checkpoints.checkpoint import build_model_from_checkpoint, load_checkpoint

    checkpoint = load_checkpoint(model)
    if checkpoint.get("method") != KSAME.name:
        return [Rung(label=Path(model).name, model=Path(model))]
    import torch

    own = int(checkpoint["config"]["k"])
    rungs = [Rung(label=f"k={own}", model=Path(model))]
    scratch.mkdir(parents=True, exist_ok=True)
    for k in (k for k in KSAME_LADDER if k > own):
        derived = {**checkpoint, "config": {**checkpoint["config"], "k": k}}
        try:
            build_model_from_checkpoint(derived, source=model)
        except DtmrError as exc:  # the pool holds too few people for this k: the ladder ends here
            log(f"k={k}: not possible with this file's pool ({exc}); the ladder stops at k={rungs[-1].label[2:]}")
            break
        path = scratch / f"{stem}_k{k}.pt"
        torch.save(derived, path)
        rungs.append(Rung(label=f"k={k}", model=path, derived=True))
    return rungs


def _utility(result: AuditResult) -> str:
    action = result.action_accuracy
    return "no action labels" if action is None else f"action recognition {action:.1f} %"


def anonymize_to_risk(input_path: str | Path, output: str | Path, target: RiskTarget, *, model: str | Path | None,
                      method: str | None, audit_settings, audit_workers=None,
                      log: Callable[[str], None] = print, **anonymize_kwargs) -> dict:
    """Release `input_path` to `output` at the first setting of the ladder whose audit meets `target`;
    returns {"setting", "audit", "tried": [{"setting", "worst", "figure", "utility", "met"}]}. Raises DtmrError
    (and writes no release) when no setting meets it. `audit_workers` (parallel.Workers) computes each audit's
    cells in that many processes; `anonymize_kwargs` go to `anonymize_source`."""
    from ..release.anonymize import anonymize_source
    from .audit_json import default_out
    from .suite import run_audit

    output = Path(output)
    inputs = [p for p in (input_path, model, anonymize_kwargs.get("references")) if p is not None]
    check_output(output, kind="clip-library", inputs=inputs)
    check_output(key_path_for(output), kind="release-key", inputs=inputs)
    audit_out = check_output(default_out(output), kind="audit", folder=True, inputs=inputs)
    scratch = output.with_name(output.name + ".risk")
    settings = replace(audit_settings, cache=audit_settings.cache or output.parent / ".audit-cache")
    tried: list[dict] = []
    try:
        for rung in privacy_ladder(model, method, scratch, output.stem, log):
            release = scratch / rung.label.replace("=", "") / output.name  # its key and audit name OUT
            log(f"{rung.label}: anonymizing")
            anonymize_source(input_path, release, model=rung.model, method=rung.method, **anonymize_kwargs)
            log(f"{rung.label}: auditing")
            audit = run_audit(release, key_path_for(release), input_path, default_out(release), settings,
                              command="", log=log, workers=audit_workers)
            result = AuditResult.from_audit(audit, default_out(release))
            met = target.met_by(result)
            row = {"setting": rung.label, "worst": f"{result.worst_name} ({result.worst_form})",
                   "figure": target.figure(result), "utility": _utility(result), "met": met}
            tried.append(row)
            log(f"{rung.label}: worst case {row['worst']} {result.worst_accuracy:.1f} % "
                f"({result.worst_times_chance:.2f}× chance), {row['utility']}: "
                f"{'meets' if met else 'misses'} {target}")
            if met:
                _promote(release, output, default_out(release), audit_out, rung)
                return {"setting": rung.label, "audit": str(audit_out), "tried": tried}
        lines = "; ".join(f"{t['setting']}: {t['figure']:.2f}{'×' if target.unit == 'x' else ' %'} "
                          f"({t['worst']})" for t in tried)
        raise DtmrError(f"no setting meets {target} ({lines}); no release written. Try a mechanism that hides more "
                        "(a k-same file with a larger pool, cluster means) or a looser target")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _promote(release: Path, output: Path, audit: Path, audit_out: Path, rung: Rung) -> None:
    """The winning rung's files into place: model (when written for it), key, release, audit; the key before
    the release, as `dtmr anonymize` does."""
    if rung.derived:
        model_out = output.with_name(rung.model.name)
        check_output(model_out, kind="checkpoint", inputs=[release])
        shutil.move(str(rung.model), model_out)
    key_path_for(release).replace(key_path_for(output))
    release.replace(output)
    if audit_out.exists():
        shutil.rmtree(audit_out)
    shutil.move(str(audit), audit_out)
