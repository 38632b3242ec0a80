"""The partners' exposure (`dtmr audit --partners MODEL`): the other people inside a k-same release.

A k-same release (docs/motion_anonymizers.md) is the time-aligned mean of its source and k - 1 pool clips
of other subjects, so each partner's motion is in it at weight 1/k, as the source's is. The suite asks who
the labelled performer is; this asks the same about the partners, with the attackers a data holder already
has (per fold, the suite's raw-trained linkage embedder: the same cached model):
- **named**: the attacker's top subject for a released clip is one of its partners' subjects; chance
  (partners per clip: k - 1, or a cluster mean's other members) / subjects. Beside it, from the same
  predictions, how often it names the source;
- **linked**: the released clip's nearest raw clip (cosine, as the suite's linkage) is one of its partners'
  own clips, or a clip with the same joints; chance (partners per clip) / raw clips;
- **appearances**: in how many releases each subject is a partner.

There is no adaptive form: training an attacker on partners' names needs the pool's labels, which only the
releaser holds. The partners are replayed, not recorded: the model file (the release's, checked against the
key's SHA-256) chooses them again from the release's sources with the labels `dtmr anonymize` gave it
(`Anonymizer.source_inputs`); the choice depends on nothing else. A pool clip is found among the raw clips by
its normalized joints (the pool holds the training clips as the model saw them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..errors import DtmrError
from ..models.motion.ksame import NO_PARTNER, KSameMotion
from .linkage import nearest_raw
from .summary import scored

#: sources per replayed batch of partner choices
PARTNER_BATCH = 64
#: a partner subject that no attacker class equals (padding entries of cluster means)
NO_SUBJECT = -2


def _chooser(anonymizer) -> tuple[KSameMotion, bool]:
    """(the k-same model that chose the partners, whether it is the model's residual)."""
    model = anonymizer.model
    if isinstance(model, KSameMotion):
        return model, False
    kind = getattr(model, "residual_kind", None)  # a DisentangledTMR's residual (dtmr.methods.RESIDUALS)
    if kind is not None and kind.averaged:
        return model.ksame, True
    raise DtmrError(f"{anonymizer.source}: a {anonymizer.method} model has no partners (only k-same and a "
                    "DisentangledTMR with the k-same residual average other people's clips)")


def replay_partners(anonymizer, sources: list, action_names) -> tuple[KSameMotion, np.ndarray]:
    """(the k-same model, (N, P) pool indices of each source's partners, as `dtmr anonymize` chose them: P =
    k - 1, or for cluster means the largest cluster's other members with NO_PARTNER padding)."""
    ksame, residual = _chooser(anonymizer)
    chosen = []
    for start in range(0, len(sources), PARTNER_BATCH):
        src, labels = anonymizer.source_inputs(sources[start:start + PARTNER_BATCH], action_names, residual)
        with torch.inference_mode():
            chosen.append(ksame.partners(src, **labels)[0].cpu().numpy())
    return ksame, np.concatenate(chosen)


def pool_crcs(ksame: KSameMotion, raw: list, raw_crcs: np.ndarray, used: np.ndarray, model: str | Path,
              raw_path: str | Path) -> dict[int, set[int]]:
    """Each used pool index -> the joint CRCs of the raw clips it was made from (identical clips share it)."""
    from ..train.data import prepare_clips

    normalized = prepare_clips(raw, ksame.topology.name).joints
    by_bytes: dict[bytes, set[int]] = {}
    for i, joints in enumerate(normalized):
        by_bytes.setdefault(joints.tobytes(), set()).add(int(raw_crcs[i]))
    pool = ksame.pool.cpu().numpy()
    out = {}
    for p in np.unique(used).tolist():
        found = by_bytes.get(pool[p].tobytes())
        if found is None:
            raise DtmrError(f"{model}: pool clip {p} is none of {raw_path}'s clips (fitted on another library?)")
        out[p] = found
    return out


def check_partner_model(model: str | Path, key, release: str | Path, embedder: str | None):
    """The release's model, loaded (an `Anonymizer`); refused before any attacker is trained when it did not
    make the release (its SHA-256 is not the key's), has no partners, or the suite has no embedding attacker."""
    from ..models.anonymizer import Anonymizer
    from ..release.run import file_sha256

    if embedder is None:
        raise DtmrError("the partners' exposure needs the tcn or sgn attacker (their raw-trained embedding)")
    expected = getattr(key, "model_sha256", "")
    try:
        actual = file_sha256(model)
    except OSError as exc:
        raise DtmrError(f"{model}: cannot read the model ({exc.strerror or exc})") from None
    if actual != expected:
        raise DtmrError(f"{model}: not the model of {release} (the key records "
                        f"{'no model' if not expected else 'another SHA-256'})")
    anonymizer = Anonymizer.from_checkpoint(model, device="cpu")
    _chooser(anonymizer)
    return anonymizer


def partner_exposure(run, anonymizer, log) -> dict:
    """The audit's "partners" entry for `run` (suite.AuditRun) of a release made by the model `anonymizer`
    runs (from `check_partner_model`)."""

    inputs, model = run.inputs, anonymizer.source
    log(f"partners: replaying the choices of {Path(model).name} for {len(inputs.released)} sources")
    ksame, partners = replay_partners(anonymizer, inputs.raw_sources(np.arange(len(inputs.released))),
                                      inputs.raw_action_names)
    valid = partners != NO_PARTNER  # (N, P): cluster means have as many partners as their cluster has members
    if not valid.any():
        raise DtmrError(f"{model}: its releases average nobody else's clips (k = {ksame.k})")
    crcs = pool_crcs(ksame, inputs.raw, run.raw_crcs, partners[valid], model, inputs.raw_path)
    partner_subjects = np.where(valid, ksame.pool_subjects.cpu().numpy()[partners], NO_SUBJECT)
    named, source_named, linked = [], [], []
    for k, fold in enumerate(run.split.folds):
        attacker = run.raw_trained(run.embedder, fold.train, inputs.subjects[fold.train])
        test = [inputs.released[i] for i in fold.test]
        top = np.asarray(attacker.classes)[np.argmax(attacker.predict_proba(test), axis=1)]
        named.append(100.0 * float((top[:, None] == partner_subjects[fold.test]).any(axis=1).mean()))
        source_named.append(100.0 * float((top == inputs.subjects[fold.test]).mean()))
        nearest = run.raw_crcs[nearest_raw(attacker.embed(test), attacker.embed(inputs.raw))]
        linked.append(100.0 * float(np.mean([int(c) in set().union(*(crcs[p] for p in partners[i][valid[i]]))
                                             for c, i in zip(nearest, fold.test)])))
        log(f"partners, fold {k + 1}/{len(run.split.folds)}: named {named[-1]:.1f} %, linked {linked[-1]:.1f} %")
    subjects = np.unique(inputs.subjects)
    others = float(valid.sum(axis=1).mean())  # partners per released clip
    appearances = {int(s): int(c) for s, c in zip(*np.unique(partner_subjects[valid], return_counts=True))}
    source_entry = scored({"name": "source named"}, source_named, 100.0 / len(subjects))
    return {"model": Path(model).name, "k": ksame.k, "partners_per_clip": round(others, 2),
            "choice": ksame.partner_choice, "attacker": f"{run.embedder} (raw-trained)",
            "named": scored({"name": "a partner named"}, named, 100.0 * others / len(subjects)),
            "source_named": source_entry,
            "linked": scored({"name": "a partner's clip linked"}, linked, 100.0 * others / len(inputs.raw)),
            "appearances": [{"subject": s, "releases": appearances.get(int(s), 0)}
                            for s in sorted(set(appearances) | set(subjects.tolist()))]}
