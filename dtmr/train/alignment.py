"""Time alignment of a cross-reconstruction target to its source (dynamic time warping).

The target of a cross pair, x(P2, A1), is another performance than the source x(P1, A1): the same action
done by someone else, at their own pace. Without alignment the reconstruction loss asks the decoder for
the other performance's timing, which nothing it sees determines, and the best it can do is a blur. So the
target is warped onto the source's frames first: dynamic time warping between the two sequences of bone
directions (unit vectors parent -> child, which do not depend on the two bodies' sizes), then each source
frame takes the mean of the target frames matched to it (`dtmr.models.motion.dtw`, shared with the re-timing
and k-same anonymizers). The body, style and amplitude of the target stay; only its timing becomes the
source's. (The paper does not say how it treats timing within a quadruplet; docs/training.md.)
"""

from __future__ import annotations

import torch

from ..models.motion.dtw import dtw_paths, warp_onto  # noqa: F401 - dtw_paths re-exported (tests)
from ..skeleton import Topology


def align_to_source(target: torch.Tensor, source: torch.Tensor, topology: Topology) -> torch.Tensor:
    """(B, T, J, 3) target warped onto the source's timing (same shape); no gradient."""
    return warp_onto(target, source, topology)
