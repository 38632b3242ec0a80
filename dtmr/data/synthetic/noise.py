"""Kinect-like measurement noise: about 1 cm of jitter, worse at the hands and in depth, plus rare glitches.

The jitter has a smooth part (low-passed over a few frames, like the residual wobble of the Kinect
SDK's tracker) and a small white part. Per-joint factors follow the Kinect's known weak spots: the
hand, hand tip and thumb are the noisiest, the torso the steadiest. A glitch displaces one arm or head
joint by 2-7 cm for 1-4 frames (a tracking slip); the feet never glitch, so raw clips keep their
contacts. Noise is added in camera space, where z is the depth axis.
"""

from __future__ import annotations

import numpy as np

from ...skeleton import NTU25
from .envelopes import smooth_noise

SMOOTH_SD = 0.004  # m per axis
WHITE_SD = 0.0015
SMOOTH_FRAMES = 2.5
DEPTH_FACTOR = 1.3
GLITCHES_PER_CLIP = 0.3  # Poisson mean
GLITCH_RANGE = (0.02, 0.07)  # m

_JOINT_FACTOR = {
    "spine_base": 0.8, "spine_mid": 0.8, "spine_shoulder": 0.8, "neck": 0.8, "head": 0.9,
    "left_shoulder": 0.9, "right_shoulder": 0.9, "left_elbow": 1.1, "right_elbow": 1.1,
    "left_wrist": 1.3, "right_wrist": 1.3, "left_hand": 1.6, "right_hand": 1.6,
    "left_hand_tip": 1.6, "right_hand_tip": 1.6, "left_thumb": 1.6, "right_thumb": 1.6,
    "left_hip": 0.8, "right_hip": 0.8, "left_knee": 1.0, "right_knee": 1.0,
    "left_ankle": 1.0, "right_ankle": 1.0, "left_foot": 1.0, "right_foot": 1.0,
}
JOINT_FACTOR = np.array([_JOINT_FACTOR[name] for name in NTU25.joint_names])
GLITCH_JOINTS = np.array(
    [NTU25.index(f"{side}_{part}") for side in ("left", "right")
     for part in ("elbow", "wrist", "hand", "hand_tip", "thumb")] + [NTU25.index("head")]
)


def kinect_noise(rng: np.random.Generator, frames: int) -> np.ndarray:
    """(frames, 25, 3) noise in metres for one camera's view of one performance."""
    joints = NTU25.num_joints
    smooth = smooth_noise(rng, frames, joints * 3, SMOOTH_FRAMES).reshape(frames, joints, 3)
    noise = SMOOTH_SD * smooth + WHITE_SD * rng.standard_normal((frames, joints, 3))
    noise *= JOINT_FACTOR[:, None] * np.array([1.0, 1.0, DEPTH_FACTOR])
    for _ in range(rng.poisson(GLITCHES_PER_CLIP)):
        joint = rng.choice(GLITCH_JOINTS)
        start = rng.integers(0, frames)
        length = rng.integers(1, 5)
        direction = rng.standard_normal(3)
        direction *= rng.uniform(*GLITCH_RANGE) / np.linalg.norm(direction)
        noise[start : start + length, joint] += direction
    return noise
