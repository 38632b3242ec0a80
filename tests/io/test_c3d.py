"""C3D motion capture files (issue 45): joint centres, Plug-in Gait markers (full and lower body), units, the
lab's up axis, and one-line refusals. Every fixture is written here with ezc3d from the C3D format's public
description (c3d.org: POINT:LABELS, POINT:UNITS, POINT:RATE, a negative residual marks an invalid point)
and Plug-in Gait's published marker names (Vicon's Plug-in Gait reference guide)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given

from dtmr.cli import main
from dtmr.data import generate_clips
from dtmr.errors import InputError
from dtmr.io import c3d_file
from dtmr.io.c3d_joints import HARRINGTON
from dtmr.io.c3d_reader import read_c3d
from dtmr.io.library import ClipLibrary
from dtmr.io.sources import OPEN_PATTERNS, open_clip_source
from dtmr.skeleton import NTU25
from reader_fuzz import CHANGES, CUTS, FUZZ, assert_clips_or_one_line_error, damaged, truncated

ezc3d = pytest.importorskip("ezc3d")

N = NTU25.joint_names
RATE = 100.0
#: project (y up) -> a z-up lab (Vicon's axes): (x, y, z) -> (x, -z, y)
TO_Z_UP = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])


def j(joints, name):
    return joints[:, N.index(name)].astype(np.float64)


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def body() -> np.ndarray:
    """(T, 25, 3) NTU-25 joints of a synthetic performer, metres, y up."""
    return generate_clips(subjects=1, actions=1, repetitions=1, seed=5, noise=0.0)[0].joints[:40].astype(np.float64)


def body_axes(joints):
    """Per frame (x anterior, y superior, z to the right) of the pelvis."""
    z = unit(j(joints, "right_hip") - j(joints, "left_hip"))
    up = j(joints, "spine_shoulder") - j(joints, "spine_base")
    y = unit(up - np.sum(up * z, axis=-1, keepdims=True) * z)
    return np.cross(y, z), y, z


def plug_in_gait_markers(joints, upper=True) -> dict[str, np.ndarray]:
    """Plug-in Gait markers placed so that the joints are what the reader should compute: the ASIS and PSIS
    by inverting Harrington's regression, medial/lateral pairs around the knees and ankles, four head markers
    around the head, C7 and CLAV around the neck base, the wrist bar around the wrist."""
    x, y, z = body_axes(joints)
    half_width = np.linalg.norm(j(joints, "right_hip") - j(joints, "left_hip"), axis=-1, keepdims=True) / 2
    (ax, bx), (ay, by), (az, bz) = HARRINGTON["x"], HARRINGTON["y"], HARRINGTON["z"]
    width = (half_width - bz) / az
    depth = 0.15
    mid_hip = (j(joints, "left_hip") + j(joints, "right_hip")) / 2
    front = mid_hip - (ax * depth + bx) * x - (ay * width + by) * y
    back = front - depth * x
    m = {"LASI": front - width / 2 * z, "RASI": front + width / 2 * z, "LPSI": back - 0.045 * z,
         "RPSI": back + 0.045 * z}
    for side, s, out in (("left", "L", -z), ("right", "R", z)):
        m[f"{s}KNE"], m[f"{s}KNM"] = j(joints, f"{side}_knee") + 0.05 * out, j(joints, f"{side}_knee") - 0.05 * out
        m[f"{s}ANK"], m[f"{s}MED"] = j(joints, f"{side}_ankle") + 0.035 * out, j(joints, f"{side}_ankle") - 0.035 * out
        m[f"{s}TOE"] = j(joints, f"{side}_foot")
        m[f"{s}THI"] = (j(joints, f"{side}_hip") + j(joints, f"{side}_knee")) / 2 + 0.06 * out
        if upper:
            m[f"{s}SHO"], m[f"{s}ELB"] = j(joints, f"{side}_shoulder"), j(joints, f"{side}_elbow")
            m[f"{s}WRA"], m[f"{s}WRB"] = j(joints, f"{side}_wrist") + 0.025 * x, j(joints, f"{side}_wrist") - 0.025 * x
            m[f"{s}FIN"] = j(joints, f"{side}_hand")
    if upper:
        head = j(joints, "head")
        for name, dx, dz in (("LFHD", 1, -1), ("RFHD", 1, 1), ("LBHD", -1, -1), ("RBHD", -1, 1)):
            m[name] = head + 0.08 * dx * x + 0.07 * dz * z
        m["C7"], m["CLAV"] = j(joints, "spine_shoulder") - 0.08 * x, j(joints, "spine_shoulder") + 0.08 * x
    return m


def write_c3d(path, markers: dict[str, np.ndarray], units="mm", scale=1000.0, lab=TO_Z_UP, prefix="Subject:",
              invalid=()):
    """A C3D file of `markers` ((T, 3) metres, y up) turned into the lab's axes, in `units` (`scale` per metre).
    `invalid`: (label, frame) pairs written with a negative residual, C3D's "invalid point"."""
    labels = list(markers)
    frames = len(next(iter(markers.values())))
    points = np.ones((4, len(labels), frames))
    for k, name in enumerate(labels):
        points[:3, k] = (markers[name] @ lab.T * scale).T
    c3d = ezc3d.c3d()
    c3d["parameters"]["POINT"]["RATE"]["value"] = [RATE]
    c3d["parameters"]["POINT"]["LABELS"]["value"] = tuple(prefix + n for n in labels)
    if units is not None:
        c3d["parameters"]["POINT"]["UNITS"]["value"] = [units]
    c3d["data"]["points"] = points
    residuals = np.zeros((1, len(labels), frames))
    for name, frame in invalid:
        residuals[0, labels.index(name), frame] = -1.0
    c3d["data"]["meta_points"] = {"residuals": residuals, "camera_masks": np.zeros((7, len(labels), frames), bool)}
    c3d.write(str(path))
    return path


