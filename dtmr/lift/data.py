"""Training and measurement data of the lifter: 3-D clips -> COCO-17-like 3-D joints -> random cameras ->
2-D pixels, with the 3-D target in the camera's level frame (`dtmr.lift.cameras`), root-relative.

COCO-17 from NTU-25: the 12 limb joints (shoulders, elbows, wrists, hips, knees, ankles) are NTU's own; the
five face points, which no 3-D set here has, are placed on the head: in a head frame with up = neck->head,
right = left->right shoulder made orthogonal to up, forward = up x right (the direction the performer
faces), at fixed offsets from the Kinect head joint (`FACE_OFFSETS_M`, right/up/forward): nose 10 cm in
front, eyes 8.5 cm in front and 3.2 cm to each side, ears 7.5 cm to each side. Training scales these
offsets by a per-sample factor (0.85-1.15), because real detectors place the face differently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..skeleton import COCO17, NTU25, to_ntu25
from .cameras import project, random_cameras, to_level_frame
from .keypoints import LEFT_HIP, RIGHT_HIP, SCALE_HALF_WINDOW, normalise

#: COCO-17 joint -> NTU-25 joint for the 12 limb joints both sets have (same names)
LIMB_JOINTS = tuple(n for n in COCO17.joint_names if n.split("_", 1)[-1] in
                    ("shoulder", "elbow", "wrist", "hip", "knee", "ankle"))
LIMB_INDICES = tuple(COCO17.index(n) for n in LIMB_JOINTS)
#: face offsets from the head joint, metres, (right, up, forward)
FACE_OFFSETS_M = {
    "nose": (0.0, -0.02, 0.10),
    "left_eye": (-0.032, 0.015, 0.085),
    "right_eye": (0.032, 0.015, 0.085),
    "left_ear": (-0.075, 0.0, 0.0),
    "right_ear": (0.075, 0.0, 0.0),
}
#: COCO-17 index of each joint's mirror image (left <-> right)
MIRROR = tuple(COCO17.index(n.replace("left", "@").replace("right", "left").replace("@", "right"))
               for n in COCO17.joint_names)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)


def coco17_from_ntu25(ntu: np.ndarray, face_scale: float | np.ndarray = 1.0) -> np.ndarray:
    """(..., 17, 3) COCO-17-like joints of (..., 25, 3) NTU-25 joints (metres, y up); NaN stays NaN."""
    out = np.empty(ntu.shape[:-2] + (COCO17.num_joints, 3), dtype=np.float64)
    for name in LIMB_JOINTS:
        out[..., COCO17.index(name), :] = ntu[..., NTU25.index(name), :]
    head, neck = ntu[..., NTU25.index("head"), :], ntu[..., NTU25.index("neck"), :]
    up = _unit(head - neck)
    right = ntu[..., NTU25.index("right_shoulder"), :] - ntu[..., NTU25.index("left_shoulder"), :]
    right = _unit(right - np.sum(right * up, -1, keepdims=True) * up)
    forward = np.cross(up, right)
    scale = np.asarray(face_scale, dtype=np.float64)[..., None]
    for name, (r, u, f) in FACE_OFFSETS_M.items():
        out[..., COCO17.index(name), :] = head + scale * (r * right + u * up + f * forward)
    return out


def coco17_clip_joints(joints: np.ndarray, topology: str) -> np.ndarray:
    """(T, 17, 3) COCO-17-like joints of a clip of any topology that maps to NTU-25."""
    return coco17_from_ntu25(to_ntu25(joints, topology).astype(np.float64))


@dataclass(frozen=True)
class Batch:
    """Network inputs (B, W, 17, 3), 3-D targets (B, 17, 3) in metres (level frame, hip midpoint at 0)."""

    features: np.ndarray
    targets: np.ndarray


@dataclass(frozen=True)
class Augmentation:
    """Training-only perturbations of the projected 2-D (documented in docs/models.md)."""

    #: pixel noise sd, as a fraction of the 2-D torso size, drawn per sample from U(0, max)
    noise_max: float = 0.04
    #: probability that a sample has joints dropped, and the per-joint-per-frame drop rate then
    drop_sample: float = 0.4
    drop_rate: float = 0.12
    #: probability that a sample has no face at all (a source whose face is missing)
    drop_face: float = 0.1
    #: frame strides drawn uniformly (2 imitates a clip at half the frame rate)
    strides: tuple[int, ...] = (1, 2)
    face_scale: tuple[float, float] = (0.85, 1.15)
    mirror: bool = True


class WindowSampler:
    """Random (clip, frame, camera) samples of a set of 3-D COCO-17-like clips."""

    def __init__(self, clips: list[np.ndarray], window: int, augmentation: Augmentation = Augmentation()):
        if not clips:
            raise ValueError("no clips to sample from")
        self.window = window
        self.aug = augmentation
        self.lengths = np.array([len(c) for c in clips])
        self.starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]])
        self.frames = np.concatenate(clips).astype(np.float64)

    def sample(self, n: int, rng: np.random.Generator) -> Batch:
        """n samples; samples whose 2-D cannot be normalised (too many dropped torso joints) are left out."""
        aug = self.aug
        clip = rng.choice(len(self.lengths), n, p=self.lengths / self.lengths.sum())
        t = rng.integers(0, self.lengths[clip])
        stride = rng.choice(np.asarray(aug.strides), n)
        half = SCALE_HALF_WINDOW
        offsets = np.arange(-half, half + 1)
        frame = np.clip(t[:, None] + stride[:, None] * offsets, 0, self.lengths[clip][:, None] - 1)
        pts = self.frames[self.starts[clip][:, None] + frame]  # (n, 2*half+1, 17, 3)
        pts = self._reshape_face(pts, rng)
        if aug.mirror:
            flip = rng.random(n) < 0.5
            mirrored = pts[..., MIRROR, :] * np.array([-1.0, 1.0, 1.0])
            pts = np.where(flip[:, None, None, None], mirrored, pts)
        centre3 = 0.5 * (pts[:, half, LEFT_HIP] + pts[:, half, RIGHT_HIP])
        cams = random_cameras(centre3, rng)
        targets = to_level_frame(pts[:, half] - centre3[:, None], cams)
        xy = project(pts, cams)
        mask = np.ones(xy.shape[:-1], dtype=bool)
        xy, mask = self._damage(xy, mask, rng)
        features, ok = normalise(xy, mask)
        w = self.window // 2
        features = features[:, half - w:half + w + 1]
        return Batch(features=features[ok], targets=targets[ok].astype(np.float32))

    def _reshape_face(self, pts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Scale the synthesized face around the head (per sample), as detectors differ in where they put it."""
        lo, hi = self.aug.face_scale
        if lo == hi == 1.0:
            return pts
        ears = 0.5 * (pts[..., COCO17.index("left_ear"), :] + pts[..., COCO17.index("right_ear"), :])
        k = rng.uniform(lo, hi, len(pts))[:, None, None, None]
        face = np.array([COCO17.index(n) for n in FACE_OFFSETS_M])
        pts = pts.copy()
        pts[..., face, :] = ears[..., None, :] + k * (pts[..., face, :] - ears[..., None, :])
        return pts

    def _damage(self, xy: np.ndarray, mask: np.ndarray, rng: np.random.Generator):
        """Detector-like pixel noise and missing joints."""
        aug = self.aug
        n = len(xy)
        if aug.noise_max > 0:
            torso = np.linalg.norm(xy[:, :, 5] - xy[:, :, 11], axis=-1).mean(axis=1)
            sd = rng.uniform(0, aug.noise_max, n) * torso
            xy = xy + rng.normal(size=xy.shape) * sd[:, None, None, None]
        if aug.drop_sample > 0:
            dropping = rng.random(n) < aug.drop_sample
            mask &= ~(dropping[:, None, None] & (rng.random(mask.shape) < aug.drop_rate))
        if aug.drop_face > 0:
            no_face = rng.random(n) < aug.drop_face
            mask[no_face, :, :5] = False
        return np.where(mask[..., None], xy, np.nan), mask
