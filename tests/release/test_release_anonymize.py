"""`dtmr anonymize` writes a release that identifies no one (no subject, source name, path, index, view or
repetition unless kept; shuffled; scrubbed attributes) and a private key mapping it back; resumes after a kill
to the same release; refuses bad options and busy or foreign outputs before any work."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from dtmr.cli import main
from dtmr.errors import DtmrError
from dtmr.io.library import INT_COLUMNS, ClipLibrary
from dtmr.release import anonymize, merge
from dtmr.release.key import key_path_for, read_key
from dtmr.release.release import open_release, release_attributes
from dtmr.release.channels import RELEASE_FRAMES, release_joints
from dtmr.resources import resource_path
from dtmr.skeleton import get_topology

DEMO = resource_path("demo/demo_library.h5")
MODEL = resource_path("models/dtmr_small_beta0.2.pt")


@pytest.fixture
def source(tmp_path, monkeypatch):
    """12 demo clips of 10 subjects (every 30th clip), in parts of 4."""
    monkeypatch.setattr(anonymize, "CHUNK", 4)
    path = tmp_path / "data" / "input.h5"
    path.parent.mkdir()
    with ClipLibrary(DEMO) as demo:
        ClipLibrary.create(path, demo.read_many(range(0, len(demo), 30)), action_names=demo.action_names).close()
    return path


def _anonymize(source, out, *args) -> int:
    return main(["anonymize", str(source), *args, "-o", str(out)])


def _identifiers(source) -> list[str]:
    """Strings that must not appear anywhere in a release: source names, the input's path and folder."""
    with ClipLibrary(source) as lib:
        return [*lib.column("sample_name").tolist(), str(source), source.name, str(source.parent)]


def _assert_scrubbed(release, source, kept=()):
    with ClipLibrary(release) as rel, ClipLibrary(source) as src:
        table = rel.metadata_table()
        assert (table["subject"] == -1).all() and set(table["source_file"]) == {""}
        assert all(extra == {} for extra in table["extra"])
        for name in ("view", "repetition"):
            assert (table[name] == -1).all() != (name in kept)
        assert [name for name in table["sample_name"]] == [f"R{k:06d}" for k in range(1, len(rel) + 1)]
        assert (table["action"] >= 0).all() and rel.action_names == src.action_names
    attrs = release_attributes(release)
    text = json.dumps(attrs) + json.dumps([str(v) for v in table.values()])
    for identifier in _identifiers(source):
        assert identifier not in text
    assert attrs["provenance"] == "none" and attrs["release_format"] == "dtmr-release"
    assert json.loads(attrs["kept"]) == sorted(kept)
    assert not any(re.search(r"subject|source|seed|reference", name) for name in attrs)
    key = read_key(key_path_for(release))
    assert key.source_indices().tolist() != sorted(key.source_indices().tolist())  # shuffled: 1 in 12! by chance
    assert sorted(key.source_indices().tolist()) == list(range(len(key)))
    return attrs, key


def test_naive_release_holds_nothing_identifying(source, tmp_path):
    out = tmp_path / "released.h5"
    assert _anonymize(source, out, "--method", "naive") == 0
    attrs, key = _assert_scrubbed(out, source)
    assert attrs["method"] == "naive" and attrs["model"] == "naive" and "beta" not in attrs and key.beta is None
    assert not (tmp_path / "released.h5.parts").exists()
    with ClipLibrary(source) as src:
        subjects = src.column("subject")
        assert key.subjects().tolist() == subjects[key.source_indices()].tolist()
        referenced = key.column("reference_index")
        assert (subjects[referenced] != key.subjects()).all()  # references of another subject


def test_checkpoint_release_names_its_model_only(source, tmp_path):
    out = tmp_path / "released.h5"
    assert _anonymize(source, out, "--model", str(MODEL), "--device", "cpu", "--seed", "5") == 0
    attrs, key = _assert_scrubbed(out, source)
    sha = hashlib.sha256(MODEL.read_bytes()).hexdigest()
    assert attrs["method"] == "dtmr" and attrs["beta"] == pytest.approx(0.2) and attrs["model"] == MODEL.name
    assert attrs["model_sha256"] == sha == key.model_sha256
    assert (key.method, key.model, key.seed, key.source_file) == ("dtmr", MODEL.name, 5, str(source.resolve()))
    assert attrs["release_token"] == key.release_token and len(key.release_token) == 32


