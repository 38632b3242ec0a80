"""A release, its key and its audit written by hand as docs/privacy.md and the release contract lay them out.

`write_release` stands in for `dtmr anonymize` (the released joints are the source's own: what matters
here is the layout, not the anonymization): opaque ids in a shuffled order, subject -1, the release
attributes, `RELEASE.key.json` beside it, and optionally `RELEASE.audit/audit.json` with a risk per clip and
the worst attacker's saved file (a real bone-length attacker of `dtmr.attackers`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import h5py
from studio_fakes import ACTION_NAMES, make_clip

from dtmr import Clip
from dtmr.io.library import JOINTS_CRC, ClipLibrary
from dtmr.release.key import KeyEntry, ReleaseKey, key_path_for, write_key

#: release position -> source index (3 subjects x 3 actions), a fixed "shuffle"
ORDER = (4, 0, 8, 2, 6, 1, 7, 3, 5)
TOKEN = "0123456789abcdef0123456789abcdef"


@dataclass
class Release:
    path: Path
    key: Path
    sources: list[Clip]  # in source order
    audit: Path | None = None
    #: release id -> risk written into the audit
    risks: dict[str, float] = field(default_factory=dict)

    def subject_of(self, position: int) -> int:
        return self.sources[ORDER[position]].subject


def write_release(folder: Path, audit: bool = True, attacker: bool = True, name: str = "released") -> Release:
    sources = [make_clip(s, a, 40 + 4 * a) for s in range(3) for a in range(3)]
    path = folder / f"{name}.h5"
    released = [Clip(sources[i].joints, "ntu25", fps=30.0, action=sources[i].action, sample_name=f"R{p + 1:06d}")
                for p, i in enumerate(ORDER)]
    ClipLibrary.create(path, released, action_names=ACTION_NAMES).close()
    with h5py.File(path, "r+") as h5:
        h5.attrs.update({"release_format": "dtmr-release", "release_version": 1, "method": "naive", "beta": 1.0,
                         "model": "naive.pt", "model_sha256": "0" * 64, "kept": "[]", "length": "keep",
                         "provenance": "none", "release_token": TOKEN})
        crc = h5["clips"][JOINTS_CRC][()]
    entries = [KeyEntry(f"R{p + 1:06d}", i, sources[i].sample_name, sources[i].subject, sources[i].action,
                        sources[i].view, None, sources[i].num_frames, -1, "", None, int(crc[p]))
               for p, i in enumerate(ORDER)]
    key = write_key(ReleaseKey(str(key_path_for(path)), path.name, TOKEN, "clips.npz", "clips.npz", "naive", 1.0,
                               "naive.pt", 0, entries))
    release = Release(path, key, sources)
    if audit:
        write_audit(release, attacker)
    return release


def write_audit(release: Release, attacker: bool = True) -> Path:
    """`RELEASE.audit/audit.json`; with `attacker`, the worst attacker's file is a trained bone-length attacker."""
    from dtmr.attackers import BoneLengthAttacker

    folder = release.path.with_name(release.path.stem + ".audit")
    (folder / "attackers").mkdir(parents=True, exist_ok=True)
    # distinct risks whose order differs from both the release order and the text order of their ids
    risks = [0.05, 0.9, 0.31, 0.5, 0.07, 0.66, 0.12, 0.8, 0.45]
    release.risks = {f"R{p + 1:06d}": r for p, r in enumerate(risks)}
    files = {}
    if attacker:
        model = BoneLengthAttacker()
        model.fit(release.sources, [c.subject for c in release.sources], seed=0)
        model.save(folder / "attackers" / "bone-lengths_adaptive.pt")
        files = {"bone-lengths/adaptive": "attackers/bone-lengths_adaptive.pt"}
    audit = {
        "format": "dtmr-audit", "version": 1, "command": "dtmr audit released.h5", "created": "2026-12-02T00:00:00",
        "release": {"file": release.path.name, "clips": 9, "subjects": 3, "method": "naive", "beta": 1.0,
                    "model": "naive.pt", "provenance": "none"},
        "attackers": [{"name": "bone-lengths", "family": "logistic regression on bone lengths", "form": "adaptive",
                       "accuracy": {"mean": 88.9, "std": 0.0, "folds": [88.9]}, "chance": 33.3,
                       "times_chance": 2.67, "verdict": "above chance"}],
        "worst": {"name": "bone-lengths", "form": "adaptive", "accuracy": 88.9, "times_chance": 2.67},
        "clips": [{"id": i, "subject": release.subject_of(p), "risk": r, "correct": r > 0.4}
                  for p, (i, r) in enumerate(release.risks.items())],
        "attacker_files": files,
    }
    release.audit = folder / "audit.json"
    release.audit.write_text(json.dumps(audit), encoding="utf-8")
    return release.audit


def risk_order(release: Release) -> list[str]:
    """Release ids by risk, highest first."""
    return [i for i, _ in sorted(release.risks.items(), key=lambda kv: -kv[1])]
