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
    """`RELEASE.audit/audit.json` with every entry `dtmr audit` writes (dtmr/audit/suite.py `assemble`, its
    figures made by `dtmr.audit.summary` as there) for a bone-length attacker whose adaptive form is the worst;
    with `attacker`, its file is a trained bone-length attacker, without, the audit keeps no attacker files
    (as a published audit)."""
    from dtmr.attackers import BoneLengthAttacker, attacker_family
    from dtmr.audit.summary import risk_distribution, scored, subject_risks

    folder = release.path.with_name(release.path.stem + ".audit")
    (folder / "attackers").mkdir(parents=True, exist_ok=True)
    # distinct risks whose order differs from both the release order and the text order of their ids
    risks = [0.05, 0.9, 0.31, 0.5, 0.07, 0.66, 0.12, 0.8, 0.45]
    release.risks = {f"R{p + 1:06d}": r for p, r in enumerate(risks)}
    clips = [{"id": i, "subject": release.subject_of(p), "risk": r, "correct": r > 0.4}
             for p, (i, r) in enumerate(release.risks.items())]
    chance = 100.0 / 3
    name, family = "bone-lengths", attacker_family("bone-lengths")
    attackers = [scored({"name": name, "family": family, "form": form, "epochs": None, "seconds": 0.1}, folds, chance)
                 for form, folds in (("raw-trained", [100 / 3, 200 / 3, 100 / 3]), ("adaptive", [100, 200 / 3, 100]),
                                     ("raw-known", [200 / 3, 100 / 3, 200 / 3]))]
    worst = attackers[1]
    audit = {
        "format": "dtmr-audit", "version": 1, "command": f"dtmr audit {release.path.name} --key "
        f"{release.key.name} --raw clips.npz --attackers {name}", "created": "2026-12-02T00:00:00+00:00",
        "release": {"file": release.path.name, "clips": 9, "subjects": 3, "method": "naive", "beta": 1.0,
                    "model": "naive.pt", "provenance": "none"},
        "raw": {"file": "clips.npz", "clips": 9},
        "split": {"kind": "folds", "folds": 3, "name": None},
        "settings": {"attackers": [name], "seed": 0, "device": "cpu", "reference": None, "epochs": {name: None}},
        "chance": {"subject": round(chance, 4), "linkage": round(100.0 / 9, 4)},
        "metadata": {"passed": True, "findings": []},
        "calibration": {"raw": [scored({"name": name}, [100.0, 100.0, 100.0], chance)],
                        "best": {"name": name, "accuracy": 100.0},
                        "reference": {"accuracy": 100.0, "why": "3 × chance"}, "warning": None},
        "attackers": attackers,
        "linkage": [{**scored({"name": "frame count"}, [0.0, 0.0, 0.0], 100.0 / 9),
                     "expected": scored({}, [11.1, 11.1, 11.1], 100.0 / 9)["accuracy"]}],
        "worst": {"name": name, "form": worst["form"], "accuracy": worst["accuracy"]["mean"],
                  "times_chance": worst["times_chance"]},
        "subjects": subject_risks(clips),
        "clips": clips,
        "risk": risk_distribution(clips),
        "utility": {"motion_amplitude_kept": {"median": 1.0, "quartiles": [1.0, 1.0], "clips": 9}},
    }
    if attacker:
        model = BoneLengthAttacker()
        model.fit(release.sources, [c.subject for c in release.sources], seed=0)
        model.save(folder / "attackers" / f"{name}_adaptive.pt")
        audit["attacker_files"] = {f"{name}/{form}": f"attackers/{name}_{form}.pt" for form in
                                   ("raw-trained", "adaptive", "raw-known")}
    release.audit = folder / "audit.json"
    release.audit.write_text(json.dumps(audit), encoding="utf-8")
    return release.audit


def risk_order(release: Release) -> list[str]:
    """Release ids by risk, highest first."""
    return [i for i, _ in sorted(release.risks.items(), key=lambda kv: -kv[1])]
