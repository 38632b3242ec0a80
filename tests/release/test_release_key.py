"""The release key: written mode 0600, read back equal, every malformed key refused naming the file, and a key
checked against its release (token, count, ids in order, joint checksums) with an error naming both files."""

from __future__ import annotations

import json
import os
import stat
import zlib

import h5py
import numpy as np
import pytest

from dtmr.data.synthetic import generate_clips
from dtmr.errors import DtmrError, InputError
from dtmr.io.library import ClipLibrary
from dtmr.release.key import KeyEntry, ReleaseKey, key_path_for, read_key, write_key
from dtmr.release.release import is_release, open_release, release_metadata


def _release(tmp_path, n=4, token="a" * 32):
    """A hand-made release of n synthetic clips (ids R000001...) and its key, source clips in reverse order."""
    source = generate_clips(subjects=2, actions=2, repetitions=1, seed=0)[:n]
    order = list(range(n))[::-1]
    clips = [source[j].replace(sample_name=f"R{k + 1:06d}", subject=None, source_file=None, extra={})
             for k, j in enumerate(order)]
    path = tmp_path / "released.h5"
    ClipLibrary.create(path, clips).close()
    with h5py.File(path, "r+") as h5:
        h5.attrs["release_format"] = "dtmr-release"
        h5.attrs["release_token"] = token
    entries = [KeyEntry(release_id=c.sample_name, source_index=j, source_clip=source[j].name,
                        subject=source[j].subject, action=source[j].action, view=None, repetition=0,
                        source_frames=source[j].num_frames, reference_index=-1, reference_clip="",
                        reference_subject=None, joints_crc32=zlib.crc32(np.ascontiguousarray(c.joints)))
               for c, j in zip(clips, order)]
    key = ReleaseKey(path=str(key_path_for(path)), release_file=path.name, release_token=token,
                     source_file="/data/in.h5", reference_file="/data/in.h5", method="raw", beta=None,
                     model="raw", seed=0, entries=entries)
    write_key(key)
    return path, key, source, order


def test_key_path_sits_beside_the_release(tmp_path):
    assert key_path_for(tmp_path / "released.h5") == tmp_path / "released.key.json"
    assert key_path_for("out/a.b.h5").name == "a.b.key.json"


def test_key_round_trips_and_is_private(tmp_path):
    path, key, source, order = _release(tmp_path)
    assert stat.S_IMODE(os.stat(key.path).st_mode) == 0o600
    back = read_key(key.path)
    assert back == key
    assert back.source_indices().tolist() == order
    assert back.subjects().tolist() == [source[j].subject for j in order]
    assert back.column("view").tolist() == [-1] * len(order)  # None -> -1
    with pytest.raises(KeyError):
        back.column("source_clip")
    data = json.loads(key_path_for(path).read_text())
    assert data["format"] == "dtmr-release-key" and data["clips"] == len(order) and data["beta"] is None


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="other"), "not a dtmr-release-key"),
    (lambda d: d.update(version=2), "newer than this dtmr"),
    (lambda d: d.update(clips=99), "'clips' says 99"),
    (lambda d: d.update(seed="0"), "'seed' must be an integer"),
    (lambda d: d["entries"][1].pop("subject"), "entry 1 lacks subject"),
    (lambda d: d["entries"][0].update(source_index=True), "entry 0: 'source_index' must be an integer"),
    (lambda d: d["entries"][0].update(subject="3"), "entry 0: 'subject' must be an integer or null"),
    (lambda d: d["entries"][2].update(joints_crc32=-5), "not a 32-bit checksum"),
    (lambda d: d.update(entries={}), "'entries' must be a list"),
])
def test_malformed_keys_are_refused_naming_the_file(tmp_path, change, message):
    _, key, _, _ = _release(tmp_path)
    data = json.loads(open(key.path).read())
    change(data)
    bad = tmp_path / "bad.key.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message) as err:
        read_key(bad)
    assert str(bad) in str(err.value)


def test_unparsable_key_is_an_input_error(tmp_path):
    bad = tmp_path / "bad.key.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not a readable release key"):
        read_key(bad)
    with pytest.raises(InputError, match="no such key file"):
        read_key(tmp_path / "missing.key.json")


def test_open_release_finds_and_checks_its_key(tmp_path):
    path, key, source, order = _release(tmp_path)
    library, found = open_release(path)
    with library:
        assert is_release(library) and found == key
        meta = release_metadata(library, found, 0)
        assert meta["release_id"] == "R000001" and meta["source_clip"] == source[order[0]].name
        assert meta["subject"] == source[order[0]].subject
        assert release_metadata(library, None, 0)["source_clip"] is None
    key_path_for(path).unlink()
    library, found = open_release(path)
    with library:
        assert found is None and release_metadata(library, None, 1)["release_id"] == "R000002"


def _rewrite(key: ReleaseKey, path, **changes) -> str:
    data = key.to_json()
    for name, value in changes.items():
        if name == "entries":
            value(data["entries"])
        else:
            data[name] = value
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize("changes, message", [
    ({"release_token": "b" * 32}, "release tokens differ"),
    ({"entries": lambda e: e.pop(), "clips": 3}, "the key lists 3 clips, the release holds 4"),
    ({"entries": lambda e: e.reverse()}, "clip 0 is 'R000001' in the release, 'R000004' in the key"),
    ({"entries": lambda e: e[2].update(joints_crc32=(e[2]["joints_crc32"] + 1) % (1 << 32))},
     "joints of clip 'R000003'"),
])
def test_a_key_of_another_release_is_refused_naming_both_files(tmp_path, changes, message):
    path, key, _, _ = _release(tmp_path)
    other = _rewrite(key, tmp_path / "other.key.json", **changes)
    with pytest.raises(DtmrError, match=message) as err:
        open_release(path, other)
    assert str(path) in str(err.value) and other in str(err.value)


def test_a_plain_library_is_no_release(tmp_path):
    path = tmp_path / "plain.h5"
    ClipLibrary.create(path, generate_clips(subjects=1, actions=1, repetitions=1, seed=0)).close()
    library, key = open_release(path)
    with library:
        assert key is None and not is_release(library)
