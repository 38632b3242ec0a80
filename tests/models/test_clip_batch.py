"""The Anonymizer's batched NumPy work (dtmr/models/clip_batch.py) gives, clip for clip, the bytes of the per-clip
functions of dtmr.skeleton, and a whole `retarget_pairs` gives the bytes of the per-clip pipeline it replaced:
releases stay byte-identical."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dtmr.data.clip import Clip
from dtmr.io.library import ClipLibrary
from dtmr.models import DisentangledTMR, DTMRConfig
from dtmr.models.anonymizer import Anonymizer, fill_missing_joints
from dtmr.models.clip_batch import invert_batch, naive_retarget_batch, normalize_batch
from dtmr.models.interface import blend_release
from dtmr.resources import resource_path
from dtmr.skeleton import NTU25, normalize, to_ntu25
from dtmr.skeleton.retarget import naive_retarget

DEMO = resource_path("demo/demo_library.h5")


@pytest.fixture(scope="module")
def clips() -> list[Clip]:
    """24 demo clips of many lengths, one of exactly 64 frames and one of a single frame, some with holes."""
    with ClipLibrary(DEMO) as demo:
        out = demo.read_many([(k * 37) % len(demo) for k in range(24)])
    out[1] = out[1].replace(joints=np.ascontiguousarray(out[1].joints[:64]) if out[1].num_frames >= 64 else
                            np.resize(out[1].joints, (64, 25, 3)))
    out[2] = out[2].replace(joints=out[2].joints[:1].copy())
    out[3].joints[:, 7] = np.nan  # a joint never seen
    out[4].joints[5:15, 3] = np.nan  # a joint missing for a while
    out[5].joints[:3] = np.nan  # whole frames missing at the start
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_normalize_invert_and_naive_match_the_per_clip_functions(clips):
    filled = [fill_missing_joints(c.joints, NTU25) for c in clips]
    batch, transforms = normalize_batch(filled, NTU25)
    for i, joints in enumerate(filled):
        one, transform = normalize(joints, NTU25)
        assert _same(batch[i], one)
        assert _same(transforms[i].rotation, transform.rotation) and _same(transforms[i].origin, transform.origin)
    for i, inverted in enumerate(invert_batch(batch * 1.01, transforms)):
        assert _same(inverted, transforms[i].invert(batch[i] * 1.01))
    references = [c.joints for c in clips[::-1]]
    for i, retargeted in enumerate(naive_retarget_batch([c.joints for c in clips], references, NTU25)):
        assert _same(retargeted, naive_retarget(clips[i].joints, references[i], NTU25))


def _per_clip(anonymizer: Anonymizer, clips, references, batch_size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The per-clip pipeline `retarget_pairs` replaced: (full retarget, release) per clip."""
    topology = anonymizer.topology
    out = []
    for start in range(0, len(clips), batch_size):
        batch, refs = clips[start : start + batch_size], references[start : start + batch_size]
        sources = [c.joints if c.topology == topology.name else to_ntu25(c.joints, c.topology) for c in batch]
        reference_joints = [r.joints if r.topology == topology.name else to_ntu25(r.joints, r.topology) for r in refs]
        src = [normalize(fill_missing_joints(j, topology), topology) for j in sources]
        ref = [normalize(fill_missing_joints(j, topology), topology)[0] for j in reference_joints]
        with torch.inference_mode():
            full = anonymizer.model.retarget(torch.from_numpy(np.stack([s for s, _ in src])),
                                             torch.from_numpy(np.stack(ref))).float().numpy()
        for i, (_, transform) in enumerate(src):
            retargeted = transform.invert(full[i])
            residual = naive_retarget(sources[i], reference_joints[i], topology) if anonymizer.naive_residual \
                else sources[i]
            out.append((retargeted, blend_release(retargeted, residual, anonymizer.beta).astype(np.float32)))
    return out


@pytest.mark.parametrize("config", [{}, {"residual": "naive", "output_head": "kinematic"}],
                         ids=["joint-head", "naive-residual-kinematic"])
def test_retarget_pairs_gives_the_bytes_of_the_per_clip_pipeline(clips, config):
    torch.manual_seed(0)
    model = DisentangledTMR(DTMRConfig.preset("small", "ntu25", **config), beta=0.3)
    anonymizer = Anonymizer(model, device="cpu")
    mapped = Clip(joints=clips[6].joints[:, :17] * 1.1, topology="h36m17", sample_name="h36m")  # mapped to NTU-25
    sources, references = [*clips[:11], mapped], [*clips[12:][::-1]]
    for batch_size in (1, 5):
        pairs = anonymizer.retarget_pairs(sources[:6] if batch_size == 1 else sources,
                                          references[:6] if batch_size == 1 else references, batch_size=batch_size)
        n = len(pairs)
        expected = _per_clip(anonymizer, sources[:n], references[:n], batch_size)
        for (retargeted, released), (full, blended) in zip(pairs, expected):
            assert _same(retargeted.joints, full) and _same(released.joints, blended)