def test_raw_release_key_maps_every_clip_to_its_source(source, tmp_path):
    out = tmp_path / "released.h5"
    assert _anonymize(source, out, "--method", "raw", "--keep", "view,repetition") == 0
    _assert_scrubbed(out, source, kept=("repetition", "view"))
    assert stat.S_IMODE(os.stat(key_path_for(out)).st_mode) == 0o600
    library, key = open_release(out)
    with library, ClipLibrary(source) as src:
        for k, entry in enumerate(key.entries):
            released, original = library.read(k), src.read(entry.source_index)
            # the source's motion, through the release's channel rules only (dtmr/release/channels.py)
            assert np.array_equal(released.joints, release_joints(original.joints, original.topology))
            assert (entry.source_clip, entry.subject, entry.source_frames) == \
                (original.sample_name, original.subject, original.num_frames)
            assert (released.view, released.repetition) == (original.view, original.repetition)
            assert entry.reference_index == -1  # raw uses no reference


def test_mismatched_key_names_both_files(source, tmp_path):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    assert _anonymize(source, a, "--method", "raw") == 0
    assert _anonymize(source, b, "--method", "raw") == 0
    with pytest.raises(DtmrError, match="release tokens differ") as err:
        open_release(a, key_path_for(b))
    assert str(a) in str(err.value) and str(key_path_for(b)) in str(err.value)


def test_keep_missing_resamples_and_keeps_missing_joints_missing(source, tmp_path):
    with ClipLibrary(source) as src:
        clips = src.read_all()
    clips[0].joints[:, 7] = np.nan  # a hand never seen
    holed = tmp_path / "holed.h5"
    ClipLibrary.create(holed, clips).close()
    out = tmp_path / "released.h5"
    assert _anonymize(holed, out, "--method", "raw", "--length", "50", "--keep-missing") == 0
    library, key = open_release(out)
    with library:
        attrs = release_attributes(out)
        assert set(library.num_frames.tolist()) == {50} and attrs["length"] == 50 and attrs["missing"] == "kept"
        k = key.source_indices().tolist().index(0)
        joints = library.read(k).joints
        assert np.isnan(joints[:, 7]).all() and np.isfinite(np.delete(joints, 7, axis=1)).all()
        assert library.read(k).fps == clips[0].fps
        assert [e.source_frames for e in key.entries] == [clips[e.source_index].num_frames for e in key.entries]


def test_a_default_release_has_one_length_no_missing_joint_and_canonical_placement(source, tmp_path):
    with ClipLibrary(source) as src:
        clips = src.read_all()
    clips[0].joints[:, 7] = np.nan  # a hand never seen
    clips[1].joints[3:9, 4:8] = np.nan  # an arm lost for a few frames
    holed = tmp_path / "holed.h5"
    ClipLibrary.create(holed, clips).close()
    out = tmp_path / "released.h5"
    assert _anonymize(holed, out, "--method", "naive") == 0
    attrs = release_attributes(out)
    assert (attrs["length"], attrs["placement"], attrs["missing"]) == (RELEASE_FRAMES, "canonical", "filled")
    with ClipLibrary(out) as library:
        assert set(library.num_frames.tolist()) == {RELEASE_FRAMES}
        released = library.read_all()
    topo = get_topology(released[0].topology)
    for clip in released:
        assert np.isfinite(clip.joints).all()
        root = clip.joints[0, topo.root]
        hips = clip.joints[0, topo.right_hip] - clip.joints[0, topo.left_hip]
        assert abs(root[0]) < 1e-5 and abs(root[2]) < 1e-5 and 0.5 < root[1] < 1.5  # above the origin
        assert abs(hips[2]) < 1e-5 and hips[0] > 0  # the hip line along +x


