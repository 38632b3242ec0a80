"""BVH rigs of other tools onto NTU-25 (issue 45): by the names of the common rigs, by the tree's shape, by a joint
map; position channels on every joint; the unit from the body's size; the up axis from the data. Every file is
written here from the BVH specification (tests/rig_fixtures.py): one walking body under each rig's names."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtmr.errors import DtmrError, InputError
from dtmr.io.bvh_reader import parse_bvh, read_bvh
from dtmr.io.bvh_rigs import RIG_NAMES, split_side
from dtmr.io.bvh_writer import write_bvh
from dtmr.io.import_notes import NOTE, WARNING
from dtmr.skeleton import NTU25
from rig_fixtures import (
    RIG_NAMES as FIXTURE_RIGS,
    rig_names,
    upright_and_height,
    write_joint_map,
    write_no_legs_bvh,
    write_rig_bvh,
)

NAMED_RIGS = [rig for rig in FIXTURE_RIGS if rig != "unknown"]
MM = 1e-3


def read_one(path, **kwargs):
    source = read_bvh(path, **kwargs)
    assert source.format == "bvh" and source.topology == "ntu25" and len(source) == 1
    return source.read(0)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The walking body read from its Mixamo file: every other way of reading it must give the same joints."""
    return read_one(write_rig_bvh(tmp_path_factory.mktemp("ref") / "mixamo.bvh", "mixamo")).joints


def assert_person(clip):
    upright, height = upright_and_height(clip.joints)
    assert upright, clip.extra
    assert 1.4 <= height <= 2.0, height
    assert np.isfinite(clip.joints).all()


@pytest.mark.parametrize("rig", NAMED_RIGS)
def test_each_common_rig_is_read_by_its_names(tmp_path, rig, reference):
    clip = read_one(write_rig_bvh(tmp_path / f"{rig}.bvh", rig))
    assert clip.extra[NOTE].startswith(f"BVH rig: {rig}; units cm (inferred from a body ")
    assert "up +y (convention)" in clip.extra[NOTE] and WARNING not in clip.extra
    assert_person(clip)
    # the same body under any rig's names is the same NTU-25 clip
    np.testing.assert_allclose(clip.joints, reference, atol=0.01 * MM)
    assert clip.fps == 30.0 and clip.sample_name == rig


def test_the_rig_tables_are_the_ones_documented():
    assert set(RIG_NAMES) == {"mixamo", "cmu", "mocapbank", "rigify", "unreal", "unity"}


def test_ntu_joints_are_placed_where_the_rig_says(tmp_path, reference):
    """Read off the rig: limbs, pelvis, toes; derived: spine, neck, head centre, hands (docs/io.md)."""
    bvh = parse_bvh(write_rig_bvh(tmp_path / "m.bvh", "mixamo"))
    names = rig_names("mixamo")
    node = {n.name: i for i, n in enumerate(bvh.nodes)}
    world = bvh.positions(scale=0.01)
    for ntu, key in (("left_shoulder", "l_upper"), ("right_elbow", "r_fore"), ("left_wrist", "l_hand"),
                     ("right_hip", "r_thigh"), ("left_knee", "l_shin"), ("right_ankle", "r_foot"),
                     ("left_foot", "l_toe"), ("spine_base", "pelvis")):
        np.testing.assert_allclose(reference[:, NTU25.index(ntu)], world[:, node[names[key]]], atol=1e-5)
    shoulders = world[:, [node[names["l_upper"]], node[names["r_upper"]]]].mean(axis=1)
    np.testing.assert_allclose(reference[:, NTU25.index("spine_shoulder")], shoulders, atol=1e-5)
    head, top = world[:, node[names["head"]]], world[:, node["mixamorig:HeadTop_End"]]
    np.testing.assert_allclose(reference[:, NTU25.index("head")], (head + top) / 2, atol=1e-5)
    np.testing.assert_allclose(reference[:, NTU25.index("neck")], (shoulders + head) / 2, atol=1e-5)
    wrist, elbow = world[:, node[names["l_hand"]]], world[:, node[names["l_fore"]]]
    np.testing.assert_allclose(reference[:, NTU25.index("left_hand_tip")], wrist + 0.6 * (wrist - elbow), atol=1e-5)


