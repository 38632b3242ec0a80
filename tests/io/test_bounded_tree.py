"""Issue 43: trees a file can make cheap to store and costly to walk are refused by one line naming the file,
in seconds: self-sharing lists 64 levels deep, one array shared by thousands of annotations, integers of
thousands of digits, array shapes of huge numbers, in a pickle or in a checkpoint's metadata."""

from __future__ import annotations

import pickle
import time

import numpy as np
import pytest
import torch

from dtmr.errors import CheckpointError, InputError
from dtmr.io.bounded_tree import TreeBounds, check_tree
from dtmr.io.safe_pickle import load_data_pickle
from dtmr.io.sources import open_clip_source
from dtmr.models.checkpoints.header import load_untrusted


def _self_sharing(levels: int) -> list:
    tree: list = []
    for _ in range(levels):
        tree = [tree, tree]  # 2^levels paths, `levels` objects
    return tree


def _annotation(keypoint, label=0, name="S001C001P001R001A001"):
    return {"frame_dir": name, "label": label, "keypoint": keypoint, "total_frames": keypoint.shape[1]}


def _refused(path, *fragments):
    started = time.monotonic()
    with pytest.raises(InputError) as info:
        open_clip_source(path)
    assert time.monotonic() - started < 30
    message = str(info.value)
    assert str(path) in message and "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_lists_that_share_themselves_are_refused_by_depth_and_by_count(tmp_path):
    deep = tmp_path / "deep.pkl"
    deep.write_bytes(pickle.dumps({"annotations": _self_sharing(64)}))
    assert deep.stat().st_size < 8000
    _refused(deep, "nested more than 32 levels deep")
    with pytest.raises(InputError, match="more than 1,000 entries"):
        check_tree(_self_sharing(20), "x.pkl", "pickle", TreeBounds(max_nodes=1000))  # shallow enough, too many


def test_one_array_shared_by_many_annotations_is_refused_before_becoming_clips(tmp_path):
    keypoint = np.zeros((1, 300, 25, 3), dtype=np.float32)  # 90 KB, 20,000 references: 1.8 GB of clips
    path = tmp_path / "shared.pkl"
    path.write_bytes(pickle.dumps({"annotations": [_annotation(keypoint, name=f"S001C001P001R001A{i:03d}")
                                                   for i in range(20_000)]}))
    _refused(path, "shared ones counted each time")


def test_labels_and_integers_out_of_range_are_one_line_errors(tmp_path):
    keypoint = np.zeros((1, 4, 25, 3), dtype=np.float32)
    label = tmp_path / "label.pkl"
    label.write_bytes(pickle.dumps({"annotations": [_annotation(keypoint, label=2**63)]}))
    _refused(label, "'label' must be an integer from", "got one of 64 bits")  # OverflowError before
    huge = tmp_path / "huge.pkl"
    huge.write_bytes(pickle.dumps({"annotations": [_annotation(keypoint)], "n": 10**5000}))
    _refused(huge, "an integer of 16610 bits")
    wide = tmp_path / "wide.pkl"
    wide.write_bytes(pickle.dumps({"annotations": [_annotation(keypoint, label=2**40)]}))
    _refused(wide, "'label' must be an integer from")


class _HugeShape:
    def __reduce__(self):
        return np.ndarray, ((10**300,) * 32, "<f4", bytearray())


def test_an_array_shape_of_huge_sizes_is_refused_before_multiplying(tmp_path):
    path = tmp_path / "shape.pkl"
    path.write_bytes(pickle.dumps({"annotations": [_HugeShape()]}))
    started = time.monotonic()
    with pytest.raises(InputError, match="is not a tuple of sizes"):
        load_data_pickle(path)
    assert time.monotonic() - started < 5


def test_a_checkpoint_whose_metadata_shares_itself_is_refused(tmp_path):
    path = tmp_path / "model.pt"
    torch.save({"format": "dtmr-checkpoint", "version": 1, "config": {"x": _self_sharing(64)},
                "state_dict": {"w": torch.zeros(2)}}, path)
    started = time.monotonic()
    with pytest.raises(CheckpointError, match="nested more than 32 levels deep"):
        load_untrusted(path, "cpu", mmap=False)
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("reader", ["review export", "review merge"])
def test_sidecars_nested_too_deeply_or_with_huge_numbers_are_one_line_errors(tmp_path, reader, capsys):
    from dtmr.cli import main

    deep = tmp_path / "lib.h5.review.a.json"
    deep.write_text('{"format": "dtmr-review", "version": 1, "library": ' + "[" * 100_000 + "]" * 100_000 + "}")
    digits = tmp_path / "lib.h5.review.b.json"
    digits.write_text('{"format": "dtmr-review", "version": 1, "library": {"name": "x", "clips": ' + "9" * 5000
                      + ', "names_crc32": 1}, "annotator": "b", "clips": {}}')
    for path, message in ((deep, "nested too deeply"), (digits, "a number of more than 4,300 digits")):
        argv = ["review", *reader.split()[1:], str(path), *(["-o", str(tmp_path / "out.csv")]
                                                            if reader == "review export" else [str(path)])]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and str(path) in err and message in err, err


def test_a_key_or_an_audit_nested_too_deeply_is_an_input_error(tmp_path):
    from dtmr.audit.audit_json import read_audit_json
    from dtmr.release.key import read_key

    nested = "[" * 100_000 + "]" * 100_000
    (tmp_path / "r.key.json").write_text(nested)
    (tmp_path / "audit.json").write_text(nested)
    with pytest.raises(InputError, match="nested too deeply"):
        read_key(tmp_path / "r.key.json")
    with pytest.raises(InputError, match="nested too deeply"):
        read_audit_json(tmp_path / "audit.json")


def test_a_library_label_past_int64_is_refused_as_in_an_npz(tmp_path):
    """Issue 43: a uint64 subject of 2^63 with a valid checksum read as "unknown" before."""
    import h5py

    from dtmr.data.synthetic import generate_clips
    from dtmr.io import library as library_module
    from dtmr.io.library import ClipLibrary

    path = tmp_path / "lib.h5"
    ClipLibrary.create(path, generate_clips(subjects=2, actions=1, repetitions=1, seed=0)).close()
    with h5py.File(path, "r+") as h5:
        del h5["clips/subject"]
        ds = h5["clips"].create_dataset("subject", data=np.array([1, 2**63], dtype=np.uint64), maxshape=(None,),
                                        chunks=(1024,), fletcher32=True)
        ds.attrs["crc32"] = library_module._checksum(ds[()])  # a valid checksum: the file is not damaged
    with pytest.raises(InputError, match="'subject' holds a value too large for a label"):
        open_clip_source(path).metadata_table()
