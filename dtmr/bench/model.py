"""`dtmr bench model`: DisentangledTMR inference speed, in one run so the ratios are comparable.

Measures: one 64-frame clip end to end (encoders + decoder) with and without the key/value cache (and with
the cache on all cores); throughput at batch 1, 8 and 32 (cached); the same throughput for PMR; the
decoder's achieved GFLOP/s at batch 32 (matmul FLOPs counted analytically) as a fraction of the matmul
peak; and A/B tables timed interleaved in this process: the cached decoder step as shipped
(`prepare_for_inference`) against the plain step of the paper's modules and against the shipped step with
one change undone, the MixFormer branch likewise, and end to end (clips at each batch, and one clip with and
without the cache) the plain model against the shipped. Every variant is a prepared copy of one model (or
a StepGeneration subclass on its decoder): nothing is patched.

So that a figure taken on another machine can be read, the run reports the machine's float32 GEMM peak at
one thread and at the run's threads, the load average at the start and the core count, and beside each
timing the share of its time spent outside matrix products (one extra run under torch.profiler: the self
time of the GEMM-type kernels, oneDNN's linear, the convolutions and the fused attention kernel included,
over the run's wall time; the profiler's own per-call overhead counts as outside, so the share is slightly
overstated).
Every timing is the best of `--repeats` runs after one warm-up run. docs/model.md keeps measured figures
with the command.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import inspect
import json
import os
import time
from collections.abc import Callable, Iterator

from ..argtypes import positive_int

BATCHES = (1, 8, 32)
MATMUL_SIZE = 2048
#: NTU60 label counts, only to size PMR's training heads (retarget does not use them)
_PMR_HEADS = {"num_subjects": 40, "num_actions": 49}
#: profiler event names counted as matrix products (self time) in the "outside matmuls" share
MATMUL_KERNELS = frozenset({
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::mv", "aten::addmv", "aten::dot",
    "aten::mkldnn_convolution", "aten::_slow_conv2d_forward", "mkldnn::_linear_pointwise",
    "aten::_scaled_dot_product_flash_attention_for_cpu",
})


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "model", help="model inference: KV cache vs recomputation, clips/s at batch 1/8/32, PMR, decoder efficiency, "
                      "A/B of the decoder step and the encoder",
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


def best_seconds_interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best wall-clock time of each of `fns` over `repeats` rounds that call each once (after one warm-up
    round), so that a drift of the machine's speed touches every variant alike."""
    best = dict.fromkeys(fns, float("inf"))
    for round_ in range(repeats + 1):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            if round_:
                best[name] = min(best[name], time.perf_counter() - start)
    return best