def test_plug_in_gait_full_body_markers_give_the_joints_upright(tmp_path, body):
    path = write_c3d(tmp_path / "walk.c3d", plug_in_gait_markers(body))
    source = open_clip_source(path)
    assert source.format == "c3d" and source.topology == "ntu25" and len(source) == 1
    clip = source.read(0)
    assert clip.fps == RATE and clip.sample_name == "walk" and clip.source_file == str(path)
    assert clip.extra["c3d_up"] == "+z" and clip.extra["c3d_units"] == "mm"
    assert clip.extra["c3d_hips"].startswith("Harrington")
    for name in ("left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle", "left_foot",
                 "head", "spine_shoulder", "left_shoulder", "left_elbow", "right_wrist", "left_hand"):
        np.testing.assert_allclose(j(clip.joints, name), j(body, name), atol=2e-4, err_msg=name)  # float32
    mid_hip = (j(body, "left_hip") + j(body, "right_hip")) / 2  # the reader's spine base (Kinect's sits higher)
    np.testing.assert_allclose(j(clip.joints, "spine_base"), mid_hip, atol=2e-4)
    height = np.median(j(clip.joints, "head")[:, 1] - j(clip.joints, "left_ankle")[:, 1])
    assert 1.2 < height < 2.1, height
    assert np.isnan(j(clip.joints, "left_hand_tip")).all() and np.isnan(j(clip.joints, "right_thumb")).all()


def test_joint_centres_are_used_as_they_are_in_metres_and_y_up(tmp_path, body):
    centres = {f"{s}{code}": j(body, f"{side}_{part}") for side, s in (("left", "L"), ("right", "R"))
               for code, part in (("HJC", "hip"), ("KJC", "knee"), ("AJC", "ankle"), ("SJC", "shoulder"))}
    centres["HEDO"] = j(body, "head")
    path = write_c3d(tmp_path / "centres.c3d", centres, units="m", scale=1.0, lab=np.eye(3), prefix="")
    clip = read_c3d(path).clips[0]
    assert clip.extra == {"c3d_hips": "joint centres", "c3d_units": "m", "c3d_up": "+y"}
    for name in ("left_hip", "right_knee", "left_ankle", "right_shoulder", "head"):
        np.testing.assert_allclose(j(clip.joints, name), j(body, name), atol=1e-6, err_msg=name)


def test_lower_body_set_with_a_sacrum_marker_leaves_the_upper_body_missing(tmp_path, body):
    markers = plug_in_gait_markers(body, upper=False)
    markers["SACR"] = (markers.pop("LPSI") + markers.pop("RPSI")) / 2
    for s in "LR":
        del markers[f"{s}KNM"]  # the lateral knee marker alone: the knee is that marker (documented offset)
    clip = read_c3d(write_c3d(tmp_path / "gait.c3d", markers, units="cm", scale=100.0)).clips[0]
    np.testing.assert_allclose(j(clip.joints, "right_hip"), j(body, "right_hip"), atol=2e-4)
    np.testing.assert_allclose(j(clip.joints, "left_knee"), markers["LKNE"], atol=2e-4)
    assert np.isnan(j(clip.joints, "head")).all() and np.isnan(j(clip.joints, "left_elbow")).all()
    assert np.isfinite(j(clip.joints, "spine_base")).all()


def test_invalid_points_are_missing(tmp_path, body):
    path = write_c3d(tmp_path / "gap.c3d", plug_in_gait_markers(body), invalid=[("LKNE", 3), ("LKNM", 3)])
    clip = read_c3d(path).clips[0]
    assert np.isnan(j(clip.joints, "left_knee")[3]).all() and np.isfinite(j(clip.joints, "left_knee")[4]).all()


