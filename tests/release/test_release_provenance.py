"""A release's key is built from its part clips' `Provenance`: parts written before provenance had a version
(a resumed run's) give the key entries they gave then."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.data.clip import Clip
from dtmr.data.provenance import Provenance
from dtmr.errors import DtmrError
from dtmr.release.merge import _entry

#: a part clip's `extra` as dtmr/release/chunks.py wrote it before provenance had a version
OLD_PART_EXTRA = {"source_clip": "S002", "source_file": "in.h5", "source_index": "5", "source_frames": "64",
                  "model": "m.pt", "method": "dtmr", "beta": "0.2", "output": "released", "seed": "0",
                  "reference_index": "11", "reference_clip": "S007", "reference_subject": "7",
                  "reference_file": "in.h5"}
ENTRY = {"release_id": "R000001", "source_index": 5, "source_clip": "S002", "subject": 2, "action": 1, "view": None,
         "repetition": None, "source_frames": 64, "reference_index": 11, "reference_clip": "S007",
         "reference_subject": 7}


def _clip(extra: dict[str, str]) -> Clip:
    return Clip(np.zeros((4, 25, 3), np.float32), subject=2, action=1, sample_name="S002", extra=extra)


def test_old_and_new_part_clips_give_the_same_key_entry():
    assert _entry(_clip(OLD_PART_EXTRA), "R000001") == ENTRY
    made = Provenance.from_clip(_clip(OLD_PART_EXTRA))
    assert made.version == 0
    assert _entry(made.stamp(_clip({})), "R000001") == ENTRY


def test_a_part_clip_without_a_reference_has_an_empty_reference_in_its_key():
    made = Provenance(method="noise", model="noise", source_clip="S002", source_file="in.h5", source_index=5,
                      source_frames=64, seed=0, reference_index=-1)
    assert _entry(made.stamp(_clip({})), "R000001") == {**ENTRY, "reference_index": -1, "reference_clip": "",
                                                        "reference_subject": None}


def test_a_part_clip_without_release_provenance_is_refused():
    model_output = Provenance(method="dtmr", beta=0.2, source_clip="S002", reference_clip="S007")
    with pytest.raises(DtmrError, match="'S002' .* carries no release provenance"):
        _entry(model_output.stamp(_clip({})), "R000001")
