"""The anatomical training losses equal the plausibility score's measures (in torch) and push back."""

from __future__ import annotations

import math

import numpy as np
import torch

from dtmr.data.synthetic import generate_clips
from dtmr.eval.plausibility import self_intersection
from dtmr.skeleton import get_topology
from dtmr.skeleton.joint_limits import hinge_violations, limbs
from dtmr.train.body_losses import hinge_excess, joint_angle_loss, limb_overlap_loss

TOPO = get_topology("ntu25")


def standing_clip() -> np.ndarray:
    return generate_clips(subjects=1, actions=1, repetitions=1, noise=0.0)[0].joints[:16].astype(np.float64)


def test_a_plausible_body_costs_nothing():
    joints = torch.from_numpy(standing_clip())
    assert joint_angle_loss(joints, TOPO).item() == 0.0
    assert limb_overlap_loss(joints, TOPO).item() == 0.0


def test_a_knee_bent_backwards_is_the_metrics_violation_and_its_gradient_unbends_it():
    joints = standing_clip()
    leg = limbs(TOPO)[2]
    # swing the left shank forwards (towards +z, the way the body faces) about the knee by 70 degrees
    shank = joints[:, leg.lower] - joints[:, leg.hinge]
    angle = math.radians(70)
    rotated = shank.copy()
    rotated[:, 1] = shank[:, 1] * math.cos(angle) - shank[:, 2] * math.sin(angle)
    rotated[:, 2] = shank[:, 1] * math.sin(angle) + shank[:, 2] * math.cos(angle)
    for j in [leg.lower] + [k for k in range(TOPO.num_joints) if TOPO.parents[k] == leg.lower]:
        joints[:, j] += rotated - shank
    metric = hinge_violations(joints, TOPO)
    excess = np.degrees(hinge_excess(torch.from_numpy(joints), TOPO).numpy())
    np.testing.assert_allclose(excess, metric, atol=1e-6)
    assert metric[:, 2].min() > 5.0  # the left knee is past its limit on every frame
    x = torch.from_numpy(joints).requires_grad_()
    loss = joint_angle_loss(x, TOPO)
    loss.backward()
    with torch.no_grad():
        assert joint_angle_loss(x - 0.05 * x.grad / x.grad.norm(), TOPO) < loss


def test_limbs_through_each_other_are_the_metrics_overlap_and_cost():
    joints = standing_clip()
    right_leg, left_leg = limbs(TOPO)[3], limbs(TOPO)[2]
    joints[:, right_leg.lower] = joints[:, left_leg.lower]  # the two shins cross at the ankles
    expected = self_intersection(joints, TOPO)
    assert expected.min() > 0.05
    pairs = torch.from_numpy(joints)
    loss = limb_overlap_loss(pairs, TOPO)
    assert loss.item() > 0.0
    x = pairs.clone().requires_grad_()
    limb_overlap_loss(x, TOPO).backward()
    assert torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0


def test_parallel_segments_keep_the_gradient_finite():
    """Arms hanging parallel to the torso make the closest-point system singular: the unused branch of a
    `where` must not turn the gradient into NaN (it did once, and a whole training went NaN)."""
    joints = standing_clip()
    arm = limbs(TOPO)[0]
    hip_mid = (joints[:, TOPO.left_hip] + joints[:, TOPO.right_hip]) / 2
    torso = (joints[:, arm.upper] + joints[:, limbs(TOPO)[1].upper]) / 2 - hip_mid
    joints[:, arm.lower] = joints[:, arm.hinge] - 0.5 * torso  # the forearm exactly parallel to the torso
    x = torch.from_numpy(joints).requires_grad_()
    (limb_overlap_loss(x, TOPO) + joint_angle_loss(x, TOPO)).backward()
    assert torch.isfinite(x.grad).all()