def test_resume_after_a_kill_gives_the_same_release(source, tmp_path, monkeypatch):
    out = tmp_path / "released.h5"
    parts = tmp_path / "released.h5.parts"
    real_write = ClipLibrary.write

    def crash_on_second_part(path, clips, *args, **kwargs):
        if str(path).endswith("part-00001.h5"):
            raise KeyboardInterrupt
        return real_write(path, clips, *args, **kwargs)

    monkeypatch.setattr(ClipLibrary, "write", staticmethod(crash_on_second_part))
    assert _anonymize(source, out, "--method", "naive") == 130
    assert (parts / "part-00000.h5").is_file() and not out.exists() and not key_path_for(out).exists()
    state = json.loads((parts / "run.json").read_text())
    with ClipLibrary(parts / "part-00000.h5") as part:
        first = [release_joints(c.joints, c.topology) for c in part.read_all()]

    written = []
    monkeypatch.setattr(ClipLibrary, "write", staticmethod(
        lambda path, clips, *a, **k: written.append(os.path.basename(path)) or real_write(path, clips, *a, **k)))
    real_write_key = merge.write_key

    def killed_after_the_key(key):
        real_write_key(key)
        raise KeyboardInterrupt

    monkeypatch.setattr(merge, "write_key", killed_after_the_key)
    assert _anonymize(source, out, "--method", "naive") == 130
    assert written[:2] == ["part-00001.h5", "part-00002.h5"]  # part 0 was kept
    # killed after the staged key, before the swap's commit: neither file is in place (issue 43: never a key
    # without its release, or the other way round)
    assert not key_path_for(out).exists() and not out.exists() and (parts / "release.key.json").is_file()

    monkeypatch.setattr(merge, "write_key", real_write_key)
    assert _anonymize(source, out, "--method", "naive") == 0
    library, key = open_release(out)
    with library:
        assert key.source_indices().tolist() == state["order"] and key.release_token == state["release_token"]
        for k, joints in enumerate(first):
            assert library.read(k).joints.tobytes() == joints.tobytes()

    straight = tmp_path / "straight.h5"
    assert _anonymize(source, straight, "--method", "naive") == 0
    other, other_key = open_release(straight)
    with other, ClipLibrary(out) as resumed:
        by_source = {e.source_index: k for k, e in enumerate(other_key.entries)}
        for k, e in enumerate(key.entries):
            assert resumed.read(k).joints.tobytes() == other.read(by_source[e.source_index]).joints.tobytes()
    assert other_key.release_token != key.release_token


def test_with_provenance_says_so_and_keeps_the_source_order(source, tmp_path):
    out = tmp_path / "internal.h5"
    assert _anonymize(source, out, "--method", "naive", "--with-provenance") == 0
    attrs = release_attributes(out)
    assert attrs["provenance"] == "included"
    library, key = open_release(out)
    with library, ClipLibrary(source) as src:
        assert key.source_indices().tolist() == list(range(len(src)))
        assert library.column("sample_name").tolist() == src.column("sample_name").tolist()
        for name in INT_COLUMNS:
            assert library.column(name).tolist() == src.column(name).tolist()
        assert library.metadata(0)["extra"]["source_clip"] == src.metadata(0)["sample_name"]


def test_a_concurrent_run_is_told_another_run_is_writing(source, tmp_path, capsys):
    out = tmp_path / "released.h5"
    parts = tmp_path / "released.h5.parts"
    parts.mkdir()
    with open(parts / "lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert _anonymize(source, out, "--method", "raw") == 2
    assert f"another run is writing {out}" in capsys.readouterr().err
    assert _anonymize(source, out, "--method", "raw") == 0  # the lock went with its holder


def test_an_orphan_parts_folder_does_not_block_the_corrected_rerun(source, tmp_path, capsys):
    out = tmp_path / "released.h5"
    parts = tmp_path / "released.h5.parts"
    assert _anonymize(source, out, "--model", str(tmp_path / "missing.pt")) == 2
    assert "missing.pt" in capsys.readouterr().err and not parts.exists()  # inputs checked first
    parts.mkdir()
    (parts / "run.json").write_text('{"settings": {"seed": 99}}')  # an older run that wrote no part
    (parts / ".part-00000.h5.x1y2.tmp").write_bytes(b"half")
    assert _anonymize(source, out, "--method", "raw") == 0 and not parts.exists()


@pytest.mark.parametrize("args, message", [
    (["--method", "raw", "--keep", "subject"], "cannot keep subject"),
    (["--method", "raw", "--length", "1"], "--length must be"),
    (["--method", "raw", "--length", "long"], "--length must be"),
    (["--method", "raw", "--batch", "0"], "--batch must be 'auto' or a clip count"),
    (["--model", str(MODEL), "--device", "cpu", "--precision", "bf16"], "--precision bf16 runs on a CUDA device"),
    (["--model", str(MODEL), "--device", "cpu", "--cuda-graph"], "--cuda-graph needs a CUDA device"),
    (["--method", "naive", "--precision", "bf16", "--device", "cuda"], "apply to a model checkpoint"),
])
def test_bad_options_are_refused_before_any_work(source, tmp_path, capsys, args, message):
    out = tmp_path / "released.h5"
    assert _anonymize(source, out, *args) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "released.h5.parts").exists()