@pytest.mark.parametrize("rig", ["rigify", "unknown"])
def test_z_up_blender_export_with_position_channels_on_every_joint_in_cm(tmp_path, rig, reference):
    path = write_rig_bvh(tmp_path / "blender.bvh", rig, z_up=True, position_channels_everywhere=True)
    assert all(len(n.channels) == 6 for n in parse_bvh(path).nodes if not n.end_site)
    clip = read_one(path)
    assert "units cm" in clip.extra[NOTE] and "up +z (detected)" in clip.extra[NOTE]
    assert_person(clip)
    np.testing.assert_allclose(clip.joints, reference, atol=0.01 * MM)


@pytest.mark.parametrize("units_per_metre, unit", [(1.0, "m"), (100.0, "cm"), (1000.0, "mm"), (1 / 0.0254, "in")])
def test_the_unit_is_inferred_from_the_body_and_stated(tmp_path, units_per_metre, unit, reference):
    clip = read_one(write_rig_bvh(tmp_path / "u.bvh", "cmu", units_per_metre=units_per_metre))
    assert f"units {unit} (inferred from a body " in clip.extra[NOTE]
    np.testing.assert_allclose(clip.joints, reference, atol=0.01 * MM)


def test_unknown_names_are_read_by_the_tree_s_shape(tmp_path, reference):
    clip = read_one(write_rig_bvh(tmp_path / "bones.bvh", "unknown"))
    assert clip.extra[NOTE].startswith("BVH rig: structure;")
    np.testing.assert_allclose(clip.joints, reference, atol=0.01 * MM)


@pytest.mark.parametrize("turn", [90.0, 180.0, -135.0])
def test_structure_tells_left_from_right_by_where_the_toes_point(tmp_path, turn):
    """A body facing another way in its rest pose: the names (Mixamo) and the shape (toes) agree on its left."""
    named = read_one(write_rig_bvh(tmp_path / "m.bvh", "mixamo", turn_deg=turn))
    shaped = read_one(write_rig_bvh(tmp_path / "b.bvh", "unknown", turn_deg=turn))
    np.testing.assert_allclose(shaped.joints, named.joints, atol=0.01 * MM)


def test_a_joint_map_names_the_joints_of_any_rig(tmp_path, reference):
    path = write_rig_bvh(tmp_path / "bones.bvh", "unknown")
    clip = read_one(path, joint_map=write_joint_map(tmp_path / "map.json"))
    assert clip.extra[NOTE].startswith("BVH rig: joint map;")
    assert_person(clip)
    for ntu in ("left_shoulder", "right_wrist", "left_knee", "right_foot", "spine_base"):
        np.testing.assert_allclose(clip.joints[:, NTU25.index(ntu)], reference[:, NTU25.index(ntu)], atol=1e-5)
    # the map's word is taken as is: its "head" is the rig's head joint, not the head's centre
    bvh = parse_bvh(path)
    head = [n.name for n in bvh.nodes].index(rig_names("unknown")["head"])
    np.testing.assert_allclose(clip.joints[:, NTU25.index("head")], bvh.positions([head], 0.01)[:, 0], atol=1e-5)


def test_bad_joint_maps_are_one_line_naming_the_file(tmp_path):
    path = write_rig_bvh(tmp_path / "bones.bvh", "unknown")
    table = json.loads(write_joint_map(tmp_path / "map.json").read_text())
    cases = [
        ({**table, "Spine99": "neck"}, "bones.bvh", "names joints the file does not have: Spine99"),
        ({**table, "bone01": "chest"}, "map.json", "not NTU-25 joints: chest"),
        ({k: v for k, v in table.items() if v != "left_knee"}, "map.json", "maps no joint to left_knee"),
        ({**table, "bone01": "head"}, "map.json", "two joints are mapped to head"),
        (["bone00"], "map.json", "one JSON object"),
    ]
    for content, named, words in cases:
        (tmp_path / "map.json").write_text(json.dumps(content))
        with pytest.raises(DtmrError) as caught:
            read_bvh(path, joint_map=tmp_path / "map.json")
        message = str(caught.value)
        assert "\n" not in message and named in message.split(": ")[0] and words in message, message
    (tmp_path / "map.json").write_text("{not json")
    with pytest.raises(InputError, match=r"map\.json: not a JSON joint map"):
        read_bvh(path, joint_map=tmp_path / "map.json")


