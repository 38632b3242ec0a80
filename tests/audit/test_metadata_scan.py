"""The metadata attacker (dtmr.audit.metadata.scan_metadata): a clean release passes; each way a release can
leak who is in it or where a clip came from is flagged, in the field that leaks."""

from __future__ import annotations

import json
import zlib

import h5py
import numpy as np
import pytest

from dtmr.audit.metadata import scan_metadata
from dtmr.data.clip import Clip
from dtmr.errors import DtmrError
from dtmr.io.library import ClipLibrary
from dtmr.release.key import KeyEntry, ReleaseKey

SUBJECTS, PER_SUBJECT = 4, 3
RELEASE_ATTRS = {"release_format": "dtmr-release", "release_version": 1, "method": "dtmr", "beta": 0.2,
                 "model": "dtmr_small_beta0.2.pt", "model_sha256": "0" * 64, "kept": "[]", "length": "16",
                 "provenance": "none", "release_token": "cd" * 16, "placement": "canonical", "missing": "filled"}


@pytest.fixture
def raw(tmp_path, rng) -> ClipLibrary:
    """12 raw clips, 4 subjects x 3 actions, every clip a different length (20..31 frames)."""
    clips = []
    for i in range(SUBJECTS * PER_SUBJECT):
        subject, action = i // PER_SUBJECT + 1, i % PER_SUBJECT + 1
        clips.append(Clip(joints=rng.normal(0, 0.3, (20 + i, 25, 3)) + (0, 0, 3), subject=subject, action=action,
                          view=1, repetition=1, sample_name=f"S001C001P{subject:03d}R001A{action:03d}",
                          source_file=f"/home/alice/ntu/S001C001P{subject:03d}R001A{action:03d}.skeleton"))
    path = tmp_path / "raw.h5"
    ClipLibrary.create(path, clips).close()
    library = ClipLibrary(path)
    yield library
    library.close()


def write_release(path, raw: ClipLibrary, order, *, clip=None, attrs=None) -> tuple[str, ReleaseKey]:
    """A release of `raw`'s clips in `order` (source indices), each made by `clip(source, n, i)`, plus its key."""
    sources = raw.read_all()
    clip = clip or (lambda source, n, i: Clip(joints=source.joints[:16], action=source.action, sample_name=f"R{n:06d}"))
    released = [clip(sources[i], n, i) for n, i in enumerate(order, 1)]
    ClipLibrary.create(path, released).close()
    with h5py.File(path, "r+") as h5:
        h5.attrs.update({**RELEASE_ATTRS, **(attrs or {})})
    entries = [
        KeyEntry(release_id=c.sample_name, source_index=int(i), source_clip=sources[i].sample_name,
                 subject=sources[i].subject, action=sources[i].action, view=1, repetition=1,
                 source_frames=sources[i].num_frames, reference_index=int((i + 3) % len(sources)),
                 reference_clip=sources[(i + 3) % len(sources)].sample_name,
                 reference_subject=sources[(i + 3) % len(sources)].subject,
                 joints_crc32=zlib.crc32(np.ascontiguousarray(c.joints, dtype=np.float32)))
        for c, i in zip(released, order)
    ]
    key = ReleaseKey(path=str(path) + ".key.json", release_file=path.name, release_token=RELEASE_ATTRS["release_token"],
                     source_file=raw.path, reference_file=raw.path, method="dtmr", beta=0.2,
                     model="dtmr_small_beta0.2.pt", seed=0, entries=entries)
    return str(path), key


#: a shuffled order whose Spearman rho with the source order is small (checked in the test)
SHUFFLED = [7, 2, 10, 0, 5, 11, 3, 8, 1, 9, 4, 6]


def problems(findings) -> set[tuple[str, str]]:
    return {(f["field"], f["problem"]) for f in findings}


def test_clean_release_passes(tmp_path, raw):
    assert abs(np.corrcoef(np.arange(12), SHUFFLED)[0, 1]) < 0.5
    path, key = write_release(tmp_path / "released.h5", raw, SHUFFLED)
    assert scan_metadata(path, key, raw) == []
    assert scan_metadata(path, None, None) == []


def test_leaky_library_is_flagged_field_by_field(tmp_path, raw):
    def leaky(source: Clip, n: int, i: int) -> Clip:
        # subject kept, source name and path kept, joints (so frame count) kept, a code = subject * 7 + 1
        return source.replace(extra={"code": str(source.subject * 7 + 1)})

    order = list(range(12))  # the source order
    path, key = write_release(tmp_path / "leaky.h5", raw, order, clip=leaky,
                              attrs={"source": "/home/alice/data/raw.h5", "rank": np.arange(12) * 3 + 10})
    findings = scan_metadata(path, key, raw)
    expected = {
        ("clips/subject", "equals the subject id"),
        ("clips/extra/code", "one-to-one with the subject"),
        ("clips/sample_name", "one-to-one with the source clip"),
        ("clips/sample_name", "names an NTU performer"),
        ("clips/source_file", "names a path"),
        ("clips/source_file", "names an NTU performer"),
        ("attrs/source", "names a path"),
        ("attrs/rank", "follows the source order"),
        ("clip order", "follows the source order"),
        ("frame count", "frame count links to the source"),
    }
    assert expected <= problems(findings)
    frame = next(f for f in findings if f["field"] == "frame count")
    assert frame["severity"] == "fail" and frame["detail"].startswith("12 of 12 clips")
    severities = [f["severity"] for f in findings]
    assert severities == sorted(severities, key=lambda s: s != "fail")  # failures first
    for f in findings:
        assert set(f) == {"field", "problem", "detail", "severity"} and "\n" not in f["detail"]

    # without the key: only what needs none
    alone = problems(scan_metadata(path, None, None))
    assert alone == {("clips/sample_name", "names an NTU performer"), ("clips/source_file", "names a path"),
                     ("clips/source_file", "names an NTU performer"), ("attrs/source", "names a path"),
                     ("clips/subject", "holds subject ids")}


