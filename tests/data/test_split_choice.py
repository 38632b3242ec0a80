"""`dtmr.data.split_choice`: the split proposed for a library follows its layout (the data set its clips come
from), not the first split whose checks the metadata happens to pass."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.data.split_choice import choose_split, library_layout
from dtmr.io.sources import open_clip_source
from dtmr.resources import DEMO_LIBRARY, resource_path


def table(names, **fields):
    return {"sample_name": np.array(names, dtype=object), **{k: np.array(v) for k, v in fields.items()}}


def test_the_bundled_demo_is_the_synthetic_layout():
    choice = choose_split(open_clip_source(resource_path(*DEMO_LIBRARY)).metadata_table())
    assert (choice.split, choice.layout, choice.problem) == ("synthetic", "dtmr synthetic", "")


@pytest.mark.parametrize("data, split", [("nwucla.npz", "nwucla"), ("uiprmd_kinect.npz", "uiprmd"),
                                         ("ntu_samples", "ntu_cs")])
def test_the_real_data_sets(shared_data, data, split):
    path = shared_data / data
    if not path.exists():
        pytest.skip(f"{path} is not present")
    choice = choose_split(open_clip_source(path).metadata_table())
    assert choice.split == split
    # the two NTU samples are both ntu_cs training performers: the split is still NTU's, and the problem is said
    assert bool(choice.problem) == (data == "ntu_samples")


def test_layouts_by_sample_names_topology_and_generator():
    ntu = table(["S001C001P001R001A001", "S001C002P003R001A002"], subject=[1, 3], action=[1, 2], view=[1, 2])
    assert library_layout(ntu).split == "ntu_cs"
    ucla = table(["a01_s01_e00_v01", "a02_s02_e01_v03"])
    assert library_layout(ucla).split == "nwucla"
    prmd = table(["m01_s01_e01_positions", "m02_s03_e10_positions_inc"])
    assert library_layout(prmd).split == "uiprmd"
    assert library_layout({"topology": np.array(["uiprmd22"] * 2)}).split == "uiprmd"
    synthetic = {"extra": [{"generator": "dtmr-synthetic"}] * 2, "sample_name": np.array(["x", "y"])}
    assert library_layout(synthetic).split == "synthetic"
    mixed = table(["S001C001P001R001A001", "a01_s01_e00_v01"])  # every name must follow one layout
    assert library_layout(mixed) is None


def test_a_library_of_no_known_layout_gets_the_generic_split_or_none():
    """The old rule proposed ntu_cs for any table with subjects 1-40 and actions 1-49 (the demo, too)."""
    unknown = table(["walk_1", "walk_2", "run_1", "run_2"], subject=[1, 2, 1, 2], action=[1, 1, 2, 2],
                    repetition=[0, 1, 0, 1])
    choice = choose_split(unknown)
    assert choice.split == "synthetic" and choice.layout == "" and not choice.problem
    one_take = table(["a", "b"], subject=[1, 2], action=[1, 1], repetition=[0, 0])
    choice = choose_split(one_take)
    assert choice.split is None and "only one" in choice.problem
