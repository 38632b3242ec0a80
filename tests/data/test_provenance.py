"""`Provenance`: an anonymized clip's record of how it was made, typed, stored as `Clip.extra` entries."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dtmr.data.clip import Clip
from dtmr.data.provenance import PROVENANCE_VERSION, Provenance
from dtmr.errors import InputError
from dtmr.io.library import ClipLibrary

PART = Provenance(method="dtmr", beta=0.2, model="m.pt", output="released", source_clip="S001A002",
                  reference_clip="S003A001", source_file="in.h5", source_index=4, source_frames=60, seed=7,
                  reference_index=9, reference_subject=3, reference_file="in.h5")
#: a part clip's `extra` as dtmr/release/chunks.py wrote it before provenance had a version
OLD_PART_EXTRA = {"setup": "1", "source_clip": "S002", "source_file": "in.h5", "source_index": "5",
                  "source_frames": "64", "model": "noise", "method": "noise", "seed": "0", "reference_index": "-1",
                  "reference_clip": "", "reference_subject": "", "reference_file": "", "sigma": "0.05"}


def _clip(extra: dict[str, str] | None = None, **fields) -> Clip:
    return Clip(np.zeros((3, 25, 3), np.float32), sample_name="S001A002", source_file="in.h5", extra=extra or {},
                **fields)


def test_a_model_output_round_trips_with_typed_fields():
    made = Provenance(method="dtmr", beta=0.2, model="runs/m.pt", output="retargeted", source_clip="a",
                      reference_clip="b")
    extra = made.to_extra()
    assert extra == {"provenance_version": str(PROVENANCE_VERSION), "method": "dtmr", "beta": "0.2",
                     "model": "runs/m.pt", "output": "retargeted", "source_clip": "a", "reference_clip": "b"}
    back = Provenance.from_clip(_clip(extra))
    assert back == made and back.version == PROVENANCE_VERSION and isinstance(back.beta, float)


def test_a_clip_without_provenance_has_none():
    assert Provenance.from_clip(_clip({"setup": "1"})) is None


def test_a_release_part_writes_every_release_field_over_what_its_source_carried():
    source = {"setup": "2", "reference_clip": "stale", "reference_subject": "8", "beta": "0.5", "output": "released"}
    parameter_free = Provenance(method="naive", model="naive", source_clip="a", source_file="in.h5", source_index=0,
                                source_frames=10, seed=1, reference_index=-1)
    extra = parameter_free.over(source)
    assert extra["setup"] == "2" and extra["output"] == "released"  # entries it does not set are kept
    assert (extra["reference_clip"], extra["reference_subject"], extra["reference_file"]) == ("", "", "")
    assert "beta" not in extra  # a release without β drops the β of the clips it was made from
    back = Provenance.from_clip(_clip(extra))
    assert back == dataclasses.replace(parameter_free, output="released")
    assert back.reference_clip is None and back.reference_subject is None
    assert PART.over({"beta": "0.5"})["beta"] == "0.2"


def test_a_part_clip_of_earlier_code_reads_the_same_as_version_0():
    old = Provenance.from_clip(_clip(OLD_PART_EXTRA))
    assert old.version == 0
    assert (old.method, old.beta, old.sigma, old.source_index, old.source_frames, old.seed) == \
        ("noise", None, 0.05, 5, 64, 0)
    assert (old.reference_index, old.reference_clip, old.reference_subject) == (-1, None, None)
    # written again, the same entries plus the version
    assert old.over(OLD_PART_EXTRA) == {**OLD_PART_EXTRA, "provenance_version": str(PROVENANCE_VERSION)}


@pytest.mark.parametrize(("extra", "message"), [
    ({"method": "dtmr", "beta": "high"}, "beta='high' is not a number"),
    ({"method": "dtmr", "source_index": "1.5"}, "source_index='1.5' is not an integer"),
    ({"method": "dtmr", "provenance_version": "9"}, "provenance_version='9' is not one this dtmr reads"),
])
def test_a_damaged_entry_is_one_line_naming_the_file_and_the_clip(extra, message):
    with pytest.raises(InputError) as error:
        Provenance.from_clip(_clip(extra), where="lib.h5")
    assert str(error.value).startswith("lib.h5: clip 'S001A002': its provenance entry ") and message in str(error.value)


def test_provenance_round_trips_through_a_library_file(tmp_path):
    noise = Provenance(method="noise", beta=1.0, sigma=0.05, source_clip="S001A002")
    path = tmp_path / "lib.h5"
    ClipLibrary.write(path, [PART.stamp(_clip({"setup": "1"}, subject=2)), noise.stamp(_clip())])
    with ClipLibrary(path) as library:
        back = library.read_all()
    assert [Provenance.from_clip(c, where=path) for c in back] == [PART, noise]
    assert back[0].extra["setup"] == "1" and back[0].subject == 2
