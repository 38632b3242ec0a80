"""`open_clip_source` / `load_clips`: one interface over .skeleton files, folders, .npz and .h5."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io.library import ClipLibrary
from dtmr.io.npz_dataset import write_npz_dataset
from dtmr.io.ntu_skeleton import write_skeleton_file
from dtmr.io.sources import ClipSource, load_clips, open_clip_source

NAMES = ["S001C001P002R001A003", "S002C002P004R002A005", "S003C003P006R001A007"]


@pytest.fixture
def clips(rng):
    return [
        Clip(joints=rng.normal(0, 0.3, (5 + i, 25, 3)) + (0, 0, 3), subject=i + 1, action=i + 2, view=1,
             repetition=1, sample_name=f"c{i}", extra={"k": str(i)})
        for i in range(3)
    ]


@pytest.fixture
def skeleton_folder(tmp_path, clips):
    folder = tmp_path / "ntu"
    for name, clip in zip(NAMES, clips):
        sub = folder / name[:4]
        write_skeleton_file(sub / f"{name}.skeleton", clip)
    (folder / "notes.txt").write_text("not a clip")
    return folder


def check_source(source, expected: list[Clip], fmt: str, topology: str):
    assert isinstance(source, ClipSource)
    assert source.format == fmt and source.topology == topology and len(source) == len(expected)
    table = source.metadata_table()
    assert set(table) == {"subject", "action", "view", "repetition", "fps", "sample_name", "source_file",
                          "topology", "extra", "num_frames"}
    assert all(len(column) == len(expected) for column in table.values())
    for i, clip in enumerate(expected):
        read = source.read(i)
        np.testing.assert_allclose(read.joints, clip.joints, rtol=1e-6)
        assert source.metadata(i) == read.metadata()
        assert table["num_frames"][i] == read.num_frames
        assert table["subject"][i] == (read.subject if read.subject is not None else -1)
        assert table["extra"][i] == read.extra
    source.close()


def test_folder_of_skeleton_files(skeleton_folder, clips):
    seen = []
    source = open_clip_source(skeleton_folder, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    check_source(source, clips, "ntu-skeleton", "ntu25")
    assert [source.metadata(i)["sample_name"] for i in range(3)] == NAMES
    assert [source.metadata(i)["subject"] for i in range(3)] == [2, 4, 6]  # from the file names


def test_single_skeleton_file(skeleton_folder, clips):
    source = open_clip_source(skeleton_folder / "S002" / f"{NAMES[1]}.skeleton", topology="ntu25")
    check_source(source, clips[1:2], "ntu-skeleton", "ntu25")


def test_npz_and_h5(tmp_path, clips):
    write_npz_dataset(tmp_path / "d.npz", clips, action_names=["x", "y", "z", "w", "v"])
    source = open_clip_source(tmp_path / "d.npz")
    assert source.action_names == ["x", "y", "z", "w", "v"]
    check_source(source, clips, "npz", "ntu25")
    ClipLibrary.create(tmp_path / "d.h5", clips).close()
    check_source(open_clip_source(tmp_path / "d.h5"), clips, "hdf5", "ntu25")
    for path in ("d.npz", "d.h5"):
        loaded = load_clips(tmp_path / path)
        assert [c.metadata() for c in loaded] == [
            {**c.metadata(), "source_file": c.source_file or (str(tmp_path / path) if path == "d.npz" else None)}
            for c in clips
        ]


def test_errors(tmp_path, skeleton_folder, clips):
    with pytest.raises(InputError, match="no such file"):
        open_clip_source(tmp_path / "missing.h5")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .skeleton files"):
        open_clip_source(tmp_path / "empty")
    (tmp_path / "a.csv").write_text("1,2")
    with pytest.raises(InputError, match="unknown kind of file"):
        open_clip_source(tmp_path / "a.csv")
    with pytest.raises(InputError, match="ntu25 joints, not kinect_v1_20"):
        open_clip_source(skeleton_folder, topology="kinect_v1_20")
    with pytest.raises(InputError, match="unknown topology"):
        open_clip_source(skeleton_folder, topology="octopus")
    ClipLibrary.create(tmp_path / "d.h5", clips).close()
    with pytest.raises(InputError, match="holds ntu25 clips, not coco17"):
        open_clip_source(tmp_path / "d.h5", topology="coco17")


def test_load_clips_of_a_folder(skeleton_folder, clips):
    loaded = load_clips(skeleton_folder)
    assert [c.sample_name for c in loaded] == NAMES
    for a, b in zip(loaded, clips):
        np.testing.assert_allclose(a.joints, b.joints, rtol=1e-6)
