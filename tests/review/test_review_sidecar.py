"""The review sidecar: keys, round trip, atomic save, damaged files, merge and κ, CSV/JSON export."""

from __future__ import annotations

import csv
import json

import pytest

from dtmr.errors import DtmrError, InputError
from dtmr.review import (
    ClipReview,
    LibraryFingerprint,
    Review,
    clip_keys,
    cohen_kappa,
    find_sidecars,
    fleiss_kappa,
    merge_reviews,
    read_review,
    sidecar_path,
    write_csv,
    write_json,
    write_review,
)

LIB = LibraryFingerprint.of("clips.h5", ["a", "b", "c", "d"])


def review(annotator: str, verdicts: dict[str, str], library=LIB) -> Review:
    return Review(library, annotator, {k: ClipReview(v, time="2026-01-01T00:00:00+00:00") for k, v in verdicts.items()})


def test_keys_are_names_when_unique_else_indices():
    assert clip_keys(["S1", "S2"]) == ["S1", "S2"]
    assert clip_keys(["S1", "S1", "S2"]) == ["#0", "#1", "#2"]
    assert clip_keys(["S1", ""]) == ["#0", "#1"]


def test_sidecar_names_are_per_annotator_and_found_beside_the_library(tmp_path):
    lib = tmp_path / "my[lib].h5"
    assert sidecar_path(lib, "Ada Lovelace") == tmp_path / "my[lib].h5.review.Ada_Lovelace.json"
    for name in ("ada", "bob"):
        write_review(sidecar_path(lib, name), review(name, {"a": "plausible"}))
    (tmp_path / "other.h5.review.eve.json").write_text("{}")
    assert [p.name for p in find_sidecars(lib)] == ["my[lib].h5.review.ada.json", "my[lib].h5.review.bob.json"]


def test_round_trip_keeps_everything(tmp_path):
    path = tmp_path / "clips.h5.review.ada.json"
    original = Review(LIB, "Ada", {
        "a": ClipReview("implausible", ((12, 30), (40, 41)), "knees buckle", ("knee", "foot"), "2026-01-01T00:00:00+00:00"),
        "b": ClipReview("unsure", (), "", (), "t"),
        "c": ClipReview(None, ((3, 4),), "", (), "t"),
        "d": ClipReview(),  # empty: not written
    })
    write_review(path, original)
    back = read_review(path)
    assert back.library == LIB and back.annotator == "Ada"
    assert back.clips == {k: v for k, v in original.clips.items() if k != "d"}
    data = json.loads(path.read_text())
    # in memory 0-based frame indices, in the file 1-based frame numbers (version 2, docs/review.md)
    assert data["format"] == "dtmr-review" and data["version"] == 2 and data["frames"] == "1-based"
    assert data["clips"]["a"]["flags"] == [[13, 31], [41, 42]]


def test_save_is_atomic_a_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "clips.h5.review.ada.json"
    write_review(path, review("ada", {"a": "plausible"}))
    before = path.read_bytes()

    def broken_dumps(*_a, **_k):
        raise RuntimeError("disk full")

    monkeypatch.setattr("dtmr.review.sidecar.json.dumps", broken_dumps)
    with pytest.raises(RuntimeError):
        write_review(path, review("ada", {"a": "implausible"}))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left


@pytest.mark.parametrize("text, reason", [
    ('{"format": "dtmr-review", "version": 1, "library": {', "damaged review sidecar"),
    ('[1, 2]', "not a review sidecar"),
    ('{"format": "dtmr-review", "version": 7}', "version 7 is not supported"),
    ('{"format": "dtmr-review", "version": 1, "annotator": "a", "clips": {}}', "missing 'library'"),
    (('{"format": "dtmr-review", "version": 1, "annotator": "a", "library": {"name": "x", "clips": 1, '
      '"names_crc32": 0}, "clips": {"a": {"verdict": "great"}}}'), "verdict 'great'"),
    (('{"format": "dtmr-review", "version": 1, "annotator": "a", "library": {"name": "x", "clips": 1, '
      '"names_crc32": 0}, "clips": {"a": {"flags": [[5, 2]]}}}'), "not a frame range"),
])
def test_damaged_file_is_one_line_naming_it(tmp_path, text, reason):
    path = tmp_path / "x.review.a.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_review(path)
    message = str(info.value)
    assert message.startswith(str(path)) and reason in message and "\n" not in message


def test_cohen_kappa_known_example():
    # Wikipedia "Cohen's kappa": 50 proposals, yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> kappa = 0.4
    a = ["plausible"] * 25 + ["implausible"] * 25
    b = ["plausible"] * 20 + ["implausible"] * 5 + ["plausible"] * 10 + ["implausible"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa(["unsure"] * 3, ["unsure"] * 3) is None  # chance agreement is 1
    assert cohen_kappa([], []) is None


def test_fleiss_kappa_known_example():
    # Wikipedia "Fleiss' kappa": 10 subjects, 14 raters, 5 categories -> kappa = 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-4)
    with pytest.raises(ValueError):
        fleiss_kappa([[1, 1, 0], [1, 0, 0]])


def test_merge_reports_kappa_on_clips_both_reviewed():
    ada = review("ada", {"a": "plausible", "b": "implausible", "c": "plausible"})
    bob = review("bob", {"a": "plausible", "b": "implausible", "d": "unsure"})
    merged, agreement = merge_reviews([ada, bob])
    assert set(merged) == {"a", "b", "c", "d"} and set(merged["a"]) == {"ada", "bob"}
    (pair,) = agreement.pairs
    assert (pair.clips, pair.kappa) == (2, pytest.approx(1.0))
    assert agreement.lines() == ["Cohen's kappa ada vs bob: 1.000 on 2 clips both reviewed"]
    eve = review("eve", {"a": "implausible", "b": "implausible", "d": "unsure"})
    _merged, three = merge_reviews([ada, bob, eve])
    assert len(three.pairs) == 3 and three.fleiss_clips == 2 and three.fleiss is not None
    assert three.lines()[-1].startswith("Fleiss' kappa, 3 annotators:")


def test_merge_refuses_other_libraries_and_repeated_annotators():
    other = LibraryFingerprint.of("clips.h5", ["a", "b"])
    with pytest.raises(DtmrError, match="different libraries"):
        merge_reviews([review("ada", {}), review("bob", {}, other)])
    renamed = LibraryFingerprint(LIB.name, LIB.clips, LIB.names_crc32 + 1)  # issue 43: say what differs
    with pytest.raises(DtmrError, match=r"\(ada, bob\) are of different libraries: .* differ in their clip names$"):
        merge_reviews([review("ada", {}), review("bob", {}, renamed)])
    with pytest.raises(DtmrError, match="same annotator"):
        merge_reviews([review("ada", {}), review("ada", {})])


def test_csv_and_json_export(tmp_path):
    ada = Review(LIB, "ada", {"b": ClipReview("implausible", ((1, 5), (9, 9)), 'says "hi", twice', ("knee", "x"), "t"),
                              "a": ClipReview("plausible", time="t")})
    assert write_csv(tmp_path / "out.csv", [ada]) == 2
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["clip"] for r in rows] == ["a", "b"]
    assert rows[1] == {"library": "clips.h5", "annotator": "ada", "clip": "b", "verdict": "implausible",
                       "flags": "2-6;10-10", "note": 'says "hi", twice', "tags": "knee;x", "time": "t"}
    assert write_json(tmp_path / "out.json", [ada]) == 2
    data = json.loads((tmp_path / "out.json").read_text())
    assert data[1]["flags"] == [[2, 6], [10, 10]] and data[1]["tags"] == ["knee", "x"]
