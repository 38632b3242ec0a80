"""HDF5 clip library: round trips, filters, lazy opening, crash safety, damaged files."""

from __future__ import annotations

import zlib

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io import hdf5_watchdog
from dtmr.io.library import ClipLibrary, stored_form


def make_clips(rng, count=6, topology="ntu25", joints=25):
    clips = []
    for i in range(count):
        data = rng.normal(size=(int(rng.integers(3, 40)), joints, 3)).astype(np.float32)
        if i == 2:
            data[1, 3] = np.nan
        clips.append(Clip(
            joints=data, topology=topology, fps=30.0 if i % 2 else 25.0,
            subject=i % 3 + 1, action=i % 2 + 5, view=None if i == 4 else i % 3,
            repetition=i // 3, sample_name=f"s{i}", source_file=f"/data/f{i}.skeleton" if i < 3 else None,
            extra={"source_clip": f"raw{i}", "beta": "0.2"} if i % 2 else {},
        ))
    return clips


def assert_same_clip(a: Clip, b: Clip) -> None:
    np.testing.assert_array_equal(a.joints, b.joints)
    assert a.metadata() == b.metadata()


def test_create_and_read_back_everything(rng, tmp_path):
    clips = make_clips(rng)
    path = tmp_path / "lib.h5"
    with ClipLibrary.create(path, clips, action_names=["wave", "clap"]) as library:
        assert len(library) == 6 and library.topology == "ntu25"
        assert library.action_names == ["wave", "clap"]
        for i, clip in enumerate(clips):
            assert_same_clip(clip, library.read(i))
            assert library.metadata(i) == clip.metadata()
        for a, b in zip(clips, library.read_all()):
            assert_same_clip(a, b)
        for a, b in zip([clips[4], clips[1]], library.read_many([4, 1])):
            assert_same_clip(a, b)
        flat, offsets = library.read_all_joints()
        np.testing.assert_array_equal(flat[offsets[5]:offsets[6]], clips[5].joints)
        np.testing.assert_array_equal(library.num_frames, [c.num_frames for c in clips])
        assert_same_clip(clips[-1], library.read(-1))
        with pytest.raises(IndexError):
            library.read(6)


def test_metadata_table_and_filters(rng, tmp_path):
    clips = make_clips(rng)
    with ClipLibrary.create(tmp_path / "lib.h5", clips) as library:
        table = library.metadata_table()
        assert table["subject"].tolist() == [1, 2, 3, 1, 2, 3]
        assert table["view"].tolist() == [0, 1, 2, 0, -1, 2]
        assert table["sample_name"].tolist() == [f"s{i}" for i in range(6)]
        assert table["source_file"].tolist()[3] == ""
        assert table["extra"][1] == {"source_clip": "raw1", "beta": "0.2"} and table["extra"][0] == {}
        assert table["num_frames"].tolist() == [c.num_frames for c in clips]
        assert library.find(subject=1).tolist() == [0, 3]
        assert library.find(subject=[1, 2], action=5).tolist() == [0, 4]
        assert library.find(view=None).tolist() == [4]
        assert library.find(sample_name="s5").tolist() == [5]
        assert library.find(source_file=None).tolist() == [3, 4, 5]
        assert library.find(source_clip="raw3").tolist() == [3]
        assert library.find(beta="0.2", subject=3).tolist() == [5]
        assert library.find(fps=25.0).tolist() == [0, 2, 4]
        assert library.find(subject=99).tolist() == []


def test_append_adds_clips_and_action_names(rng, tmp_path):
    clips = make_clips(rng, 8)
    path = tmp_path / "lib.h5"
    with ClipLibrary.create(path, clips[:5]) as library:
        library.append(clips[5:], action_names=["a", "b"])
        assert len(library) == 8 and library.action_names == ["a", "b"]
        for i, clip in enumerate(clips):
            assert_same_clip(clip, library.read(i))
    with ClipLibrary(path) as reopened:
        assert len(reopened) == 8
        assert_same_clip(clips[7], reopened.read(7))


def test_streaming_create_spans_several_batches(rng, tmp_path, monkeypatch):
    import dtmr.io.library as library_module

    monkeypatch.setattr(library_module, "_BATCH_CLIPS", 3)
    clips = make_clips(rng, 10)
    with ClipLibrary.create(tmp_path / "lib.h5", iter(clips)) as library:
        assert len(library) == 10
        for a, b in zip(clips, library.read_all()):
            assert_same_clip(a, b)