def test_a_hierarchy_without_legs_is_one_line_naming_the_file(tmp_path):
    path = write_no_legs_bvh(tmp_path / "torso.bvh")
    with pytest.raises(InputError) as caught:
        read_bvh(path)
    message = str(caught.value)
    assert message.startswith(str(path) + ": its joints (Base, Chest, ArmA1")
    assert "not two legs and two arms" in message and "--joint-map" in message and "\n" not in message


def test_a_body_of_no_person_s_size_asks_for_the_unit(tmp_path, reference):
    path = write_rig_bvh(tmp_path / "tiny.bvh", "unity", units_per_metre=0.1)  # 1.77 m as 0.177 units
    with pytest.raises(InputError) as caught:
        read_bvh(path)
    message = str(caught.value)
    assert message.startswith(str(path) + ": a body 0.1") and "--units" in message and "--scale" in message
    assert "\n" not in message
    clip = read_one(path, scale=10.0)
    assert "scale 10 m per unit (given)" in clip.extra[NOTE] and WARNING not in clip.extra
    np.testing.assert_allclose(clip.joints, reference, atol=0.01 * MM)
    # a unit given by hand is obeyed, with a warning when the body is then no person's size
    wrong = read_one(write_rig_bvh(tmp_path / "m.bvh", "unity", units_per_metre=1.0), unit="cm")
    assert "outside 0.8-2.5 m with the unit given" in wrong.extra[WARNING]


def test_up_given_by_hand_wins_and_a_body_left_lying_is_flagged(tmp_path, reference):
    path = write_rig_bvh(tmp_path / "z.bvh", "mixamo", z_up=True)
    clip = read_one(path, up="z")
    assert "up +z (given)" in clip.extra[NOTE] and WARNING not in clip.extra
    np.testing.assert_allclose(clip.joints, reference, atol=0.01 * MM)
    lying = read_one(path, up="+y")
    assert "up +y (given)" in lying.extra[NOTE]
    assert "upright in only 0% of its frames" in lying.extra[WARNING] and "--up" in lying.extra[WARNING]
    with pytest.raises(InputError, match=r"z\.bvh: unknown up axis 'w'"):
        read_bvh(path, up="w")


def reexport_with_positions_everywhere(bvh) -> str:
    """`bvh` as Blender's default export writes it: 6 channels on every joint, the positions at the offsets."""
    children: dict[int, list[int]] = {i: [] for i in range(len(bvh.nodes))}
    for i, node in enumerate(bvh.nodes):
        if node.parent >= 0:
            children[node.parent].append(i)
    starts = np.cumsum([0] + [len(n.channels) for n in bvh.nodes])
    lines, layout = ["HIERARCHY"], []  # layout: per written channel, (column of the old values or None, value)

    def emit(i: int) -> None:
        node = bvh.nodes[i]
        offset = " ".join(f"{v:.6f}" for v in node.offset)
        if node.end_site:
            lines.extend(["End Site", "{", f"OFFSET {offset}", "}"])
            return
        rotations = [c for c in node.channels if c.endswith("rotation")]
        lines.extend([f"{'ROOT' if node.parent < 0 else 'JOINT'} {node.name}", "{", f"OFFSET {offset}",
                      "CHANNELS 6 Xposition Yposition Zposition " + " ".join(rotations)])
        for k, axis in enumerate("XYZ"):
            name = f"{axis}position"
            layout.append((starts[i] + node.channels.index(name), 0.0) if name in node.channels
                          else (None, node.offset[k]))
        layout.extend((starts[i] + node.channels.index(c), 0.0) for c in rotations)
        for child in children[i]:
            emit(child)
        lines.append("}")

    emit(0)
    lines += ["MOTION", f"Frames: {len(bvh.values)}", f"Frame Time: {bvh.frame_time:.6f}"]
    for row in bvh.values:
        lines.append(" ".join(f"{row[c] if c is not None else value:.6f}" for c, value in layout))
    return "\n".join(lines) + "\n"


def test_our_own_file_re_exported_with_position_channels_on_every_joint(tmp_path):
    """What Blender's default export does to a file of ours: 6 channels on every joint, the branch joints too."""
    from dtmr.data import generate_clips

    clip = generate_clips(subjects=1, actions=1, repetitions=1, seed=2)[0]
    write_bvh(tmp_path / "ours.bvh", clip)
    (tmp_path / "blender.bvh").write_text(reexport_with_positions_everywhere(parse_bvh(tmp_path / "ours.bvh")))
    again = read_bvh(tmp_path / "blender.bvh")
    assert again.topology == "ntu25" and NOTE not in again.read(0).extra  # our names: read as before
    np.testing.assert_allclose(again.read(0).joints, read_bvh(tmp_path / "ours.bvh").read(0).joints, atol=1e-4)


