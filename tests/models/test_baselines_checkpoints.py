import torch

from dtmr.models.baselines import DMR, PMR, GaussianNoise, NaiveRetargeter
from dtmr.models.checkpoints.checkpoint import (
    build_model_from_checkpoint,
    load_checkpoint,
    registered_methods,
    save_checkpoint,
)


def round_trip(model, path):
    save_checkpoint(path, model, data={"dataset": "toy"}, metrics={})
    return build_model_from_checkpoint(load_checkpoint(path), source=path)


def test_every_baseline_is_registered_and_round_trips(tmp_path):
    assert {"dmr", "pmr", "naive", "noise"} <= set(registered_methods())
    torch.manual_seed(0)
    src, ref = torch.randn(2, 64, 20, 3), torch.randn(2, 64, 20, 3)
    for model in (PMR("kinect_v1_20", num_subjects=4, num_actions=3), DMR("kinect_v1_20"),
                  NaiveRetargeter("kinect_v1_20"), GaussianNoise("kinect_v1_20", sigma=0.02, seed=5)):
        loaded = round_trip(model.eval(), tmp_path / f"{model.method}.pt")
        assert type(loaded) is type(model) and loaded.method == model.method
        assert loaded.topology.name == "kinect_v1_20" and loaded.beta == 1.0
        assert loaded.config_dict() == model.config_dict()
        if isinstance(model, GaussianNoise):
            model.reseed(model.seed)
        torch.testing.assert_close(loaded.retarget(src, ref), model.retarget(src, ref))


def test_baselines_satisfy_the_retargeter_protocol_and_run_in_the_anonymizer(tmp_path):
    import numpy as np

    from dtmr import Clip
    from dtmr.models import Anonymizer, Retargeter

    for model in (PMR("ntu25", 2, 2), DMR("ntu25"), NaiveRetargeter("ntu25"), GaussianNoise("ntu25")):
        assert isinstance(model, Retargeter)
    path = save_checkpoint(tmp_path / "naive.pt", NaiveRetargeter("ntu25"), data={}, metrics={})
    anonymizer = Anonymizer.from_checkpoint(path, device="cpu")
    rng = np.random.default_rng(0)
    source = Clip(rng.normal(scale=0.3, size=(50, 25, 3)).astype(np.float32), subject=1, sample_name="src")
    reference = Clip(rng.normal(scale=0.3, size=(70, 25, 3)).astype(np.float32), subject=2, sample_name="ref")
    retargeted, released = anonymizer.retarget_pair(source, reference)
    assert anonymizer.method == "naive" and anonymizer.beta == 1.0
    assert retargeted.num_frames == released.num_frames == 50
    np.testing.assert_allclose(released.joints, retargeted.joints, atol=1e-5)