def test_undecodable_file_names_are_stored(rng, tmp_path):
    clip = make_clips(rng, 1)[0].replace(sample_name="S001\udcff", source_file="/data/\udcfe.skeleton")
    with ClipLibrary.create(tmp_path / "lib.h5", [clip]) as library:
        assert library.metadata(0)["sample_name"] == "S001?"
        assert library.metadata(0)["source_file"] == "/data/?.skeleton"


def test_empty_library_needs_a_topology(tmp_path):
    with pytest.raises(InputError, match="no clips"):
        ClipLibrary.create(tmp_path / "e.h5", [])
    with ClipLibrary.create(tmp_path / "e.h5", [], topology="coco17") as library:
        assert len(library) == 0 and library.topology == "coco17"
        assert library.metadata_table()["subject"].tolist() == []


def test_one_topology_per_library(rng, tmp_path):
    path = tmp_path / "lib.h5"
    ClipLibrary.create(path, make_clips(rng, 2)).close()
    before = path.read_bytes()
    other = make_clips(rng, 1, topology="kinect_v1_20", joints=20)
    with ClipLibrary(path) as library, pytest.raises(InputError, match="joint sets cannot be mixed"):
        library.append(other)
    assert path.read_bytes() == before
    with pytest.raises(InputError, match="joint sets cannot be mixed"):
        ClipLibrary.create(tmp_path / "mixed.h5", make_clips(rng, 2) + other)
    assert not (tmp_path / "mixed.h5").exists()


def test_conflicting_action_names_are_refused(rng, tmp_path):
    path = tmp_path / "lib.h5"
    with ClipLibrary.create(path, make_clips(rng, 2), action_names=["a"]) as library:
        with pytest.raises(InputError, match="action names"):
            library.append(make_clips(rng, 1), action_names=["b"])
        assert len(library) == 2


def test_failed_append_leaves_the_file_byte_identical(rng, tmp_path):
    path = tmp_path / "lib.h5"
    clips = make_clips(rng, 6)
    ClipLibrary.create(path, clips[:3]).close()
    before = path.read_bytes()

    def clips_then_crash():
        yield from clips[3:]
        raise RuntimeError("simulated crash")

    with ClipLibrary(path) as library:
        with pytest.raises(RuntimeError, match="simulated crash"):
            library.append(clips_then_crash())
        assert len(library) == 3
        assert_same_clip(clips[2], library.read(2))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.h5"]


def test_failed_create_keeps_the_old_file(rng, tmp_path, monkeypatch):
    path = tmp_path / "lib.h5"
    ClipLibrary.create(path, make_clips(rng, 2)).close()
    before = path.read_bytes()

    import dtmr.io.library as library_module

    def crash(self):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(library_module._ClipWriter, "flush", crash)
    with pytest.raises(OSError, match="simulated"):
        ClipLibrary.create(path, make_clips(rng, 4))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.h5"]


def test_opening_reads_no_joints(rng, tmp_path, monkeypatch):
    path = tmp_path / "lib.h5"
    ClipLibrary.create(path, make_clips(rng, 5)).close()
    read = []
    original = h5py.Dataset.__getitem__

    def spy(self, key):
        read.append(self.name)
        return original(self, key)

    monkeypatch.setattr(h5py.Dataset, "__getitem__", spy)
    library = ClipLibrary(path)
    assert read == ["/offsets"]
    library.metadata_table()
    assert "/joints_flat" not in read
    library.read(3)
    assert read.count("/joints_flat") == 1
    library.close()


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda p: p.write_bytes(b"not an hdf5 file at all" * 10), "corrupted or unreadable"),
        (lambda p: p.write_bytes(b""), "corrupted or unreadable"),
        (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "corrupted or unreadable"),
    ],
)
def test_damaged_file_is_an_input_error(rng, tmp_path, damage, words):
    path = tmp_path / "lib.h5"
    ClipLibrary.create(path, make_clips(rng, 4)).close()
    damage(path)
    with pytest.raises(InputError, match=words) as info:
        with ClipLibrary(path) as library:
            library.read_all()
    assert info.value.path == str(path)


def set_value(f: h5py.File, name: str, i: int, value) -> None:
    """Change one value and keep the dataset's checksum valid (CRC-32 of the raw numbers, or of the strings
    joined by NUL), to test the checks that lie behind the checksum."""
    ds = f[name]
    ds[i] = value
    if ds.dtype.kind == "O":
        ds.attrs["crc32"] = zlib.crc32("\0".join(ds.asstr()[()].tolist()).encode())
    else:
        ds.attrs["crc32"] = zlib.crc32(ds[()].tobytes())