@pytest.mark.parametrize("name, side, base", [
    ("mixamorig:LeftUpLeg", "left", "upleg"), ("mixamorig1:RightHandIndex1", "right", "handindex1"),
    ("thigh.L", "left", "thigh"), ("upper_arm.R", "right", "upperarm"), ("DEF-shin.L", "left", "shin"),
    ("calf_l", "left", "calf"), ("upperarm_r", "right", "upperarm"), ("LHipJoint", "left", "hipjoint"),
    ("RThumb", "right", "thumb"), ("L_Thigh", "left", "thigh"), ("LowerBack", None, "lowerback"),
    ("spine.001", None, "spine001"), ("Armature|Hips", None, "hips"), ("ROOT", None, "root"),
    ("LeftUpperLeg", "left", "upperleg"), ("HeadTop_End", None, "headtopend"),
])
def test_names_split_into_side_and_base(name, side, base):
    assert split_side(name) == (side, base)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 6000), at=st.integers(0, 6000), junk=st.binary(max_size=8),
       token=st.sampled_from(["", "nan", "1e999", "-", "{", "}", "JOINT", "End Site", "Left", "mixamorig:Hips",
                              "CHANNELS 6", "0"]))
def test_damaged_rig_files_give_clips_or_one_input_error(tmp_path, cut, at, junk, token):
    good = tmp_path / "good.bvh"
    if not good.exists():
        write_rig_bvh(good, "mixamo", z_up=True, frames=4)
    data = good.read_bytes()
    at = at % len(data)
    damaged = data[:at] + junk + token.encode() + data[at + len(junk):]
    path = tmp_path / "d.bvh"
    path.write_bytes(damaged[: max(cut, len(damaged) - cut)])
    try:
        source = read_bvh(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert np.isfinite(source.read(0).joints).all()


def test_a_crafted_tree_of_many_limb_pairs_is_refused_quickly(tmp_path):
    """960 joints and End Sites in mirror pairs and no humanoid among them: the structural search stays bounded."""
    import time

    def chain(name: str, x: float, depth: int) -> str:
        if depth == 0:
            return "End Site { OFFSET 0 -1 0 }"
        return (f"JOINT {name}{depth} {{ OFFSET {x} -1 0 CHANNELS 3 Zrotation Xrotation Yrotation "
                f"{chain(name, 0, depth - 1)} }}")

    pairs = " ".join(chain(f"p{i}a", 1, 3) + " " + chain(f"p{i}b", -1, 3) for i in range(120))
    text = (f"HIERARCHY ROOT r {{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
            f"Yrotation {pairs} }}\nMOTION\nFrames: 1\nFrame Time: 0.1\n" + " ".join(["0"] * (6 + 120 * 2 * 9)) + "\n")
    (tmp_path / "crafted.bvh").write_text(text)
    start = time.perf_counter()
    with pytest.raises(InputError, match="not two legs and two arms"):
        read_bvh(tmp_path / "crafted.bvh")
    assert time.perf_counter() - start < 10.0


def test_a_rigify_deform_rig_whose_head_has_no_head_name(tmp_path, monkeypatch, reference):
    """Rigify's deform bones: `DEF-` prefixes, the neck and head named `spine.004` / `spine.006`; the limbs are
    read by name, the head found above the shoulders as the structural search finds it."""
    import rig_fixtures

    names = {key: f"DEF-{name}" for key, name in rig_fixtures.RIG_NAMES["rigify"].items()}
    names.update(pelvis="DEF-spine", spine_a="DEF-spine.001", spine_b="DEF-spine.002", chest="DEF-spine.003",
                 neck="DEF-spine.004", head="DEF-spine.006")
    monkeypatch.setitem(rig_fixtures.RIG_NAMES, "rigify-def", names)
    clip = read_one(write_rig_bvh(tmp_path / "def.bvh", "rigify-def"))
    assert clip.extra[NOTE].startswith("BVH rig: rigify;")
    np.testing.assert_allclose(clip.joints, reference, atol=0.01 * MM)
