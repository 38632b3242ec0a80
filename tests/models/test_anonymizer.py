"""The Anonymizer: β = 0 is the identity, outputs in the source's space and length, provenance,
topology mapping, batching, missing joints, loading from a checkpoint."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dtmr
from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.models import Anonymizer, DisentangledTMR, DTMRConfig, save_checkpoint
from dtmr.models.anonymizer import fill_missing_joints
from dtmr.skeleton import get_topology, normalize, to_ntu25


def walking_clip(topology: str, frames: int, seed: int, subject: int = 1) -> Clip:
    """A skeleton drifting and swaying in a rotated, translated camera space (not normalized)."""
    rng = np.random.default_rng(seed)
    topo = get_topology(topology)
    rest = rng.normal(0, 0.25, (topo.num_joints, 3)).astype(np.float32)
    t = np.linspace(0, 2 * np.pi, frames, dtype=np.float32)[:, None, None]
    sway = 0.05 * np.sin(t + rng.uniform(0, 6, (1, topo.num_joints, 1)))
    joints = rest + sway + np.array([1.0, 0.2, 3.0]) + 0.3 * t / 6
    return Clip(joints.astype(np.float32), topology=topo.name, subject=subject, action=4,
                sample_name=f"{topology}_s{seed}")


def anonymizer(topology: str = "ntu25", beta: float = 0.2) -> Anonymizer:
    torch.manual_seed(0)
    return Anonymizer(DisentangledTMR(DTMRConfig.preset("small", topology), beta=beta), device="cpu")


def test_beta_zero_returns_the_source_exactly_nans_included():
    source = walking_clip("ntu25", 47, seed=1)
    source.joints[5:9, 3] = np.nan
    retargeted, released = anonymizer(beta=0.0).retarget_pair(source, walking_clip("ntu25", 80, seed=2, subject=2))
    assert np.array_equal(released.joints, source.joints, equal_nan=True)
    assert np.isfinite(retargeted.joints).all()


def test_outputs_keep_the_source_space_length_and_metadata():
    tool = anonymizer(beta=0.2)
    source, reference = walking_clip("ntu25", 90, seed=1), walking_clip("ntu25", 40, seed=2, subject=7)
    retargeted, released = tool.retarget_pair(source, reference)
    for clip in (retargeted, released):
        assert clip.joints.shape == source.joints.shape and clip.joints.dtype == np.float32
        assert clip.subject == source.subject and clip.action == source.action and clip.topology == "ntu25"
        assert clip.extra["source_clip"] == source.name and clip.extra["reference_clip"] == reference.name
        assert clip.extra["method"] == "dtmr" and clip.extra["beta"] == "0.2"
    assert retargeted.extra["output"] == "retargeted" and released.extra["output"] == "released"
    # the blend is done in the source's own space
    np.testing.assert_allclose(released.joints, 0.8 * source.joints + 0.2 * retargeted.joints, atol=1e-5)
    # the retargeted clip is the model's output on the normalized pair, mapped back to the source's space
    src, norm = normalize(source.joints, "ntu25")
    ref, _ = normalize(reference.joints, "ntu25")
    with torch.inference_mode():
        full = tool.model.retarget(torch.from_numpy(src)[None], torch.from_numpy(ref)[None])[0].numpy()
    np.testing.assert_allclose(retargeted.joints, norm.invert(full), atol=1e-5)
    assert tool.anonymize(source, reference).extra["output"] == "released"


def test_batch_equals_one_by_one():
    """In float64, so that rounding differences of other batch shapes are not amplified by the random-init
    autoregressive loop (docs/model.md)."""
    tool = anonymizer()
    tool.model.double()
    sources = [walking_clip("ntu25", n, seed=s) for s, n in ((1, 30), (2, 64), (3, 101))]
    reference = walking_clip("ntu25", 50, seed=9, subject=3)
    batched = tool.anonymize_batch(sources, reference, batch_size=2)
    for source, out in zip(sources, batched):
        np.testing.assert_allclose(out.joints, tool.anonymize(source, reference).joints, atol=1e-4)
    with pytest.raises(ValueError, match="references"):
        tool.anonymize_batch(sources, [reference])


def test_other_joint_sets_are_mapped_to_an_ntu25_model():
    tool = anonymizer("ntu25", beta=0.0)
    source = walking_clip("kinect_v1_20", 40, seed=4)
    released = tool.anonymize(source, walking_clip("uiprmd22", 60, seed=5, subject=2))
    assert released.topology == "ntu25"
    np.testing.assert_array_equal(released.joints, to_ntu25(source.joints, "kinect_v1_20"))


def test_wrong_topology_for_a_non_ntu_model_names_the_clip():
    tool = anonymizer("uiprmd22")
    source = walking_clip("ntu25", 30, seed=1).replace(source_file="/data/x.skeleton")
    with pytest.raises(InputError, match="uiprmd22") as info:
        tool.anonymize(source, walking_clip("uiprmd22", 30, seed=2))
    assert "/data/x.skeleton" in str(info.value)


def test_fill_missing_joints():
    topo = get_topology("kinect_v1_20")
    joints = walking_clip("kinect_v1_20", 10, seed=0).joints
    holes = joints.copy()
    holes[3:6, 4] = np.nan  # interior gap: linear interpolation
    holes[:2, 5] = np.nan  # leading gap: held
    holes[:, 7] = np.nan  # never seen: its parent
    filled = fill_missing_joints(holes, topo)
    assert np.isfinite(filled).all()
    np.testing.assert_allclose(filled[4, 4], (joints[2, 4] + joints[6, 4]) / 2, atol=1e-6)
    np.testing.assert_array_equal(filled[:2, 5], np.repeat(joints[2:3, 5], 2, axis=0))
    np.testing.assert_array_equal(filled[:, 7], filled[:, topo.parents[7]])
    np.testing.assert_array_equal(filled[holes == holes], holes[holes == holes])
    with pytest.raises(ValueError, match="no valid joint"):
        fill_missing_joints(np.full((3, 20, 3), np.nan, np.float32), topo)


def test_from_checkpoint_and_lazy_export(tmp_path):
    tool = anonymizer("kinect_v1_20", beta=0.5)
    path = save_checkpoint(tmp_path / "tool.pt", tool.model, data={"dataset": "synthetic"}, metrics={})
    loaded = dtmr.Anonymizer.from_checkpoint(path, device="cpu")
    assert loaded.beta == 0.5 and loaded.method == "dtmr" and loaded.topology.name == "kinect_v1_20"
    assert "state_dict" not in loaded.checkpoint and loaded.checkpoint["data"] == {"dataset": "synthetic"}
    source, reference = walking_clip("kinect_v1_20", 33, seed=1), walking_clip("kinect_v1_20", 70, seed=2)
    out = loaded.anonymize(source, reference)
    assert out.extra["model"] == str(path)
    np.testing.assert_allclose(out.joints, tool.anonymize(source, reference).joints, atol=1e-5)


def test_real_nwucla_clip(shared_data):
    data = np.load(shared_data / "nwucla.npz")
    clips = [Clip(data["joints"][i, : data["lengths"][i]], topology="kinect_v1_20", subject=int(data["subject"][i]))
             for i in (0, 700)]
    out = anonymizer("kinect_v1_20").anonymize(clips[0], clips[1])
    assert out.joints.shape == clips[0].joints.shape and np.isfinite(out.joints).all()


def test_a_naive_residual_model_blends_with_the_source_on_the_reference_bones(tmp_path):
    from dtmr.skeleton import naive_retarget

    torch.manual_seed(0)
    model = DisentangledTMR(DTMRConfig.preset("small", "ntu25", residual="naive"), beta=0.2)
    save_checkpoint(tmp_path / "naive.pt", model, data={}, metrics={})
    tool = Anonymizer.from_checkpoint(tmp_path / "naive.pt", device="cpu")
    assert tool.naive_residual and not anonymizer().naive_residual
    source, reference = walking_clip("ntu25", 70, seed=1), walking_clip("ntu25", 50, seed=2, subject=7)
    retargeted, released = tool.retarget_pair(source, reference)
    residual = naive_retarget(source.joints, reference.joints, "ntu25")
    np.testing.assert_allclose(released.joints, 0.8 * residual + 0.2 * retargeted.joints, atol=1e-5)
    assert not np.allclose(released.joints, 0.8 * source.joints + 0.2 * retargeted.joints, atol=1e-3)