def replace_column(f: h5py.File, name: str, values: np.ndarray) -> None:
    """Replace column `name` with `values` of another type, with a valid checksum."""
    del f["clips"][name]
    ds = f["clips"].create_dataset(name, data=values, dtype=h5py.string_dtype() if values.dtype.kind == "O" else None)
    raw = "\0".join(values.tolist()).encode() if values.dtype.kind == "O" else values.tobytes()
    ds.attrs["crc32"] = zlib.crc32(raw)


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda f: f.attrs.__setitem__("format", "something-else"), "not a dtmr-clip-library"),
        (lambda f: f.attrs.__setitem__("version", 99), "newer"),
        (lambda f: f.attrs.__setitem__("topology", "octopus"), "unknown topology"),
        (lambda f: set_value(f, "offsets", 2, 1000), "'offsets' must increase"),
        (lambda f: f["offsets"].__setitem__(2, 1), "'/offsets' fails its checksum"),
        (lambda f: f["clips"]["subject"].__setitem__(0, 7), "'/clips/subject' fails its checksum"),
        (lambda f: f["clips"]["subject"].resize((2,)), "clips/subject"),
        (lambda f: f.__delitem__("joints_flat"), "corrupted or unreadable"),
        (lambda f: f["joints_flat"].__setitem__(0, 0.0), "the joints of clip 0 fail their checksum"),
        (lambda f: f["action_names"].__setitem__(0, "run"), "'/action_names' fails its checksum"),
        (lambda f: set_value(f, "clips/extra", 1, "[1, 2]"), "not a JSON object"),
        (lambda f: set_value(f, "clips/extra", 1, "{oops"), "corrupted or unreadable"),
        (lambda f: f["clips"]["sample_name"].__setitem__(1, "renamed"), "'/clips/sample_name' fails its checksum"),
        # issue 20: a library without its version was read as version 0
        (lambda f: f.attrs.__delitem__("version"), "no valid 'version'"),
        (lambda f: f.attrs.__setitem__("version", 0), "no valid 'version'"),
        (lambda f: f.attrs.__setitem__("version", "1"), "no valid 'version'"),
        # issue 20: strings in an integer column, checksum fixed up, gave a traceback from `_column`
        (lambda f: replace_column(f, "subject", np.array(["x", "y", "z", "w"], dtype=object)), "must hold integers"),
        (lambda f: replace_column(f, "subject", np.array([b"x", b"y", b"z", b"w"])), "must hold integers"),
    ],
)
def test_inconsistent_library_is_an_input_error(rng, tmp_path, edit, words):
    path = tmp_path / "lib.h5"
    ClipLibrary.create(path, make_clips(rng, 4), action_names=["walk"]).close()
    with h5py.File(path, "r+") as f:
        edit(f)
    with pytest.raises(InputError, match=words):
        with ClipLibrary(path) as library:
            library.read_all()
            library.action_names


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        ClipLibrary(tmp_path / "nope.h5")


def _good_library() -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "good.h5"
        ClipLibrary.create(path, make_clips(np.random.default_rng(3), 4)).close()
        return path.read_bytes()


GOOD = _good_library()
GOOD_CLIPS = make_clips(np.random.default_rng(3), 4)


# Derandomized (fixed draws, so CI never meets a new case by chance; scripts/fuzz_readers.py explores at
# random) with the issue-20 cases as explicit examples: junk in the size field of the global heap that holds
# the root group's string attributes (offset 2056 of this file) made libhdf5 spin forever; the watchdog now
# refuses it after its deadline (shortened here).
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(0, len(GOOD) - 1), junk=st.binary(min_size=1, max_size=16), cut=st.booleans())
@example(at=2056, junk=b"\x81\x81", cut=False)
@example(at=2056, junk=b"\xff\xff", cut=False)
@example(at=2056, junk=b"\x81", cut=False)
@example(at=2056, junk=b"\0" * 16, cut=False)
def test_damaged_bytes_give_valid_clips_or_an_input_error(tmp_path, monkeypatch, at, junk, cut):
    monkeypatch.setattr(hdf5_watchdog, "DEADLINE_S", 5.0)
    path = tmp_path / "damaged.h5"
    path.write_bytes(GOOD[:at] if cut else GOOD[:at] + junk + GOOD[at + len(junk):])
    try:
        with ClipLibrary(path) as library:
            clips = library.read_all()
            library.metadata_table()
    except InputError as exc:
        assert exc.path == str(path) and "\n" not in str(exc)
    else:  # never wrong data: what is read is exactly what was written
        assert len(clips) == len(GOOD_CLIPS)
        for written, read in zip(GOOD_CLIPS, clips):
            assert_same_clip(written, read)


