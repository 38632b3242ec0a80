"""What a clip goes through before SGN sees it; one code path for training, evaluation and the Studio.

1. Topology: a clip of another joint set is mapped to the recognizer's (`to_ntu25`, when the recognizer
   is NTU-25); otherwise the joint sets must match.
2. Spatial normalization: the spatial part of `dtmr.skeleton.normalize` (DESIGN §2.3), *without* its
   64-frame resampling: the first valid frame's pelvis goes to the origin and the first-frame hip line is
   turned (about the vertical) onto +x. SGN's own pipeline only translates (to the spine-mid joint);
   canonical yaw makes the recognizer view-invariant without rotation augmentation, and raw and
   anonymized clips get exactly the same treatment.
3. Missing joints (NaN) become 0 after centring, i.e. they sit at the first-frame pelvis.
4. Segment sampling (`sampling.segment_indices`): `seg` frames per draw. Sliding windows (the Studio's
   per-frame track) are cut from the clip prepared once by steps 1-3, so a window is normalized on the
   clip's first frame, not its own (this lets overlapping windows share SGN's per-frame work).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ...data.clip import Clip
from ...skeleton import Topology, get_topology, to_ntu25, topology_for_joint_count
from ...skeleton.normalize import canonical_transform
from .sampling import segment_indices

ClipLike = Clip | np.ndarray


def _joints_in(item: ClipLike, topology: Topology | None) -> tuple[np.ndarray, Topology]:
    """The item's (T, J, 3) joints in `topology` (the item's own when None), and that topology."""
    if isinstance(item, Clip):
        joints, own = item.joints, get_topology(item.topology)
    else:
        joints = np.asarray(item, dtype=np.float32)
        if joints.ndim != 3 or joints.shape[-1] != 3 or joints.shape[0] == 0:
            raise ValueError(f"expected (T, J, 3) joints with T > 0, got shape {joints.shape}")
        own = topology or topology_for_joint_count(joints.shape[1])
        if own is None:
            raise ValueError(f"cannot tell the topology of {joints.shape[1]}-joint arrays; pass topology=")
        if own.num_joints != joints.shape[1]:
            raise ValueError(f"topology {own.name} has {own.num_joints} joints, array has {joints.shape[1]}")
    if topology is None or own.name == topology.name:
        return joints, own
    if topology.name == "ntu25":
        return to_ntu25(joints, own), topology
    raise ValueError(f"a {topology.name} recognizer cannot read {own.name} clips")


def prepare_sequence(item: ClipLike, topology: str | Topology | None = None) -> np.ndarray:
    """Steps 1-3: (T, J, 3) float32, spatially normalized, NaN -> 0."""
    topo = None if topology is None else get_topology(topology)
    joints, topo = _joints_in(item, topo)
    normalized = canonical_transform(joints, topo).apply_spatial(joints)
    return np.nan_to_num(normalized, nan=0.0)


def sample_segments(prepared: Sequence[np.ndarray], seg: int, rng: np.random.Generator | None,
                    samples: int = 1) -> torch.Tensor:
    """Step 4 on prepared sequences: (N * samples, seg, J, 3), the samples of a clip consecutive."""
    if not prepared:
        raise ValueError("no clips to sample")
    out = np.stack([seq[segment_indices(len(seq), seg, rng, samples)] for seq in prepared])
    return torch.from_numpy(out.reshape(-1, *out.shape[2:]))


def sgn_batch(clips_or_arrays: Sequence[ClipLike], seg: int, rng: np.random.Generator | None, train: bool, *,
              samples: int = 5, topology: str | Topology | None = None) -> torch.Tensor:
    """SGN's model input for a list of clips (or (T, J, 3) arrays in `topology`).

    train: one random draw per clip, (N, seg, J, 3). Test: `samples` draws per clip, (N * samples, seg,
    J, 3), to be averaged over consecutive groups of `samples` logits. `rng` None gives the segments'
    middle frames.
    """
    prepared = [prepare_sequence(item, topology) for item in clips_or_arrays]
    return sample_segments(prepared, seg, rng, 1 if train else samples)

