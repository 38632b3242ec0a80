import numpy as np
import pytest
import torch

from dtmr.models.recognizers import SGN, sgn_batch
from dtmr.skeleton import get_topology


def count(module):
    return sum(p.numel() for p in module.parameters())


def test_parameter_count_matches_upstream_sgn():
    assert count(SGN(60, 25)) == 691_048
    assert count(SGN(40, 25)) == 680_788
    assert count(SGN(120, 25)) == 721_828


@pytest.mark.parametrize("joints", [20, 22, 25])
def test_shapes_for_every_joint_count(joints):
    model = SGN(num_classes=7, num_joints=joints)
    assert model(torch.randn(3, 20, joints, 3)).shape == (3, 7)
    with pytest.raises(ValueError, match="SGN input"):
        model(torch.randn(3, 16, joints, 3))


def test_shared_window_evaluation_equals_the_plain_forward():
    torch.manual_seed(0)
    model = SGN(5, 20).eval()
    sequence = torch.randn(40, 20, 3)
    indices = torch.stack([torch.arange(0, 40, 2)] + [torch.arange(20) + s for s in range(0, 21, 4)])
    expected = model(sequence[indices])
    torch.testing.assert_close(model.forward_windows(sequence, indices), expected, rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match="eval"):
        model.train().forward_windows(sequence, indices)


def toy_clips(rng, count, frames=40):
    """Two classes that differ in how both arms swing: side to side vs up and down."""
    topo = get_topology("kinect_v1_20")
    arms = [topo.index(f"{side}_{part}") for side in ("left", "right") for part in ("elbow", "wrist", "hand")]
    base = rng.normal(scale=0.3, size=(topo.num_joints, 3)).astype(np.float32)
    labels = rng.integers(0, 2, size=count)
    clips = []
    for label in labels:
        t = np.linspace(0, 2 * np.pi * rng.uniform(1, 2), frames) + rng.uniform(0, 2 * np.pi)
        clip = base + rng.normal(scale=0.02, size=(frames, topo.num_joints, 3)).astype(np.float32)
        clip[:, arms, 0 if label == 0 else 1] += 0.3 * np.sin(t)[:, None]
        clips.append(clip)
    return clips, torch.from_numpy(labels)


def test_sgn_learns_a_toy_two_class_problem_quickly():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    clips, labels = toy_clips(rng, 96)
    train, train_y, test, test_y = clips[:48], labels[:48], clips[48:], labels[48:]
    seg = 8
    model = SGN(num_classes=2, num_joints=20, seg=seg)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    # 32 steps of 16-clip batches: with 16 steps of 8, one seed of six stayed just under 90 % (43/48)
    for _ in range(32):
        pick = rng.choice(len(train), size=16, replace=False)
        x = sgn_batch([train[i] for i in pick], seg, rng, train=True, topology="kinect_v1_20")
        loss = torch.nn.functional.cross_entropy(model(x), train_y[pick])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # a few steps leave BatchNorm's running averages far from the data: re-estimate them on the training set
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None
    with torch.no_grad():
        model(sgn_batch(train, seg, rng, train=True, topology="kinect_v1_20"))
    model.eval()
    with torch.no_grad():
        x = sgn_batch(test, seg, np.random.default_rng(1), train=False, samples=2, topology="kinect_v1_20")
        predicted = model(x).view(len(test), 2, 2).mean(dim=1).argmax(dim=1)
    accuracy = (predicted == test_y).float().mean().item()
    assert accuracy >= 0.9, accuracy