def _checksums(path) -> dict[str, int]:
    with h5py.File(path, "r") as h5:
        datasets = {"offsets": h5["offsets"], **{name: ds for name, ds in h5["clips"].items()}}
        return {name: int(ds.attrs["crc32"]) for name, ds in datasets.items()}


def _recomputed(path) -> dict[str, int]:
    from dtmr.io.library import _checksum

    with h5py.File(path, "r") as h5:
        datasets = {"offsets": h5["offsets"], **{name: ds for name, ds in h5["clips"].items()}}
        return {name: _checksum(ds.asstr()[()] if ds.dtype.kind == "O" else ds[()]) for name, ds in datasets.items()}


@pytest.mark.parametrize("batch", [1, 3, 4096])
def test_running_checksums_of_a_new_file_equal_those_of_its_contents(rng, tmp_path, batch):
    clips = make_clips(rng, 7)
    clips[1] = clips[1].replace(sample_name="ünï€ode", extra={"note": "naïve ✓", "x": ""})
    clips[5] = clips[5].replace(sample_name="")
    path = tmp_path / "lib.h5"
    ClipLibrary.write(path, clips, batch_clips=batch)
    assert set(_checksums(path)) >= {"offsets", "extra", "joints_crc32", "fps"}
    assert _checksums(path) == _recomputed(path)
    ClipLibrary.write(tmp_path / "empty.h5", [], topology="ntu25")
    assert _checksums(tmp_path / "empty.h5") == _recomputed(tmp_path / "empty.h5")
    with ClipLibrary(path) as library:  # and the file reads: every checksum is checked on open or first use
        assert [c.sample_name for c in library.read_all()][:2] == ["s0", "ünï€ode"]


def test_a_text_holding_nul_is_stored_with_a_question_mark_and_an_append_checksums_the_file(rng, tmp_path):
    clips = make_clips(rng, 4)
    clips[2] = clips[2].replace(sample_name="a\0b")  # HDF5 strings end at NUL: h5py refuses to write one
    path = tmp_path / "lib.h5"
    ClipLibrary.write(path, clips, batch_clips=2)
    assert _checksums(path) == _recomputed(path)
    with ClipLibrary(path) as library:
        assert library.read(2).sample_name == "a?b"
        library.append(make_clips(rng, 3))
        assert len(library) == 7
    assert _checksums(path) == _recomputed(path)


_TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from(["\0", "\ud800", "é", "✓"]), max_size=8)
_LABEL = st.none() | st.integers(-3, 2**40) | st.booleans()
_EXTRA_VALUE = _TEXT | st.integers(-5, 5) | st.floats(allow_nan=False, width=32) | st.booleans() | st.none()


# What a release part's writer keeps instead of reading its file back (dtmr/release/chunks.py): it must be
# what reading gives, for any metadata a clip can carry.
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(subject=_LABEL, action=_LABEL, fps=st.floats(0.5, 240.0), name=st.none() | _TEXT,
       source=st.none() | _TEXT, extra=st.dictionaries(_TEXT, _EXTRA_VALUE, max_size=4), compress=st.booleans())
def test_the_stored_form_of_a_clip_is_what_reading_it_back_gives(tmp_path, subject, action, fps, name, source,
                                                                  extra, compress):
    clip = Clip(joints=np.arange(2 * 25 * 3, dtype=np.float32).reshape(2, 25, 3) / 7, fps=fps, subject=subject,
                action=action, view=-1, sample_name=name, source_file=source, extra=extra)
    path = tmp_path / "lib.h5"
    ClipLibrary.write(path, [clip, clip.replace(extra={})], compress=compress)
    with ClipLibrary(path) as library:
        read = library.read_all()
    for kept, back in zip((stored_form(clip), stored_form(clip.replace(extra={}))), read):
        assert kept.joints.tobytes() == back.joints.tobytes() and kept.joints.dtype == back.joints.dtype
        assert kept.metadata() == back.metadata()
        assert all(type(kept.metadata()[k]) is type(v) for k, v in back.metadata().items())


def test_an_uncompressed_library_reads_the_same_and_is_still_checksummed(rng, tmp_path):
    clips = make_clips(rng)
    ClipLibrary.write(tmp_path / "plain.h5", clips, compress=False)
    with h5py.File(tmp_path / "plain.h5", "r") as h5:
        assert h5["joints_flat"].compression is None and h5["joints_flat"].fletcher32
    with ClipLibrary(tmp_path / "plain.h5") as library:
        for a, b in zip(clips, library.read_all()):
            assert_same_clip(a, b)
