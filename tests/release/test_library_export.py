"""Whole-library export (dtmr.release.export, `dtmr data export LIB -o OUT.npz|OUT.pkl|OUT/`): each format
read back, releases exported with their ids only, and the errors a user can hit."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from dtmr.cli import main
from dtmr.data.clip import Clip
from dtmr.errors import DtmrError, InputError
from dtmr.io.library import ClipLibrary
from dtmr.io.npz_dataset import read_npz_dataset
from dtmr.io.ntu_skeleton import read_ntu_clip
from dtmr.io.pyskl_pickle_reader import load_annotation_pickle
from dtmr.release.export import export_library

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "resources" / "demo" / "demo_library.h5"
#: six demo clips of subjects 1 and 2 (the demo holds 36 clips per subject), several actions and repetitions
DEMO_CLIPS = [0, 1, 13, 36, 37, 50]


def read_annotations(path: Path) -> dict:
    """The exported pickle, loaded by the project's restricted reader (plain data and arrays only)."""
    data = path.read_bytes()
    assert data[:2] == b"\x80\x04"  # protocol 4
    # arrays go through numpy.ndarray + bytearray, never NumPy's own reducer: NumPy 2's names `numpy._core`
    # (which NumPy < 1.26, common in PYSKL environments, cannot import)
    assert b"_reconstruct" not in data and b"_core" not in data
    return load_annotation_pickle(path)


@pytest.fixture
def demo_clips() -> list[Clip]:
    with ClipLibrary(DEMO) as demo:
        return demo.read_many(DEMO_CLIPS)


@pytest.fixture
def library(tmp_path, demo_clips) -> Path:
    path = tmp_path / "lib.h5"
    with ClipLibrary(DEMO) as demo:
        names = demo.action_names
    ClipLibrary.create(path, demo_clips, action_names=names).close()
    return path


def make_release(path: Path, clips: list[Clip], *, provenance: str = "none", dirty: bool = False) -> Path:
    """A release as the contract lays it out: ids R000001.., no subject / source / extra, release attributes.
    `dirty` keeps the subject, source file and extra in the clips, to check that the export scrubs anyway."""
    order = np.random.default_rng(5).permutation(len(clips))
    released = []
    for n, i in enumerate(order.tolist(), 1):
        clip = clips[i]
        if dirty:
            released.append(clip.replace(sample_name=f"R{n:06d}", source_file="/data/raw/lib.h5"))
        else:
            released.append(Clip(joints=clip.joints, fps=clip.fps, action=clip.action, sample_name=f"R{n:06d}"))
    with ClipLibrary(DEMO) as demo:
        names = demo.action_names
    ClipLibrary.create(path, released, action_names=names).close()
    with h5py.File(path, "r+") as h5:
        h5.attrs.update({"release_format": "dtmr-release", "release_version": 1, "method": "dtmr", "beta": 0.2,
                         "model": "m.pt", "kept": "[]", "length": "keep", "provenance": provenance,
                         "release_token": "ab" * 16})
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- ordinary library ---------------------------------------------------------------------------------------
def test_npz_round_trip(tmp_path, library, demo_clips, capsys):
    code, out, err = run(capsys, "data", "export", library, "-o", tmp_path / "all.npz")
    assert code == 0, err
    assert "6 clips" in out
    back = read_npz_dataset(tmp_path / "all.npz")
    assert back.topology == "ntu25"
    with ClipLibrary(library) as lib:
        assert back.action_names == lib.action_names
    for clip, original in zip(back.clips, demo_clips, strict=True):
        np.testing.assert_array_equal(clip.joints, original.joints)
        assert (clip.sample_name, clip.subject, clip.action, clip.repetition) == (
            original.sample_name, original.subject, original.action, original.repetition)


