"""`run_audit` end to end on a tiny synthetic release: the audit.json schema, resume, the raw-trained cache
shared between releases, and the errors of bad inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from audit_releases import make_release

from dtmr.audit.linkage import frame_count_linkage
from dtmr.audit.result import AuditResult, risk_by_clip
from dtmr.audit.suite import AuditSettings, run_audit
from dtmr.errors import DtmrError
from dtmr.io.library import ClipLibrary

SCHEMA = {"format", "version", "command", "created", "release", "raw", "split", "chance", "metadata", "attackers",
          "linkage", "worst", "subjects", "clips", "risk", "attacker_files", "utility", "calibration"}
FAST = AuditSettings(attackers=("tcn", "bone-lengths"), epochs=1)


def test_audit_writes_every_key_of_the_schema(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "rel.h5")
    settings = AuditSettings(attackers=("sgn", "bone-lengths"), epochs=1)  # the TCN: the tests below
    audit = run_audit(release, key, raw, tmp_path / "rel.audit", settings, command="dtmr audit x", log=lambda m: None)
    stored = json.loads((tmp_path / "rel.audit" / "audit.json").read_text())
    assert stored == json.loads(json.dumps(audit))
    assert SCHEMA <= set(stored) and stored["format"] == "dtmr-audit" and stored["version"] == 1
    assert stored["split"]["kind"] == "repetition" and stored["split"]["folds"] == 3
    assert stored["chance"] == {"subject": 25.0, "linkage": pytest.approx(100 / 36, abs=1e-3)}
    assert {(a["name"], a["form"]) for a in stored["attackers"]} == {
        (n, f) for n in ("sgn", "bone-lengths") for f in ("raw-trained", "adaptive", "raw-known")}
    for a in stored["attackers"]:
        assert len(a["accuracy"]["folds"]) == 3 and a["chance"] == 25.0 and a["verdict"]
    worst = max(stored["attackers"], key=lambda a: a["accuracy"]["mean"])
    assert stored["worst"]["accuracy"] == worst["accuracy"]["mean"]
    # a raw release: both forms see the same clips, and a tie goes to the adaptive form
    tied = [a for a in stored["attackers"] if a["accuracy"]["mean"] == worst["accuracy"]["mean"]]
    if any(a["form"] == "adaptive" for a in tied):
        assert stored["worst"]["form"] == "adaptive"
    assert [c["id"] for c in stored["clips"]] == [f"R{i:06d}" for i in range(1, 37)]  # every clip, tested once
    assert all(0.0 <= c["risk"] <= 1.0 for c in stored["clips"])
    assert sum(s["clips"] for s in stored["subjects"]) == 36
    assert [(e["name"], e.get("embedder")) for e in stored["linkage"]] == [("embedding", "sgn (raw-trained)"),
                                                                          ("frame count", None)]
    for name, file in stored["attacker_files"].items():
        assert (tmp_path / "rel.audit" / file).is_file(), name
    assert set(stored["utility"]) == {"action_recognition", "action_recognition_retrained", "motion_amplitude_kept"}
    assert stored["utility"]["motion_amplitude_kept"]["median"] == pytest.approx(1.0)  # a raw release moves as it did
    for form, action in (("raw-trained", stored["utility"]["action_recognition"]),
                         ("retrained", stored["utility"]["action_recognition_retrained"])):
        assert action["form"] == form and action["name"] == "tcn"
        assert len(action["accuracy"]["folds"]) == 3 and action["chance"] == pytest.approx(100 / 3, abs=1e-3)
        assert 0.0 <= action["accuracy"]["mean"] <= 100.0 and "verdict" not in action
    assert (tmp_path / "rel.audit" / "audit.md").is_file()
    assert "Utility: action recognition" in (tmp_path / "rel.audit" / "audit.md").read_text()
    # what the Studio and the tables read of it: the typed reader takes a real audit as it is written
    result = AuditResult.read(tmp_path / "rel.audit")
    assert (result.worst_name, result.worst_form) == (stored["worst"]["name"], stored["worst"]["form"])
    row = next(a for a in stored["attackers"] if (a["name"], a["form"]) == (result.worst_name, result.worst_form))
    assert result.worst_family == row["family"] and (tmp_path / "rel.audit" / result.worst_file).is_file()
    assert risk_by_clip(stored) == {c["id"]: c["risk"] for c in stored["clips"]}


def test_rerun_resumes_from_parts_and_a_second_release_reuses_the_raw_trained_cache(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "a.h5", order_seed=1)
    first: list[str] = []
    audit = run_audit(release, key, raw, tmp_path / "a.audit", FAST, log=first.append)
    again: list[str] = []
    rerun = run_audit(release, key, raw, tmp_path / "a.audit", FAST, log=again.append)
    assert sum("done before" in m for m in again) == 24  # 2 attackers x 3 forms x 3 folds, 2 x 3 action folds
    assert [a["accuracy"] for a in rerun["attackers"]] == [a["accuracy"] for a in audit["attackers"]]
    cached = sorted((tmp_path / ".audit-cache").iterdir())
    # 2 attackers x 3 folds raw-trained, 2 raw-known (every raw clip), and the action recognizer of each fold
    assert len(cached) == 11
    other, other_key = make_release(clips, raw, tmp_path / "b.h5", order_seed=2)  # same sources, other order
    run_audit(other, other_key, raw, tmp_path / "b.audit", FAST, log=lambda m: None)
    assert sorted((tmp_path / ".audit-cache").iterdir()) == cached
    raw_trained = {a["name"]: a["accuracy"] for a in audit["attackers"] if a["form"] == "raw-trained"}
    audit_b = json.loads((tmp_path / "b.audit" / "audit.json").read_text())
    assert raw_trained == {a["name"]: a["accuracy"] for a in audit_b["attackers"] if a["form"] == "raw-trained"}


def test_bone_lengths_reidentify_a_raw_release_far_above_chance(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "r.h5")
    audit = run_audit(release, key, raw, tmp_path / "r.audit", AuditSettings(attackers=("bone-lengths",)),
                      log=lambda m: None)
    for entry in audit["attackers"]:
        assert entry["verdict"] == "re-identifies" and entry["times_chance"] >= 3
    # a raw release keeps every clip's placement, missing joints and frame count: the scan says so, whatever
    # the attackers say
    assert [f["field"] for f in audit["metadata"]["findings"] if f["severity"] == "fail"] == [
        "attrs/placement", "attrs/missing", "frame count"]


def test_a_leaky_release_fails_the_metadata_scan(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "leak.h5", leak_subject=True)
    audit = run_audit(release, key, raw, tmp_path / "leak.audit", AuditSettings(attackers=("bone-lengths",)),
                      log=lambda m: None)
    assert not audit["metadata"]["passed"]
    assert audit["metadata"]["findings"][0]["severity"] == "fail"
    assert list(audit).index("metadata") < list(audit).index("attackers")


def test_a_key_of_another_release_is_an_error_naming_both_files(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    release, _ = make_release(clips, raw, tmp_path / "one.h5")
    _, other_key = make_release(clips, raw, tmp_path / "two.h5")
    with pytest.raises(DtmrError, match="two.key.json.*one.h5"):
        run_audit(release, other_key, raw, tmp_path / "x.audit", FAST, log=lambda m: None)


def test_raw_clips_that_are_not_the_sources_are_an_error(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "rel.h5")
    shorter = ClipLibrary.create(tmp_path / "other.h5", [c.replace(joints=c.joints[:-1]) for c in clips])
    shorter.close()
    with pytest.raises(DtmrError, match="does not hold the sources"):
        run_audit(release, key, tmp_path / "other.h5", tmp_path / "x.audit", FAST, log=lambda m: None)


def test_too_few_clips_per_subject_is_an_error(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    few = [c for c in clips if c.action == 1 and c.repetition == 0 or c.subject == 1]  # subjects 2-4: one clip
    lib = tmp_path / "few_raw.h5"
    ClipLibrary.create(lib, [c.replace(repetition=None) for c in few]).close()
    release, key = make_release(ClipLibrary(lib).read_all(), lib, tmp_path / "few.h5")
    with pytest.raises(DtmrError, match="needs at least 3 clips of every subject"):
        run_audit(release, key, lib, tmp_path / "few.audit", FAST, log=lambda m: None)


def test_frame_count_linkage_counts_unique_matching_lengths():
    raw_frames = np.array([10, 11, 11, 12])
    released = np.array([10, 11, 64, 12])
    linked, expected = frame_count_linkage(released, raw_frames, np.array([0, 1, 2, 3]))
    assert linked == pytest.approx(50.0) and expected == pytest.approx(100 * (1 + 0.5 + 0 + 1) / 4)


def test_the_retrained_action_recognizer_reads_a_release_the_raw_trained_one_cannot(synthetic_raw, tmp_path):
    """A release with its joints in another order keeps the action in the motion (every clip moved alike),
    but not where a recognizer trained on raw clips looks for it: only the retrained form reads it. The root
    and the hips stay (they fix the normalization's frame, the same for both forms)."""
    from dtmr.skeleton.topology import get_topology

    raw, clips = synthetic_raw
    topology = get_topology(clips[0].topology)
    fixed = [topology.root, topology.left_hip, topology.right_hip]
    order = np.arange(clips[0].num_joints)
    moved = np.setdiff1d(order, fixed)
    order[moved] = np.random.default_rng(0).permutation(moved)
    release, key = make_release(clips, raw, tmp_path / "shuffled.h5", transform=lambda c: c.joints[:, order])
    # 80 epochs: a fold trains on 24 clips, a step or two an epoch
    settings = AuditSettings(attackers=("bone-lengths",), epochs={"tcn": 80}, cache=tmp_path / "cache")
    utility = run_audit(release, key, raw, tmp_path / "shuffled.audit", settings, log=lambda m: None)["utility"]
    raw_trained = utility["action_recognition"]["accuracy"]["mean"]
    retrained = utility["action_recognition_retrained"]["accuracy"]["mean"]
    assert retrained >= 90.0 and retrained >= raw_trained + 30.0, (raw_trained, retrained)


def test_on_a_raw_release_the_retrained_action_recognizer_is_the_raw_trained_one(synthetic_raw, tmp_path):
    """The released clips are the raw clips (same labels, order, seed and epochs): the two forms are one model,
    which the frontier relies on for raw audits made before the retrained form (dtmr/audit/frontier.py)."""
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "raw.h5")
    settings = AuditSettings(attackers=("bone-lengths",), epochs={"tcn": 60}, cache=tmp_path / "cache")
    utility = run_audit(release, key, raw, tmp_path / "raw.audit", settings, log=lambda m: None)["utility"]
    raw_trained = utility["action_recognition"]["accuracy"]
    assert 40.0 < raw_trained["mean"] < 100.0  # neither chance nor saturated: the equality says something
    assert utility["action_recognition_retrained"]["accuracy"] == raw_trained