def test_nearly_sorted_order_reference_names_and_provenance(tmp_path, raw):
    order = [1, 0, 2, 3, 5, 4, 6, 7, 8, 10, 9, 11]  # two neighbours swapped here and there: rho ~ 0.98

    def with_reference(source: Clip, n: int, i: int) -> Clip:
        reference = raw.read((i + 3) % len(raw)).sample_name
        return Clip(joints=source.joints[:16], action=source.action, sample_name=f"R{n:06d}",
                    extra={"made_from": f"reference {reference}"})

    path, key = write_release(tmp_path / "r.h5", raw, order, clip=with_reference, attrs={"provenance": "included"})
    found = problems(scan_metadata(path, key, raw))
    assert ("clip order", "follows the source order") in found
    assert ("clips/extra/made_from", "names the reference clip") in found
    assert ("attrs/provenance", "provenance included") in found
    assert ("attrs/provenance", "provenance included") in problems(scan_metadata(path, None, None))


def test_frame_counts_that_repeat_in_the_raw_library_only_warn(tmp_path, rng):
    lengths = [20, 20, 21, 21, 22, 22, 23, 23, 24, 24]  # no count is unique: none names its source
    clips = [Clip(joints=rng.normal(size=(t, 25, 3)), subject=i % 5 + 1, action=1, sample_name=f"c{i}")
             for i, t in enumerate(lengths)]
    ClipLibrary.create(tmp_path / "raw.h5", clips).close()
    with ClipLibrary(tmp_path / "raw.h5") as raw_library:
        order = [3, 8, 1, 6, 0, 9, 4, 2, 7, 5]
        path, key = write_release(tmp_path / "keep.h5", raw_library, order,
                                  clip=lambda s, n, i: Clip(joints=s.joints, action=1, sample_name=f"R{n:06d}"))
        findings = scan_metadata(path, key, raw_library)
    assert [(f["field"], f["severity"]) for f in findings] == [("frame count", "warn")]
    assert findings[0]["detail"].startswith("10 of 10 clips keep their source's frame count (0 of them unique")


def test_a_key_of_another_size_is_refused(tmp_path, raw):
    path, key = write_release(tmp_path / "released.h5", raw, SHUFFLED)
    key.entries.pop()
    with pytest.raises(DtmrError, match="11 clips, the release holds 12"):
        scan_metadata(path, key, raw)


def test_an_extra_that_is_not_json_is_still_checked(tmp_path, raw):
    path, key = write_release(tmp_path / "released.h5", raw, SHUFFLED)
    with h5py.File(path, "r+") as h5:  # ClipLibrary would refuse this file; the scan reads it anyway
        ds = h5["clips/extra"]
        ds[...] = np.array([f"not json {json.dumps(e.source_clip)}" for e in key.entries], dtype=object)
    assert ("clips/extra", "one-to-one with the source clip") in problems(scan_metadata(path, key, raw))


@pytest.mark.parametrize("length", [[], ["--length", "64"]], ids=["own-lengths", "length-64"])
def test_a_release_written_by_anonymize_from_the_demo_library_leaks_no_field(tmp_path, monkeypatch, length):
    """What `dtmr anonymize` writes (here the naive retarget on 36 demo clips) gives the metadata attacker
    nothing: no column, extra key, attribute or clip order; only the frame counts, which `--length` removes."""
    from dtmr.cli import main
    from dtmr.release import anonymize
    from dtmr.release.key import key_path_for, read_key
    from dtmr.resources import resource_path

    monkeypatch.setattr(anonymize, "CHUNK", 8)
    source = tmp_path / "demo36.h5"
    with ClipLibrary(resource_path("demo/demo_library.h5")) as demo:
        ClipLibrary.create(source, demo.read_many(range(0, len(demo), 10)), action_names=demo.action_names).close()
    release = tmp_path / "released.h5"
    assert main(["anonymize", str(source), "--method", "naive", *length, "-o", str(release)]) == 0
    with ClipLibrary(source) as raw_clips:
        findings = scan_metadata(release, read_key(key_path_for(release)), raw_clips)
    assert [f["field"] for f in findings if f["field"] != "frame count"] == []
    if length:
        assert findings == []


@pytest.mark.parametrize("attrs, fields", [
    ({"placement": "source"}, ["attrs/placement"]),
    ({"missing": "kept"}, ["attrs/missing"]),
    ({"placement": "source", "missing": "kept"}, ["attrs/placement", "attrs/missing"]),
])
def test_a_release_that_kept_placement_or_missing_joints_fails(tmp_path, raw, attrs, fields):
    path, key = write_release(tmp_path / "kept.h5", raw, [5, 0, 9, 2, 11, 7, 1, 10, 4, 8, 3, 6], attrs=attrs)
    findings = scan_metadata(path, key, raw)
    assert [f["field"] for f in findings if f["severity"] == "fail"] == fields


def test_a_release_made_before_canonical_placement_fails_on_both_channels(tmp_path, raw):
    path, key = write_release(tmp_path / "old.h5", raw, [5, 0, 9, 2, 11, 7, 1, 10, 4, 8, 3, 6])
    with h5py.File(path, "r+") as h5:
        del h5.attrs["placement"], h5.attrs["missing"]
    fails = [f for f in scan_metadata(path, key, raw) if f["severity"] == "fail"]
    assert [f["field"] for f in fails] == ["attrs/placement", "attrs/missing"]
    assert "camera space" in fails[0]["detail"] and "NaN" in fails[1]["detail"]