def test_the_model_batch_is_a_setting_of_the_run(source, tmp_path, monkeypatch, capsys):
    """A batch's arithmetic depends on its size: a resume with another --batch would mix two releases."""
    out = tmp_path / "released.h5"
    real_write = ClipLibrary.write

    def crash_on_second_part(path, clips, *args, **kwargs):
        if str(path).endswith("part-00001.h5"):
            raise KeyboardInterrupt
        return real_write(path, clips, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(ClipLibrary, "write", staticmethod(crash_on_second_part))
        assert _anonymize(source, out, "--model", str(MODEL), "--device", "cpu", "--batch", "2") == 130
    assert json.loads((tmp_path / "released.h5.parts" / "run.json").read_text())["settings"]["batch"] == 2
    assert _anonymize(source, out, "--model", str(MODEL), "--device", "cpu") == 2
    assert "other settings" in capsys.readouterr().err
    assert _anonymize(source, out, "--model", str(MODEL), "--device", "cpu", "--batch", "2") == 0


def test_an_input_or_foreign_file_is_never_replaced(source, tmp_path, capsys):
    before = source.read_bytes()
    assert _anonymize(source, source, "--method", "raw") == 2
    assert "also an input" in capsys.readouterr().err and source.read_bytes() == before
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    assert _anonymize(source, notes, "--method", "raw") == 2
    assert "--overwrite" in capsys.readouterr().err and notes.read_text() == "mine"
    assert _anonymize(source, notes, "--method", "raw", "--overwrite") == 0
    assert release_attributes(notes)["release_format"] == "dtmr-release"


KILLED_RUN = """
import sys, time
from dtmr.io.library import ClipLibrary
from dtmr.release import anonymize
from dtmr.cli import main
anonymize.CHUNK = 4
write = ClipLibrary.write  # what writes each part (chunks.py)
def slow_after_the_first_part(path, clips, *a, **k):
    if str(path).endswith("part-00001.h5"):
        time.sleep(120)  # killed here
    return write(path, clips, *a, **k)
ClipLibrary.write = staticmethod(slow_after_the_first_part)
sys.exit(main(["anonymize", sys.argv[1], "--method", "naive", "-o", sys.argv[2]]))
"""


@pytest.mark.slow
def test_kill_9_then_rerun_completes_the_same_release(source, tmp_path):
    out = tmp_path / "released.h5"
    parts = tmp_path / "released.h5.parts"
    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(source), str(out)])
    try:
        deadline = time.monotonic() + 120
        while not (parts / "part-00000.h5").is_file() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert (parts / "part-00000.h5").is_file() and not out.exists()
    state = json.loads((parts / "run.json").read_text())
    with ClipLibrary(parts / "part-00000.h5") as part:
        kept = [release_joints(c.joints, c.topology).tobytes() for c in part.read_all()]
    assert _anonymize(source, out, "--method", "naive") == 0  # the dead run's lock is gone
    library, key = open_release(out)
    with library:
        assert key.source_indices().tolist() == state["order"] and key.release_token == state["release_token"]
        assert [library.read(k).joints.tobytes() for k in range(len(kept))] == kept
    assert not parts.exists()


def test_a_finished_release_and_a_key_of_another_run_are_kept(source, tmp_path, capsys):
    """Issue 43: a rerun into a finished release, or beside a key its unfinished run did not write, stops with
    one line; --overwrite replaces them."""
    out = tmp_path / "released.h5"
    assert _anonymize(source, out, "--method", "naive") == 0
    before = out.read_bytes(), key_path_for(out).read_bytes()
    capsys.readouterr()
    assert _anonymize(source, out, "--method", "naive") == 2
    assert "use --overwrite to replace it" in capsys.readouterr().err
    assert (out.read_bytes(), key_path_for(out).read_bytes()) == before
    other = tmp_path / "other.h5"
    key_path_for(other).write_bytes(key_path_for(out).read_bytes())  # a key this run did not write
    parts = tmp_path / "other.h5.parts"
    parts.mkdir()
    (parts / "run.json").write_text(json.dumps({"release_token": "another run"}))
    assert _anonymize(source, other, "--method", "naive") == 2
    assert "other.key.json: this file exists and is a DTMR release key" in capsys.readouterr().err
    assert _anonymize(source, out, "--method", "naive", "--overwrite") == 0