def test_a_release_that_kept_placement_is_worse_than_a_first_frame_root_nearest_neighbour(synthetic_raw, tmp_path):
    """Each subject filmed at its own place: the audit's worst case is at least what a plain nearest neighbour
    on the first frame's root (trained on every raw clip) reaches, and it names the side channel."""
    from dtmr.skeleton import get_topology

    raw, clips = synthetic_raw
    rng = np.random.default_rng(0)
    places = {s: rng.uniform(-2, 2, 3).astype(np.float32) for s in {c.subject for c in clips}}
    placed = [c.replace(joints=c.joints + places[c.subject]) for c in clips]
    placed_raw = tmp_path / "placed.h5"
    ClipLibrary.create(placed_raw, placed).close()
    release, key = make_release(placed, placed_raw, tmp_path / "kept.h5",
                                transform=lambda c: c.joints[::-1].copy())  # other motion, same placement
    audit = run_audit(release, key, placed_raw, tmp_path / "kept.audit",
                      AuditSettings(attackers=("first-root",), utility=False), log=lambda m: None)
    root = get_topology(clips[0].topology).root
    first = np.array([c.joints[-1, root] for c in placed])  # the released clips start where their sources end
    sources = np.array([c.joints[0, root] for c in placed])
    subjects = np.array([c.subject for c in placed])
    plain = 100.0 * np.mean(subjects[np.argmin(((first[:, None] - sources[None]) ** 2).sum(-1), axis=1)] == subjects)
    assert plain > 90.0
    assert audit["worst"]["accuracy"] >= plain - 1e-6 and audit["worst"]["name"] == "first-root"
    assert {f["field"] for f in audit["metadata"]["findings"] if f["severity"] == "fail"} >= {"attrs/placement"}
    assert audit["calibration"]["best"]["accuracy"] > 0 and "raw" in audit["calibration"]
