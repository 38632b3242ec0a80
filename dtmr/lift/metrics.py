"""How well the lifter does: project 3-D clips through random cameras, lift them back, compare.

Errors are on the 12 limb joints (`LIMB_JOINTS`: shoulders, elbows, wrists, hips, knees, ankles), the
joints COCO-17 shares with N-UCLA (same names) and UI-PRMD (upper_arm, forearm, hand, upper_leg, lower_leg,
foot, which docs/topologies.md places at those joints): the face the lifter gets is synthesized from the
3-D head (`dtmr.lift.data`), so it is never scored. MPJPE: mean joint distance after root alignment (both
skeletons have the hip midpoint at 0); PA-MPJPE: after the best similarity transform (Procrustes: rotation,
scale, translation) per frame. Millimetres.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .apply import lift_keypoints
from .cameras import project, random_cameras, to_level_frame
from .data import LIMB_INDICES
from .keypoints import LEFT_HIP, RIGHT_HIP
from .model import LifterNet


def procrustes_aligned(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    """pred (N, J, 3) moved onto true by the best rotation, scale and translation of each frame."""
    mp, mt = pred.mean(1, keepdims=True), true.mean(1, keepdims=True)
    p, t = pred - mp, true - mt
    u, s, vt = np.linalg.svd(np.einsum("nji,njk->nik", p, t))
    d = np.sign(np.linalg.det(np.einsum("nij,njk->nik", u, vt)))  # no reflections
    s[:, -1] *= d
    u[:, :, -1] *= d[:, None]
    rot = np.einsum("nij,njk->nik", u, vt)
    scale = s.sum(1) / np.maximum((p ** 2).sum((1, 2)), 1e-12)
    return scale[:, None, None] * np.einsum("nji,nik->njk", p, rot) + mt


def frame_errors(pred: np.ndarray, true: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-frame MPJPE and PA-MPJPE (mm) over the limb joints of frames where both are finite."""
    p, t = pred[:, LIMB_INDICES].astype(np.float64), true[:, LIMB_INDICES].astype(np.float64)
    keep = np.isfinite(p).all((1, 2)) & np.isfinite(t).all((1, 2))
    p, t = p[keep], t[keep]
    mpjpe = np.linalg.norm(p - t, axis=-1).mean(-1) * 1000
    pa = np.linalg.norm(procrustes_aligned(p, t) - t, axis=-1).mean(-1) * 1000
    return mpjpe, pa


def lift_projected(joints: np.ndarray, net: LifterNet, rng: np.random.Generator, *, drop_face: bool = False):
    """(lifted, truth) (T, 17, 3) of a (T, 17, 3) COCO-17-like world clip seen by one random camera; the
    truth is in that camera's level frame with the hip midpoint at 0. `drop_face` hides the five face
    points from the lifter (a source without a face)."""
    hips = 0.5 * (joints[:, LEFT_HIP] + joints[:, RIGHT_HIP])
    target = np.nanmean(hips, axis=0)
    cams = random_cameras(target[None], rng)
    xy = project(joints[None], cams)[0]
    if drop_face:
        xy[:, :5] = np.nan
    truth = to_level_frame((joints - hips[:, None])[None], cams)[0]
    return lift_keypoints(xy, lifter=net), truth


def measure(clips: list[np.ndarray], net: LifterNet, seed: int = 0, *, drop_face: bool = False) -> dict:
    """MPJPE / PA-MPJPE (mm: mean and median over frames) of the clips, one random camera each."""
    rng = np.random.default_rng(seed)
    errors, pa_errors = [], []
    for joints in clips:
        hips_seen = np.isfinite(joints[:, [LEFT_HIP, RIGHT_HIP]]).all((1, 2))
        if not hips_seen.any():
            continue
        try:
            lifted, truth = lift_projected(joints, net, rng, drop_face=drop_face)
        except InputError:  # no frame shows the whole torso: nothing to lift, nothing to score
            continue
        e, pa = frame_errors(lifted, truth)
        errors.append(e)
        pa_errors.append(pa)
    e, pa = np.concatenate(errors), np.concatenate(pa_errors)
    return {"clips": len(errors), "frames": len(e), "mpjpe_mm": float(e.mean()),
            "mpjpe_median_mm": float(np.median(e)), "pa_mpjpe_mm": float(pa.mean()),
            "pa_mpjpe_median_mm": float(np.median(pa))}
