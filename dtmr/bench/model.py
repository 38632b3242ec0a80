"""`dtmr bench model`: DisentangledTMR inference speed, in one run so the ratios are comparable.

Measures: the machine's float32 matmul peak (large GEMM, best of several); one 64-frame clip end to
end (encoders + decoder) with and without the key/value cache; throughput at batch 1, 8 and 32
(cached); the same throughput for PMR; and the decoder's achieved GFLOP/s at batch 32 (matmul FLOPs
counted analytically) as a fraction of the matmul peak. Every timing is the best of `--repeats` runs
after one warm-up run. docs/model.md keeps measured figures with the command.
"""

from __future__ import annotations

import argparse
import inspect
import json
import time
from collections.abc import Callable

from ..cli.arguments import positive_int

BATCHES = (1, 8, 32)
MATMUL_SIZE = 2048
#: NTU60 label counts, only to size PMR's training heads (retarget does not use them)
_PMR_HEADS = {"num_subjects": 40, "num_actions": 49}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "model", help="model inference: KV cache vs recomputation, clips/s at batch 1/8/32, PMR, decoder efficiency",
    )
    parser.add_argument("--preset", default="paper", choices=("paper", "small"))
    parser.add_argument("--topology", default="ntu25")
    parser.add_argument("--threads", type=positive_int, default=None, metavar="N",
                        help="torch intra-op threads (default: torch's choice)")
    parser.add_argument("--repeats", type=positive_int, default=3, metavar="N",
                        help="timed runs per figure (best kept)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.set_defaults(func=run)



def best_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Best wall-clock time of `repeats` calls after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def matmul_peak_gflops(size: int = MATMUL_SIZE, repeats: int = 5) -> float:
    import torch

    a = torch.randn(size, size)
    b = torch.randn(size, size)
    return 2 * size**3 / best_seconds(lambda: torch.mm(a, b), repeats) / 1e9


def decoder_generation_flops(config, num_joints: int, batch: int) -> int:
    """Matmul FLOPs (2 per multiply-add) of one cached autoregressive generation of `batch` sequences.

    Per token and layer: fused QKV (3d^2), self output, action query, action output and action gate
    (d^2 each), FFN (2 d f); attention scores and weighted sums over the t+1 cached positions and the
    T_mem memory positions. Per sequence and layer: memory keys/values (2 d from action_dim over T_mem),
    identity value, identity output and identity gate. Output projection of T tokens, frame embedding of
    the T - 1 fed back.
    """
    d, f, t, layers = config.decoder_dim, config.decoder_ffn, config.frames, config.decoder_layers
    memory = config.frames
    per_token_layer = 7 * d * d + 2 * d * f + 2 * d * memory
    self_attention = 2 * d * t * (t + 1) // 2  # scores + weighted sum over 1..T positions
    per_sequence_layer = 2 * d * config.action_dim * memory + d * config.identity_dim + 2 * d * d
    input_output = (2 * t - 1) * 3 * num_joints * d
    macs = layers * (t * per_token_layer + self_attention + per_sequence_layer) + input_output
    return 2 * batch * macs


def _pmr_model(topology: str):
    """PMR for `topology`, or (None, reason) when the baselines are not importable."""
    try:
        from ..models.baselines.pmr import PMR
    except ImportError as exc:
        return None, f"PMR not importable: {exc}"
    parameters = inspect.signature(PMR).parameters
    kwargs = {k: v for k, v in _PMR_HEADS.items() if k in parameters}
    return PMR(topology=topology, **kwargs).eval(), None


def run_model_benchmark(preset: str = "paper", topology: str = "ntu25", threads: int | None = None,
                        repeats: int = 3, batches: tuple[int, ...] = BATCHES,
                        matmul_size: int = MATMUL_SIZE) -> dict:
    import torch

    from ..models import DisentangledTMR, DTMRConfig

    if threads is not None:
        torch.set_num_threads(threads)
    config = DTMRConfig.preset(preset, topology)
    torch.manual_seed(0)
    model = DisentangledTMR(config).eval()
    shape = (config.frames, config.num_joints, 3)
    generator = torch.Generator().manual_seed(0)
    clips = {b: tuple(0.3 * torch.randn((b, *shape), generator=generator) for _ in range(2))
             for b in sorted({1, *batches})}
    out: dict = {"preset": preset, "topology": config.topology, "threads": torch.get_num_threads(),
                 "repeats": repeats}

    with torch.inference_mode():
        out["matmul_peak_gflops"] = matmul_peak_gflops(matmul_size, max(repeats, 3))
        src, ref = clips[1]
        cached = best_seconds(lambda: model.retarget(src, ref), repeats)
        uncached = best_seconds(lambda: model.retarget(src, ref, use_cache=False), max(1, min(repeats, 2)))
        out["clip_ms_cached"] = 1e3 * cached
        out["clip_ms_uncached"] = 1e3 * uncached
        out["kv_speedup_batch1"] = uncached / cached

        for b in batches:
            src, ref = clips[b]
            out[f"clips_per_s_batch{b}"] = b / best_seconds(lambda: model.retarget(src, ref), repeats)

        pmr, why = _pmr_model(config.topology)
        out["pmr_note"] = why
        for b in batches:
            key = f"pmr_clips_per_s_batch{b}"
            if pmr is None:
                out[key] = None
                continue
            src, ref = clips[b]
            out[key] = b / best_seconds(lambda: pmr.retarget(src, ref), repeats)
        largest = max(batches)
        if out[f"pmr_clips_per_s_batch{largest}"]:
            out[f"dtmr_over_pmr_batch{largest}"] = (out[f"clips_per_s_batch{largest}"]
                                                    / out[f"pmr_clips_per_s_batch{largest}"])

        src, ref = clips[largest]
        memory, identity = model.encode_action(src), model.encode_identity(ref)
        seconds = best_seconds(lambda: model.decoder.generate_cached(memory, identity), repeats)
        flops = decoder_generation_flops(config, config.num_joints, largest)
        out[f"decoder_gflops_batch{largest}"] = flops / seconds / 1e9
        out[f"decoder_peak_fraction_batch{largest}"] = out[f"decoder_gflops_batch{largest}"] / out["matmul_peak_gflops"]
        out[f"decoder_share_of_clip_time_batch{largest}"] = seconds * out[f"clips_per_s_batch{largest}"] / largest
    return out


def run(args: argparse.Namespace) -> int:
    from ..errors import DtmrError

    try:
        result = run_model_benchmark(args.preset, args.topology, args.threads, args.repeats)
    except KeyError as exc:
        raise DtmrError(exc.args[0]) from None
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"DisentangledTMR {result['preset']} / {result['topology']}, {result['threads']} threads, "
          f"best of {result['repeats']}")
    print(f"matmul peak                 {result['matmul_peak_gflops']:10.1f} GFLOP/s")
    print(f"one clip, KV cache          {result['clip_ms_cached']:10.1f} ms")
    print(f"one clip, recomputation     {result['clip_ms_uncached']:10.1f} ms   "
          f"(cache {result['kv_speedup_batch1']:.1f}x faster)")
    for b in BATCHES:
        key = f"clips_per_s_batch{b}"
        if key in result:
            pmr = result.get(f"pmr_clips_per_s_batch{b}")
            pmr_text = f"   PMR {pmr:10.1f} clips/s" if pmr else ""
            print(f"batch {b:<3} DisentangledTMR   {result[key]:10.1f} clips/s{pmr_text}")
    if result["pmr_note"]:
        print(f"PMR: {result['pmr_note']}")
    largest = max(b for b in BATCHES if f"clips_per_s_batch{b}" in result)
    print(f"decoder at batch {largest}         {result[f'decoder_gflops_batch{largest}']:10.1f} GFLOP/s "
          f"= {100 * result[f'decoder_peak_fraction_batch{largest}']:.0f}% of the matmul peak "
          f"({100 * result[f'decoder_share_of_clip_time_batch{largest}']:.0f}% of the clip time)")
    return 0
