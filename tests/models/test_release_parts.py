"""`Anonymizer.retarget_parts`: the released clip's two terms, re-blended at any β without the model
(the Studio's β slider), for the source residual and the naive one."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dtmr.models import Anonymizer, DisentangledTMR, DTMRConfig, ReleaseParts
from dtmr.skeleton import get_topology


def clip_pair():
    from dtmr.data.clip import Clip

    rng = np.random.default_rng(0)
    topo = get_topology("ntu25")
    clips = []
    for seed, frames in ((1, 50), (2, 70)):
        rest = rng.normal(0, 0.25, (topo.num_joints, 3)).astype(np.float32)
        t = np.linspace(0, 2 * np.pi, frames, dtype=np.float32)[:, None, None]
        joints = rest + 0.05 * np.sin(t) + np.array([1.0, 0.2, 3.0], dtype=np.float32)
        clips.append(Clip(joints.astype(np.float32), topology="ntu25", subject=seed, action=1,
                          sample_name=f"s{seed}"))
    clips[0].joints[5:9, 3] = np.nan
    return clips


@pytest.mark.parametrize("residual", ["source", "naive"])
def test_parts_blend_back_to_the_released_clip_and_to_both_ends(residual):
    torch.manual_seed(0)
    tool = Anonymizer(DisentangledTMR(DTMRConfig.preset("small", "ntu25", residual=residual), beta=0.3),
                      device="cpu")
    source, reference = clip_pair()
    retargeted, released, parts = tool.retarget_parts(source, reference)
    assert isinstance(parts, ReleaseParts) and parts.beta == pytest.approx(0.3)
    assert np.array_equal(parts.joints(), released.joints, equal_nan=True)
    full = parts.joints(1.0)  # D, with the source's missing joints still missing (the blend keeps them)
    missing = np.isnan(source.joints)
    assert np.isnan(full[missing]).all()
    np.testing.assert_allclose(full[~missing], retargeted.joints[~missing], atol=1e-6)
    if residual == "source":  # β = 0 gives the source back, its missing joints included
        assert np.array_equal(parts.joints(0.0), source.joints, equal_nan=True)
    else:  # the source on the reference's bones: not the source
        assert not np.allclose(parts.joints(0.0)[:5], source.joints[:5])
    middle = parts.joints(0.65)
    np.testing.assert_allclose(middle, 0.65 * parts.full + 0.35 * parts.residual, atol=1e-6, equal_nan=True)
    with pytest.raises(ValueError, match="β must lie in"):
        parts.joints(1.5)
    same = tool.retarget_pair(source, reference)
    assert np.array_equal(same[1].joints, released.joints, equal_nan=True)