def test_pickle_round_trip_with_and_without_split(tmp_path, library, demo_clips):
    result = export_library(library, tmp_path / "all.pkl")
    assert result.splits == {"all": 6}
    data = read_annotations(tmp_path / "all.pkl")
    assert set(data) == {"split", "annotations"}
    annotations = data["annotations"]
    assert [a["frame_dir"] for a in annotations] == [c.sample_name for c in demo_clips]
    assert data["split"] == {"all": [c.sample_name for c in demo_clips]}
    for annotation, clip in zip(annotations, demo_clips, strict=True):
        assert set(annotation) == {"frame_dir", "label", "keypoint", "total_frames"}
        assert type(annotation["label"]) is int and type(annotation["total_frames"]) is int
        assert annotation["label"] == clip.action - 1  # the demo numbers actions from 1, PYSKL from 0
        keypoint = annotation["keypoint"]
        assert keypoint.dtype == np.float32 and keypoint.shape == (1, clip.num_frames, 25, 3)
        assert annotation["total_frames"] == clip.num_frames
        assert keypoint.flags.writeable
        np.testing.assert_array_equal(keypoint[0], clip.joints)

    export_library(library, tmp_path / "split.pkl", split="synthetic")
    split = read_annotations(tmp_path / "split.pkl")["split"]
    last = max(c.repetition for c in demo_clips)
    assert split == {
        "synthetic_train": [c.sample_name for c in demo_clips if c.repetition != last],
        "synthetic_val": [c.sample_name for c in demo_clips if c.repetition == last],
    }


def test_missing_joints_become_zero_in_the_pickle(tmp_path, demo_clips):
    joints = demo_clips[0].joints.copy()
    joints[3, 7] = np.nan
    path = tmp_path / "nan.h5"
    ClipLibrary.create(path, [demo_clips[0].replace(joints=joints)]).close()
    export_library(path, tmp_path / "nan.pkl")
    keypoint = read_annotations(tmp_path / "nan.pkl")["annotations"][0]["keypoint"]
    assert not np.isnan(keypoint).any()
    np.testing.assert_array_equal(keypoint[0, 3, 7], 0.0)


def test_skeleton_folder_round_trip(tmp_path, library, demo_clips, capsys):
    code, out, err = run(capsys, "data", "export", library, "-o", f"{tmp_path / 'skeletons'}/")
    assert code == 0, err
    files = sorted((tmp_path / "skeletons").glob("*.skeleton"))
    assert len(files) == len(demo_clips)
    by_name = {c.sample_name: c for c in demo_clips}
    for file in files:
        clip = read_ntu_clip(file)
        stem, _, sample_name = file.stem.partition("_")  # the demo's names are not NTU names: kept after "_"
        original = by_name[sample_name]
        np.testing.assert_array_equal(clip.joints, original.joints)
        assert (clip.subject, clip.action, clip.view, clip.repetition) == (
            original.subject, original.action, original.view, original.repetition)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left

    code, _, err = run(capsys, "data", "export", library, "-o", f"{tmp_path / 'skeletons'}/")
    assert code == 2 and "--overwrite" in err
    (tmp_path / "skeletons" / "notes.txt").write_text("mine")
    code, _, err = run(capsys, "data", "export", library, "-o", f"{tmp_path / 'skeletons'}/", "--overwrite")
    assert code == 0, err
    assert sorted((tmp_path / "skeletons").glob("*.skeleton")) == files  # replaced in place, nothing else touched
    assert (tmp_path / "skeletons" / "notes.txt").read_text() == "mine"