def outside_matmul_share(fn: Callable[[], object]) -> float:
    """Share of one call's wall time not spent in matrix-product kernels (MATMUL_KERNELS), from torch.profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        fn()
        wall = time.perf_counter() - start
    inside = sum(event.self_cpu_time_total for event in prof.key_averages() if event.key in MATMUL_KERNELS) / 1e6
    return max(0.0, 1.0 - inside / wall)


def matmul_peak_gflops(size: int = MATMUL_SIZE, repeats: int = 5) -> float:
    import torch

    a = torch.randn(size, size)
    b = torch.randn(size, size)
    return 2 * size**3 / best_seconds(lambda: torch.mm(a, b), repeats) / 1e9


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


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


# ---------------------------------------------------------------- decoder A/B: the plain step and the undone changes

def _sdpa_attention_step(layer, x, memory, cache, position):
    """StepLayer.step with scaled_dot_product_attention in place of bmm + softmax + bmm (scale already folded)."""
    import torch
    import torch.nn.functional as F

    b, d = x.shape
    heads, dh = layer.heads, d // layer.heads
    qkv = layer.qkv(F.layer_norm(x, (d,), *layer.self_norm, layer.eps))
    cache[:, :, :, position] = qkv[:, d:].view(b, 2, heads, dh).transpose(0, 1)
    attended = F.scaled_dot_product_attention(qkv[:, :d].view(b, heads, 1, dh), cache[0, :, :, : position + 1],
                                              cache[1, :, :, : position + 1], scale=1.0).view(b, d)
    x = layer.self_out(attended, residual=x)
    q = layer.action_query(F.layer_norm(x, (d,), *layer.cross_norm, layer.eps))
    keys, values = memory.keys.transpose(1, 2).view(b, heads, -1, dh), memory.values.view(b, heads, -1, dh)
    attended = F.scaled_dot_product_attention(q.view(b, heads, 1, dh), keys, values, scale=1.0).view(b, d)
    action_gate = layer.action_out_gate(attended, residual=memory.output_bias)
    x = x + torch.lerp(memory.identity, action_gate[:, :d], torch.sigmoid(action_gate[:, d:]))
    return layer.ffn_out(layer.ffn_in(F.layer_norm(x, (d,), *layer.ffn_norm, layer.eps), gelu=True), residual=x)


def _two_product_step(layer, x, memory, cache, position):
    """StepLayer.step with the action output and the gate as two dependent products: `action_out_gate` is
    the pair (W_o with b_o, W_a without bias) and `gate_out_bias` is zero (see `_two_product_layers`)."""
    import torch
    import torch.nn.functional as F

    b, d = x.shape
    heads, dh = layer.heads, d // layer.heads
    qkv = layer.qkv(F.layer_norm(x, (d,), *layer.self_norm, layer.eps))
    cache[:, :, :, position] = qkv[:, d:].view(b, 2, heads, dh).transpose(0, 1)
    keys, values = cache[:, :, :, : position + 1].flatten(1, 2)
    scores = torch.bmm(qkv[:, :d].reshape(b * heads, 1, dh), keys.transpose(1, 2))
    x = layer.self_out(torch.bmm(torch.softmax(scores, dim=-1), values).view(b, d), residual=x)
    q = layer.action_query(F.layer_norm(x, (d,), *layer.cross_norm, layer.eps))
    scores = torch.bmm(q.view(b * heads, 1, dh), memory.keys)
    attended = torch.bmm(torch.softmax(scores, dim=-1), memory.values).view(b, d)
    action_out, gate_action = layer.action_out_gate
    action = action_out(attended)
    gate = torch.sigmoid(gate_action(action, residual=memory.output_bias[:, d:]))
    x = x + torch.lerp(memory.identity, action, gate)
    return layer.ffn_out(layer.ffn_in(F.layer_norm(x, (d,), *layer.ffn_norm, layer.eps), gelu=True), residual=x)


def _step_generations() -> dict[str, type]:
    """The shipped step generation with one change undone, each a StepGeneration subclass (imports torch)."""
    import torch

    from ..models.serving.step_decoder import StepGeneration, StepLinear

    class SdpaAttention(StepGeneration):
        def step(self, layer, x, memory, cache, position):
            return _sdpa_attention_step(layer, x, memory, cache, position)

    class TwoProducts(StepGeneration):
        def layers(self, packed=False):
            return [step._replace(action_out_gate=(StepLinear.of(layer.action_out.weight, layer.action_out.bias,
                                                                 packed),
                                                   StepLinear.of(layer.gate_action.weight, None, packed)),
                                  gate_out_bias=torch.zeros_like(step.gate_out_bias))
                    for step, layer in zip(super().layers(packed), self.decoder.layers)]

        def step(self, layer, x, memory, cache, position):
            return _two_product_step(layer, x, memory, cache, position)

    class AddmmProducts(StepGeneration):
        def layers(self, packed=False):
            return super().layers(packed=False)

    class ParameterLayout(StepGeneration):
        """The addmm step layers with every matrix a transposed view of an (out, in) copy, as the parameters
        are laid out."""

        def layers(self, packed=False):
            def untransposed(linear):
                return linear._replace(weight=linear.weight.t().contiguous().t())

            return [step._replace(qkv=untransposed(step.qkv), self_out=untransposed(step.self_out),
                                  action_query=untransposed(step.action_query),
                                  action_out_gate=untransposed(step.action_out_gate),
                                  ffn_in=untransposed(step.ffn_in), ffn_out=untransposed(step.ffn_out))
                    for step in super().layers(packed=False)]

    return {"sdpa": SdpaAttention, "two products": TwoProducts, "addmm": AddmmProducts, "layout": ParameterLayout}


def decoder_variants(decoder, batch: int, like) -> dict[str, Callable]:
    """name -> generate(action_memory, identity) for `batch` sequences of tensors `like` (dtype, device): the
    plain cached generation (the paper's modules), the shipped one (`prepare_for_inference`), and the shipped
    one with one change undone (a StepGeneration subclass on the same decoder)."""
    from ..models.serving.prepare import prepare_for_inference
    from ..models.serving.step_decoder import PACKED_MIN_BATCH, StepGeneration, onednn_linear_usable

    plain = prepare_for_inference(copy.deepcopy(decoder), step_layers=False)
    generations = _step_generations()
    packed = batch >= PACKED_MIN_BATCH and onednn_linear_usable(like)
    variants = {
        "plain step (the paper's modules)": plain.generate_cached,
        "shipped step": StepGeneration(decoder),
        "shipped, attention by scaled_dot_product_attention": generations["sdpa"](decoder),
        "shipped, action output and gate as two products": generations["two products"](decoder),
    }
    if packed:
        variants["shipped, products by addmm, not oneDNN's packed linear"] = generations["addmm"](decoder)
    else:
        variants["shipped, addmm on the parameters' (out, in) layout"] = generations["layout"](decoder)
    return variants


# ---------------------------------------------------------------------- encoder and end-to-end A/B

def encoder_variants(paper) -> dict[str, Callable]:
    """name -> encode_action(src): the action encoder of `paper` (a model as built, not prepared) as the paper's
    modules compute it, as shipped (`prepare_for_inference`), and shipped with one MixFormer path left out
    (each a prepared copy)."""
    from ..models.serving.prepare import prepare_for_inference

    def prepared(**options):
        return prepare_for_inference(copy.deepcopy(paper), **options).encode_action

    return {
        "plain (one pass, BatchNorm separate, MaxPool2d)": paper.encode_action,
        "shipped (clips in chunks, BatchNorm folded, shifted max)": prepared(),
        "shipped, one pass over the batch": prepared(batch_chunk=None),
        "shipped, BatchNorm separate": prepared(fold_batchnorm=False),
        "shipped, MaxPool2d": prepared(shifted_max=False),
    }


def end_to_end_variants(paper, src, ref, recomputation: bool = False) -> dict[str, Callable[[], object]]:
    """name -> retarget(src, ref) with the paper's modules (`paper`, not prepared) and shipped (a prepared copy),
    and, with `recomputation`, the same without the key/value cache."""
    from ..models.serving.prepare import prepare_for_inference

    shipped = prepare_for_inference(copy.deepcopy(paper))
    variants = {"plain": lambda: paper.retarget(src, ref), "shipped": lambda: shipped.retarget(src, ref)}
    if recomputation:
        variants["plain, recomputation"] = lambda: paper.retarget(src, ref, use_cache=False)
        variants["shipped, recomputation"] = lambda: shipped.retarget(src, ref, use_cache=False)
    return variants


def _ab_table(variants: dict[str, Callable[[], object]], repeats: int) -> dict[str, dict]:
    """{name: {ms, speedup (first variant's time / this one's), outside_matmul_share}}."""
    seconds = best_seconds_interleaved(variants, repeats)
    reference = next(iter(seconds.values()))
    return {name: {"ms": 1e3 * s, "speedup": reference / s,
                   "outside_matmul_share": outside_matmul_share(variants[name])}
            for name, s in seconds.items()}


# ---------------------------------------------------------------------- the run

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
                        matmul_size: int = MATMUL_SIZE, ab: bool = False) -> dict:
    """The figures of the module docstring; `ab`: with the A/B tables (`dtmr bench model` runs them)."""
    load = list(os.getloadavg())
    import torch

    from ..models import DisentangledTMR, DTMRConfig, prepare_for_inference

    if threads is not None:
        torch.set_num_threads(threads)
    config = DTMRConfig.preset(preset, topology)
    torch.manual_seed(0)
    paper = DisentangledTMR(config).eval()
    model = prepare_for_inference(copy.deepcopy(paper))
    shape = (config.frames, config.num_joints, 3)
    generator = torch.Generator().manual_seed(0)
    clips = {b: tuple(0.3 * torch.randn((b, *shape), generator=generator) for _ in range(2))
             for b in sorted({1, *batches})}
    out: dict = {"preset": preset, "topology": config.topology, "threads": torch.get_num_threads(),
                 "repeats": repeats, "batches": list(batches), "load_average_at_start": load,
                 "cpu_count": os.cpu_count()}

    def timed(key: str, fn: Callable[[], object], runs: int = repeats) -> float:
        seconds = best_seconds(fn, runs)
        out[f"outside_matmul_share_{key}"] = outside_matmul_share(fn)
        return seconds

    with torch.inference_mode():
        out["matmul_peak_gflops"] = matmul_peak_gflops(matmul_size, max(repeats, 3))
        if out["threads"] == 1:
            out["matmul_peak_gflops_one_thread"] = out["matmul_peak_gflops"]
        else:
            with torch_threads(1):
                out["matmul_peak_gflops_one_thread"] = matmul_peak_gflops(matmul_size, max(repeats, 3))
        src, ref = clips[1]
        cached = timed("clip_cached", lambda: model.retarget(src, ref))
        uncached = timed("clip_uncached", lambda: model.retarget(src, ref, use_cache=False), max(1, min(repeats, 2)))
        out["clip_ms_cached"] = 1e3 * cached
        out["clip_ms_uncached"] = 1e3 * uncached
        out["kv_speedup_batch1"] = uncached / cached
        if (os.cpu_count() or 1) > out["threads"]:
            with torch_threads(os.cpu_count()):
                out["clip_ms_cached_all_cores"] = 1e3 * best_seconds(lambda: model.retarget(src, ref), repeats)

        for b in batches:
            src, ref = clips[b]
            out[f"clips_per_s_batch{b}"] = b / timed(f"batch{b}", lambda src=src, ref=ref: model.retarget(src, ref))

        pmr, why = _pmr_model(config.topology)
        out["pmr_note"] = why
        for b in batches:
            key = f"pmr_clips_per_s_batch{b}"
            if pmr is None:
                out[key] = None
                continue
            src, ref = clips[b]
            out[key] = b / best_seconds(lambda src=src, ref=ref: pmr.retarget(src, ref), repeats)
        largest = max(batches)
        if out[f"pmr_clips_per_s_batch{largest}"]:
            out[f"dtmr_over_pmr_batch{largest}"] = (out[f"clips_per_s_batch{largest}"]
                                                    / out[f"pmr_clips_per_s_batch{largest}"])

        src, ref = clips[largest]
        memory, identity = model.encode_action(src), model.encode_identity(ref)
        seconds = timed(f"decoder_batch{largest}", lambda: model.decoder.generate_cached(memory, identity))
        flops = decoder_generation_flops(config, config.num_joints, largest)
        out[f"decoder_gflops_batch{largest}"] = flops / seconds / 1e9
        out[f"decoder_peak_fraction_batch{largest}"] = out[f"decoder_gflops_batch{largest}"] / out["matmul_peak_gflops"]
        out[f"decoder_share_of_clip_time_batch{largest}"] = seconds * out[f"clips_per_s_batch{largest}"] / largest

        if not ab:
            return out
        out["decoder_variants"], out["encoder_variants"] = {}, {}
        for b in sorted({1, largest}):
            src, ref = clips[b]
            memory, identity = model.encode_action(src), model.encode_identity(ref)
            variants = decoder_variants(model.decoder, b, memory)
            out["decoder_variants"][f"batch{b}"] = _ab_table(
                {name: (lambda g=g, m=memory, i=identity: g(m, i)) for name, g in variants.items()}, repeats)
        src = clips[largest][0]
        out["encoder_variants"][f"batch{largest}"] = _ab_table(
            {name: (lambda e=e: e(src)) for name, e in encoder_variants(paper).items()}, repeats)
        out["end_to_end_variants"] = {f"batch{b}": _ab_table(end_to_end_variants(paper, *clips[b], b == 1), repeats)
                                      for b in sorted(clips)}
        one = out["end_to_end_variants"]["batch1"]
        for name in ("plain", "shipped"):
            out[f"kv_speedup_batch1_{name}"] = one[f"{name}, recomputation"]["ms"] / one[name]["ms"]
    return out


def run(args: argparse.Namespace) -> int:
    from ..errors import DtmrError

    try:
        result = run_model_benchmark(args.preset, args.topology, args.threads, args.repeats, ab=True)
    except KeyError as exc:
        raise DtmrError(exc.args[0]) from None
    if args.json:
        print(json.dumps(result))
        return 0
    load = " ".join(f"{v:.2f}" for v in result["load_average_at_start"])
    print(f"DisentangledTMR {result['preset']} / {result['topology']}, {result['threads']} threads, "
          f"best of {result['repeats']}; load average at start {load} on {result['cpu_count']} cores")
    print(f"float32 GEMM peak {result['matmul_peak_gflops_one_thread']:.1f} GFLOP/s at one thread, "
          f"{result['matmul_peak_gflops']:.1f} at {result['threads']}; last column: share of the time outside "
          "matrix products")

    def row(label: str, text: str, share_key: str | None = None) -> None:
        share = result.get(f"outside_matmul_share_{share_key}") if share_key else None
        print(f"{label:<28}{text:<44}{'' if share is None else f'{100 * share:5.0f}%'}")

    row("one clip, KV cache", f"{result['clip_ms_cached']:10.1f} ms", "clip_cached")
    row("one clip, recomputation", f"{result['clip_ms_uncached']:10.1f} ms   (cache "
        f"{result['kv_speedup_batch1']:.2f}x faster)", "clip_uncached")
    if "clip_ms_cached_all_cores" in result:
        row(f"one clip, cache, {result['cpu_count']} threads", f"{result['clip_ms_cached_all_cores']:10.1f} ms")
    for b in result["batches"]:
        pmr = result[f"pmr_clips_per_s_batch{b}"]
        row(f"batch {b:<3} DisentangledTMR", f"{result[f'clips_per_s_batch{b}']:10.1f} clips/s"
            + (f"  PMR {pmr:8.1f}" if pmr else ""), f"batch{b}")
    if result["pmr_note"]:
        print(f"PMR: {result['pmr_note']}")
    largest = max(result["batches"])
    row(f"decoder at batch {largest}", f"{result[f'decoder_gflops_batch{largest}']:10.1f} GFLOP/s = "
        f"{100 * result[f'decoder_peak_fraction_batch{largest}']:.0f}% of peak "
        f"({100 * result[f'decoder_share_of_clip_time_batch{largest}']:.0f}% of clip)", f"decoder_batch{largest}")
    for title, tables in (("decoder, cached generation", result.get("decoder_variants", {})),
                          ("action encoder", result.get("encoder_variants", {})),
                          ("end to end (retarget)", result.get("end_to_end_variants", {}))):
        for batch, table in tables.items():
            print(f"A/B {title}, {batch} (interleaved; speed-up over the first row):")
            for name, figures in table.items():
                print(f"  {name:<56}{figures['ms']:10.1f} ms {figures['speedup']:6.2f}x "
                      f"{100 * figures['outside_matmul_share']:5.0f}%")
    if "kv_speedup_batch1_plain" in result:
        print(f"KV-cache speed-up at batch 1 in the A/B: plain {result['kv_speedup_batch1_plain']:.2f}x, "
              f"shipped {result['kv_speedup_batch1_shipped']:.2f}x")
    return 0