def test_missing_required_markers_are_one_line_naming_the_file_and_what_is_missing(tmp_path, body, capsys):
    markers = plug_in_gait_markers(body)
    del markers["LASI"], markers["RANK"], markers["RMED"]
    path = write_c3d(tmp_path / "partial.c3d", markers)
    with pytest.raises(InputError) as err:
        read_c3d(path)
    message = str(err.value)
    assert message.startswith(str(path)) and "\n" not in message
    assert "left hip" in message and "LASI" in message and "right ankle" in message and "RANK" in message
    assert "right hip" in message  # both hip centres need all of the pelvis markers
    code = main(["data", "import", str(path), "-o", str(tmp_path / "lib.h5")])
    err_text = capsys.readouterr().err.strip()
    assert code == 2 and len(err_text.splitlines()) == 1 and "partial.c3d" in err_text and "LASI" in err_text


def test_data_import_reads_c3d_and_the_open_dialog_offers_it(tmp_path, body, capsys):
    path = write_c3d(tmp_path / "session.c3d", plug_in_gait_markers(body))
    assert main(["data", "import", str(path), "-o", str(tmp_path / "lib.h5")]) == 0, capsys.readouterr().err
    with ClipLibrary(tmp_path / "lib.h5") as library:
        assert len(library) == 1 and library.read(0).sample_name == "session"
    assert "*.c3d" in OPEN_PATTERNS


def test_damaged_files_are_one_line_errors(tmp_path, body, monkeypatch):
    good = write_c3d(tmp_path / "good.c3d", plug_in_gait_markers(body)).read_bytes()
    cases = {"short.c3d": good[: len(good) - 2000], "text.c3d": b"hello " * 200, "empty.c3d": b""}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    with pytest.raises(InputError, match="file ends after .* of 40 frames"):
        read_c3d(tmp_path / "short.c3d")
    for name in ("text.c3d", "empty.c3d"):
        with pytest.raises(InputError, match="not a C3D file"):
            read_c3d(tmp_path / name)
    # a crash inside the C3D library (as a damaged parameter section can cause) is a refusal, not our crash
    monkeypatch.setattr(c3d_file, "_child_command",
                        lambda: [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    with pytest.raises(InputError, match="crashed the C3D library"):
        read_c3d(tmp_path / "good.c3d")


C3D_FUZZ = FUZZ.__class__(FUZZ, max_examples=12)  # each read starts a child process


@pytest.fixture(scope="module")
def fuzz_source(tmp_path_factory, body):
    return write_c3d(tmp_path_factory.mktemp("c3d") / "fuzz.c3d", plug_in_gait_markers(body[:5])).read_bytes()


@C3D_FUZZ
@given(cut=CUTS)
def test_fuzz_truncated(tmp_path_factory, fuzz_source, cut):
    path = tmp_path_factory.mktemp("cut") / "x.c3d"
    assert_clips_or_one_line_error(read_c3d, path, truncated(fuzz_source, cut))


@C3D_FUZZ
@given(changes=CHANGES)
def test_fuzz_damaged(tmp_path_factory, fuzz_source, changes):
    path = tmp_path_factory.mktemp("flip") / "x.c3d"
    assert_clips_or_one_line_error(read_c3d, path, damaged(fuzz_source, changes))


@pytest.mark.parametrize("units", ["mm", ""])
def test_a_unit_that_makes_no_person_is_corrected_with_a_warning(tmp_path, body, units):
    """Joint centres in metres under POINT:UNITS "mm" (or none: C3D's default is mm) would be a 1.7 mm person."""
    centres = {f"{s}{code}": j(body, f"{side}_{part}") for side, s in (("left", "L"), ("right", "R"))
               for code, part in (("HJC", "hip"), ("KJC", "knee"), ("AJC", "ankle"), ("SJC", "shoulder"))}
    centres["HEDO"] = j(body, "head")
    path = write_c3d(tmp_path / "metres.c3d", centres, units=units, scale=1.0, lab=np.eye(3), prefix="")
    clip = read_c3d(path).clips[0]
    np.testing.assert_allclose(j(clip.joints, "left_knee"), j(body, "left_knee"), atol=1e-6)
    assert "units m (inferred" in clip.extra["import_note"]
    assert "POINT:UNITS is 'mm'" in clip.extra["import_warning"]


def test_a_body_no_unit_makes_a_person_is_one_line_naming_the_file(tmp_path, body):
    centres = {f"{s}{code}": j(body, f"{side}_{part}") * 1e-3 for side, s in (("left", "L"), ("right", "R"))
               for code, part in (("HJC", "hip"), ("KJC", "knee"), ("AJC", "ankle"), ("SJC", "shoulder"))}
    centres["HEDO"] = j(body, "head") * 1e-3
    path = write_c3d(tmp_path / "tiny.c3d", centres, units="mm", scale=1.0, lab=np.eye(3), prefix="")
    with pytest.raises(InputError, match="tiny.c3d: a body .* no person's height"):
        read_c3d(path)