# -- releases ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dirty", [False, True])
def test_release_exports_ids_only(tmp_path, demo_clips, dirty):
    release = make_release(tmp_path / "released.h5", demo_clips, dirty=dirty)
    with ClipLibrary(release) as lib:
        ids = lib.column("sample_name").tolist()
    source_names = [c.sample_name for c in demo_clips]

    export_library(release, tmp_path / "r.npz")
    back = read_npz_dataset(tmp_path / "r.npz")
    assert [c.sample_name for c in back.clips] == ids
    assert all(c.subject is None and c.extra == {} for c in back.clips)
    assert all(c.source_file == str(tmp_path / "r.npz") for c in back.clips)  # none written: the reader's default

    result = export_library(release, tmp_path / "r.pkl")
    assert result.release and result.splits == {"release": 6}
    data = read_annotations(tmp_path / "r.pkl")
    assert data["split"] == {"release": ids}
    assert [a["frame_dir"] for a in data["annotations"]] == ids

    export_library(release, f"{tmp_path}/r_skeletons/")
    stems = sorted(p.stem for p in (tmp_path / "r_skeletons").iterdir())
    with ClipLibrary(release) as lib:  # view and repetition are in the release's columns (-1 unless kept)
        columns = zip(ids, *(np.maximum(lib.column(name), 0).tolist() for name in ("view", "repetition", "action")))
    assert stems == sorted(f"S000C{c:03d}P000R{r:03d}A{a:03d}_{i}" for i, c, r, a in columns)
    for path in (tmp_path / "r_skeletons").iterdir():
        assert read_ntu_clip(path).subject == 0  # P000: no performer

    for exported in (tmp_path / "r.npz", tmp_path / "r.pkl", *(tmp_path / "r_skeletons").iterdir()):
        raw = exported.read_bytes() if exported.suffix != ".npz" else b"".join(
            np.load(exported)[name].tobytes() for name in np.load(exported).files)
        for text in (*source_names, "/data/raw", "lib.h5"):
            assert text.encode() not in raw and text.encode("utf-32-le") not in raw, (exported, text)


def test_release_with_provenance_exports_as_a_library_and_warns(tmp_path, demo_clips, capsys):
    release = make_release(tmp_path / "internal.h5", demo_clips, provenance="included", dirty=True)
    code, out, err = run(capsys, "data", "export", release, "-o", tmp_path / "i.pkl")
    assert code == 0
    assert "with-provenance" in err and "release ids" not in out
    assert read_annotations(tmp_path / "i.pkl")["split"].keys() == {"all"}


# -- errors ----------------------------------------------------------------------------------------------
def test_export_errors(tmp_path, library, demo_clips, rng, capsys):
    v1 = tmp_path / "v1.h5"
    ClipLibrary.create(v1, [Clip(joints=rng.normal(size=(5, 20, 3)), topology="kinect_v1_20", action=1)]).close()
    with pytest.raises(InputError, match="ntu25"):
        export_library(v1, f"{tmp_path}/v1/")
    assert not (tmp_path / "v1").exists()
    with pytest.raises(DtmrError, match="--split applies to .pkl"):
        export_library(library, tmp_path / "x.npz", split="synthetic")
    release = make_release(tmp_path / "released.h5", demo_clips)
    with pytest.raises(DtmrError, match="one split, 'release'"):
        export_library(release, tmp_path / "r.pkl", split="synthetic")
    with pytest.raises(DtmrError, match="unknown split"):
        export_library(library, tmp_path / "x.pkl", split="nope")
    unlabelled = tmp_path / "unlabelled.h5"
    ClipLibrary.create(unlabelled, [demo_clips[0].replace(action=None)]).close()
    with pytest.raises(InputError, match="no action label"):
        export_library(unlabelled, tmp_path / "u.pkl")
    code, _, err = run(capsys, "data", "export", library, "-o", tmp_path / "x.csv")
    assert code == 2 and "unknown export format" in err and "x.csv" in err
    code, _, err = run(capsys, "data", "export", library, "-o", library.with_suffix(".pkl"), "--clip", "0",
                       "--split", "synthetic")
    assert code == 2 and "without --clip" in err
    code, _, err = run(capsys, "data", "export", library, "-o", f"{tmp_path}/")
    assert code == 2 and "holds the input" in err
    assert not list(tmp_path.glob("*.pkl")) and not list(tmp_path.glob("*.npz"))
