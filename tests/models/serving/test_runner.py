"""The model runner of `dtmr anonymize` (dtmr/models/inference.py, cuda_graph.py): the batch chosen from free
memory, the refusals on the CPU, the CPU path unchanged; on a CUDA device (skipped without one) the pinned,
overlapped path, the CUDA graph of the cached decode and bf16 autocast against the eager float32 model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dtmr.errors import DtmrError
from dtmr.models import DisentangledTMR, DTMRConfig
from dtmr.models.anonymizer import Anonymizer
from dtmr.models.baselines.naive import NaiveRetargeter
from dtmr.models.serving.cuda_graph import GraphedRetarget, check_graphable
from dtmr.models.serving.runner import ModelRunner, batch_for_memory, check_precision, tile_batch

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
GIB = 1 << 30


def _model(**config) -> DisentangledTMR:
    torch.manual_seed(0)
    return DisentangledTMR(DTMRConfig.preset("small", "ntu25", **config), beta=0.3).eval()


def _clips(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(0, 0.3, (batch, 64, 25, 3)).astype(np.float32) for _ in range(2))


def test_the_batch_fills_a_share_of_the_free_memory_in_multiples_of_8():
    assert batch_for_memory(10 * GIB, 1 << 20) == 7168  # 70 % of 10 GiB in 1 MiB clips
    assert batch_for_memory(10 * GIB, 1 << 20, largest=1000) == 1000 - 1000 % 8
    assert batch_for_memory(10 * GIB, 3_000_000) % 8 == 0
    assert batch_for_memory(5 << 20, 1 << 20) == 3  # under 8: as many as fit
    assert batch_for_memory(1 << 20, 1 << 30) == 1  # never less than one clip
    with pytest.raises(ValueError):
        batch_for_memory(GIB, 0)


def test_a_batch_is_tiled_down_to_a_multiple_of_8_and_never_under_one_clip():
    assert [tile_batch(n) for n in (0, 1, 7, 8, 15, 16, 16390)] == [1, 1, 7, 8, 8, 16, 16384]


@pytest.mark.parametrize("precision, graph, message", [
    ("bf16", False, "--precision bf16 runs on a CUDA device only"),
    ("fp32", True, "--cuda-graph needs a CUDA device"),
    ("fp16", False, "--precision must be one of fp32, bf16"),
])
def test_what_the_cpu_cannot_run_is_refused_in_one_line(precision, graph, message):
    with pytest.raises(DtmrError, match=message) as refused:
        check_precision(precision, torch.device("cpu"), graph)
    assert "\n" not in str(refused.value)
    with pytest.raises(DtmrError, match=message):
        Anonymizer(_model(), device="cpu", precision=precision, cuda_graph=graph)


def test_only_a_model_with_a_cached_decoder_is_captured():
    check_graphable(_model())
    with pytest.raises(DtmrError, match="no cached decoder"):
        check_graphable(NaiveRetargeter("ntu25"))


def test_on_the_cpu_a_batch_runs_as_the_model_always_ran():
    model = _model()
    runner = ModelRunner(model, torch.device("cpu"))
    src, ref = _clips(3)
    with torch.inference_mode():
        expected = model.retarget(torch.from_numpy(src), torch.from_numpy(ref)).numpy()
    assert runner.submit(src, ref).result().tobytes() == expected.tobytes()
    assert runner.auto_batch(64) == 32 and runner.auto_batch(8) == 8


def _eager(model, src: np.ndarray, ref: np.ndarray) -> np.ndarray:
    with torch.inference_mode():
        return model.retarget(torch.from_numpy(src).cuda(), torch.from_numpy(ref).cuda()).float().cpu().numpy()


@cuda
@pytest.mark.parametrize("config", [{}, {"output_head": "kinematic"}], ids=["joint-head", "kinematic-head"])
def test_the_graph_replays_the_eager_decode_on_new_inputs_and_smaller_batches(config):
    model = _model(**config).cuda()
    graph = GraphedRetarget(model, batch=8)
    for batch, seed in ((8, 0), (5, 1), (8, 2)):
        src, ref = _clips(batch, seed)
        with torch.inference_mode():
            replayed = graph(torch.from_numpy(src).cuda(), torch.from_numpy(ref).cuda()).float().cpu().numpy()
        np.testing.assert_allclose(replayed, _eager(model, src, ref), atol=1e-4)


@cuda
@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
def test_pinned_overlapped_batches_come_back_in_order(graph):
    model = _model().cuda()
    runner = ModelRunner(model, torch.device("cuda"), cuda_graph=graph)
    batches = [_clips(6, seed) for seed in range(3)]
    pending = [runner.submit(src, ref) for src, ref in batches]  # three in flight: the first is collected early
    for (src, ref), result in zip(batches, pending):
        np.testing.assert_allclose(result.result(), _eager(model, src, ref), atol=1e-4)


@cuda
def test_bf16_autocast_and_the_batch_from_free_memory():
    model = _model().cuda()
    runner = ModelRunner(model, torch.device("cuda"), precision="bf16", cuda_graph=True)
    src, ref = _clips(4)
    out = runner.submit(src, ref).result()
    assert out.shape == (4, 64, 25, 3) and out.dtype == np.float32 and np.isfinite(out).all()
    assert 1 <= runner.auto_batch(4096) <= 4096


@cuda
def test_an_anonymizer_on_cuda_with_a_graph_releases_what_the_eager_one_does():
    from dtmr.data.clip import Clip

    clips = [Clip(joints=_clips(1, seed)[0][0] + 1.0, sample_name=f"c{seed}", subject=seed) for seed in range(5)]
    eager = Anonymizer(_model(), device="cuda").anonymize_batch(clips, clips[::-1], batch_size=4)
    graphed = Anonymizer(_model(), device="cuda", cuda_graph=True).anonymize_batch(clips, clips[::-1], batch_size=4)
    for a, b in zip(eager, graphed):
        np.testing.assert_allclose(a.joints, b.joints, atol=1e-4)
