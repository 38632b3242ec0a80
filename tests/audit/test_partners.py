"""`dtmr audit --partners`: the k-same partners replayed exactly as `dtmr anonymize` chose them, found among
the raw clips, and scored against chance; a model that did not make the release is refused before any
attacker is trained."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dtmr.audit.partners import pool_crcs, replay_partners
from dtmr.audit.store import clip_crcs
from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.io.library import ClipLibrary
from dtmr.models.anonymizer import Anonymizer
from dtmr.models.motion.ksame import KSameMotion


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """(library, k = 2 model, release, key, choices): 4 subjects x 2 actions x 3 repetitions, the k-same file
    fitted on repetitions 0-1 (split "synthetic") and the whole library released with it; `choices` maps each
    normalized source (bytes) to the partners the model chose while releasing."""
    folder = tmp_path_factory.mktemp("partners")
    library = folder / "lib.h5"
    ClipLibrary.create(library, generate_clips(subjects=4, actions=2, repetitions=3, seed=1)).close()
    model = folder / "ksame2.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "ksame", "--k", "2",
                 "-o", str(model)]) == 0
    choices = {}
    original = KSameMotion.partners

    def recording(self, src, actions=None, subjects=None):
        chosen, template = original(self, src, actions, subjects)
        for row, partners in zip(src.cpu().numpy(), chosen.cpu().numpy()):
            choices[row.tobytes()] = partners.tolist()
        return chosen, template

    KSameMotion.partners = recording
    try:
        release = folder / "release.h5"
        assert main(["anonymize", str(library), "--model", str(model), "--device", "cpu", "-o", str(release)]) == 0
    finally:
        KSameMotion.partners = original
    return library, model, release, folder / "release.key.json", choices


def test_the_replay_gives_the_partners_the_release_was_made_with(released):
    library, model, _, _, choices = released
    clips = ClipLibrary(library).read_all()
    anonymizer = Anonymizer.from_checkpoint(model, device="cpu")
    names = ClipLibrary(library).action_names
    ksame, partners = replay_partners(anonymizer, clips, names)
    src, _ = anonymizer.source_inputs(clips, names)
    assert len(choices) == len(clips) and partners.shape == (len(clips), 1)
    assert [choices[row.tobytes()] for row in src.numpy()] == partners.tolist()
    subjects = np.array([c.subject for c in clips])
    assert (ksame.pool_subjects.numpy()[partners[:, 0]] != subjects).all()  # never the source's own subject


def test_each_pool_clip_is_found_among_the_raw_clips_it_was_fitted_on(released):
    library, model, _, _, _ = released
    clips = ClipLibrary(library).read_all()
    ksame = Anonymizer.from_checkpoint(model, device="cpu").model
    crcs = clip_crcs(clips)
    found = pool_crcs(ksame, clips, crcs, np.arange(len(ksame.pool)), model, library)
    train = [i for i, c in enumerate(clips) if c.repetition < 2]  # the split's training half, in order
    assert [found[p] for p in range(len(train))] == [{int(crcs[i])} for i in train]


def test_the_audit_scores_the_partners_against_chance(released, capsys):
    library, model, release, key, _ = released
    assert main(["audit", str(release), "--key", str(key), "--raw", str(library), "--attackers", "tcn",
                 "--epochs", "1", "--folds", "2", "--partners", str(model)]) == 0
    out = capsys.readouterr().out
    audit = json.loads((release.with_name("release.audit") / "audit.json").read_text())
    partners = audit["partners"]
    named, linked = partners["named"], partners["linked"]  # the summary line reads them through AuditResult
    assert (f"a partner named in {named['accuracy']['mean']:.1f} % ({named['times_chance']:.1f} x chance), a "
            f"partner's clip linked in {linked['accuracy']['mean']:.1f} %") in out
    assert partners["k"] == 2 and partners["model"] == "ksame2.pt" and partners["attacker"] == "tcn (raw-trained)"
    assert partners["named"]["chance"] == 25.0 and partners["linked"]["chance"] == pytest.approx(100 / 24, abs=1e-3)
    assert len(partners["named"]["accuracy"]["folds"]) == 2
    assert sum(a["releases"] for a in partners["appearances"]) == 24  # one partner per released clip
    assert "--partners" in audit["command"]
    report = (release.with_name("release.audit") / "audit.md").read_text()
    assert "## Partners (the other people averaged into each clip)" in report and "a partner's clip linked" in report


def test_a_model_that_did_not_make_the_release_is_refused_first(released, tmp_path, capsys):
    library, _, release, key, _ = released
    other = tmp_path / "other.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "ksame", "--k", "3",
                 "-o", str(other)]) == 0
    capsys.readouterr()
    assert main(["audit", str(release), "--key", str(key), "--raw", str(library), "--attackers", "tcn",
                 "--out", str(tmp_path / "audit"), "--partners", str(other)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"dtmr: error: {other}: not the model of {release} (the key records another SHA-256)")
    assert not (tmp_path / "audit" / "parts").exists()  # refused before any attacker ran


def test_cluster_means_count_every_other_member_of_the_cluster_as_a_partner(released, tmp_path):
    library = released[0]
    model = tmp_path / "means.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "ksame", "--k", "2",
                 "--timing", "template", "--partners", "cluster-mean", "-o", str(model)]) == 0
    release = tmp_path / "means.h5"
    assert main(["anonymize", str(library), "--model", str(model), "--device", "cpu", "-o", str(release)]) == 0
    assert main(["audit", str(release), "--key", str(tmp_path / "means.key.json"), "--raw", str(library),
                 "--attackers", "tcn", "--epochs", "1", "--folds", "2", "--partners", str(model)]) == 0
    partners = json.loads((tmp_path / "means.audit" / "audit.json").read_text())["partners"]
    # 4 subjects in clusters of 2: each release is the mean of its subject's and one other member's pool clip
    assert partners["choice"] == "cluster-mean" and partners["partners_per_clip"] == 1.0
    assert partners["named"]["chance"] == 25.0
    assert sorted(a["releases"] for a in partners["appearances"]) == [6, 6, 6, 6]


def test_a_model_without_partners_or_missing_is_refused_first(released, tmp_path, capsys):
    library = released[0]
    retimer = tmp_path / "retime.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "retime-naive",
                 "-o", str(retimer)]) == 0
    release = tmp_path / "retimed.h5"
    assert main(["anonymize", str(library), "--model", str(retimer), "--device", "cpu", "-o", str(release)]) == 0
    key = str(tmp_path / "retimed.key.json")
    capsys.readouterr()
    for model, message in ((retimer, f"{retimer}: a retime-naive model has no partners (only k-same and a "
                                      "DisentangledTMR with the k-same residual average other people's clips)"),
                           (tmp_path / "gone.pt", f"{tmp_path / 'gone.pt'}: cannot read the model (No such file or "
                                                  "directory)")):
        assert main(["audit", str(release), "--key", key, "--raw", str(library), "--attackers", "tcn",
                     "--out", str(tmp_path / "audit"), "--partners", str(model)]) == 2
        assert capsys.readouterr().err.strip().splitlines()[-1] == f"dtmr: error: {message}"
        assert not (tmp_path / "audit" / "parts").exists()
