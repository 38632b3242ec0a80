"""The factorized decoder D: (action memory, identity) -> (B, 64, J, 3), autoregressive.

Tokens: position 0 is a learned start token, position t > 0 embeds the previous frame,
Linear(J*3 -> d)(frame_{t-1}); learned positions are added to both. Output t is predicted from
tokens 0..t only. Each of the 6 layers (d = 320, pre-norm residual sublayers):

    x = x + SelfAttention(LN(x))                          causal, fused QKV projection
    h = LN(x)
    a = CrossAttention(h, action memory (B, 64, 768))     keys/values projected from 768
    i = W_o W_v identity                                  cross-attention to the single identity token:
                                                          its softmax weight is exactly 1, so the output
                                                          is the projected value, constant over time
    g = sigmoid(W_a a + W_i i + b)                        (B, T, d): elementwise over time x channels
    x = x + g * a + (1 - g) * i
    x = x + FFN(LN(x))                                    d -> 2048 -> d, GELU
    output = Linear(d -> J*3)(LN(x))                      the joint head (the paper), or
    output = FK(Linear(d -> 3 + 3(J-1))(LN(x)), L_ref)     the kinematic head: root + bone directions placed on
                                                          the reference's bone lengths (kinematic_head.py)

Because the identity query/key projections cannot change the output, they do not exist.

Decoding modes:
* teacher-forced (parallel): all tokens in one pass from given input frames, causal mask;
* cached generation (inference): one token per step; every layer keeps a preallocated key/value cache
  of its self-attention, the action-memory keys/values and the identity terms (i and W_i i) are
  computed once per sequence. A step is memory- and call-bound (at batch 1 it streams every weight
  once for a matrix-vector product), so it runs on StepLayers: the parameters rearranged once (kept
  until a parameter changes, never stored): matrices transposed for the product or packed for
  oneDNN's linear (float32 CPU, batch > 1; bias and GELU fused), the attention scale folded into the
  query projections, the action output and its gate term as one product; a 1-query attention as
  bmm + softmax + bmm;
* uncached generation: the parallel pass re-run on the growing prefix at every step (memory
  projections included), which is what the cache saves; kept for tests and `dtmr bench model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from ..skeleton import Topology
from .autocast_safe import lerp
from .config import DTMRConfig
from .kinematic_head import KinematicHead


@dataclass
class LayerMemory:
    """What one layer needs from the encoders, computed once per sequence."""

    keys: torch.Tensor  # (B, H, T_mem, d/H) action-memory keys
    values: torch.Tensor  # (B, H, T_mem, d/H)
    identity: torch.Tensor  # (B, 1, d) the identity cross-attention output
    gate_bias: torch.Tensor  # (B, 1, d) W_i i + b, the gate's identity term and bias


class StepMemory(NamedTuple):
    """A layer's LayerMemory laid out for the cached step (views, and one (B, 2d) bias)."""

    keys: torch.Tensor  # (B*H, d/H, T_mem) action-memory keys, transposed for q k^T
    values: torch.Tensor  # (B*H, T_mem, d/H)
    identity: torch.Tensor  # (B, d)
    output_bias: torch.Tensor  # (B, 2d) [b_o, W_a b_o + W_i i + b]: the action output's and the gate's


#: batch from which the cached step uses oneDNN's packed linear where usable (at batch 1, a matrix-vector
#: product, addmm streams the weights faster)
PACKED_MIN_BATCH = 2
#: weights (in * out) from which a product is packed: oneDNN's linear has a higher fixed cost per call than
#: addmm and is faster only on the larger products (of the paper decoder: QKV, action output + gate, FFN)
PACKED_MIN_WEIGHTS = 2**17


def onednn_linear_usable(like: torch.Tensor) -> bool:
    """Whether StepLinear can use oneDNN's packed linear for tensors like `like`: float32 on the CPU, with
    oneDNN built in and enabled (torch.backends.mkldnn), and torch's (private, inductor's) ops for it present."""
    return (like.device.type == "cpu" and like.dtype == torch.float32 and torch.backends.mkldnn.is_available()
            and torch.backends.mkldnn.enabled and hasattr(torch.ops.mkldnn, "_linear_pointwise")
            and hasattr(torch.ops.mkldnn, "_reorder_linear_weight"))


class StepLinear(NamedTuple):
    """x (B, in) -> x W^T + b, then GELU or + a residual, as one kernel where it can.

    Packed: oneDNN's linear on a weight reordered for it once, with the bias and the GELU fused into the
    product (float32 on the CPU; for a few-row product it runs closer to the GEMM peak than addmm, whose
    packing of W is redone at every call; oneDNN's fused residual add is not used: it measured far slower).
    Otherwise addmm against a contiguous (in, out) copy, which a few-row product streams faster than the
    (out, in) parameter. The residual is added after, out of place, as `x + sublayer(x)` does (under
    autocast the residual stream keeps its dtype).
    """

    weight: torch.Tensor  # oneDNN-packed from (out, in), or (in, out) contiguous
    bias: torch.Tensor | None  # (out,)
    packed: bool

    @classmethod
    def of(cls, weight: torch.Tensor, bias: torch.Tensor | None, packed: bool) -> StepLinear:
        """weight (out, in) as nn.Linear holds it; `packed`: oneDNN's linear if the weight has at least
        PACKED_MIN_WEIGHTS entries."""
        if packed and weight.numel() >= PACKED_MIN_WEIGHTS:
            return cls(torch.ops.mkldnn._reorder_linear_weight(weight.contiguous(), None), bias, True)
        return cls(weight.t().contiguous(), bias, False)

    def __call__(self, x: torch.Tensor, *, gelu: bool = False, residual: torch.Tensor | None = None) -> torch.Tensor:
        if self.packed:
            y = torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, *(
                ("gelu", [], "none") if gelu else ("none", [], "")))
        else:
            y = torch.mm(x, self.weight) if self.bias is None else torch.addmm(self.bias, x, self.weight)
            if gelu:
                y = F.gelu(y)
        return y if residual is None else residual + y


class StepLayer(NamedTuple):
    """One decoder layer as the cached step computes it: its parameters rearranged, never stored.

    Each product is a StepLinear; the attention scale 1/sqrt(d/H) is folded into both query projections;
    and the action output is fused with the gate's action term, W_a a = W_a W_o z + W_a b_o, so that
    [a, W_a a] is one product with [W_o; W_a W_o] (its biases go to the per-sequence StepMemory.output_bias)
    instead of two dependent ones. Exact in real arithmetic; the rounding differs from the parallel pass.
    """

    heads: int
    eps: float
    self_norm: tuple[torch.Tensor, torch.Tensor]  # LayerNorm weight, bias (d,)
    qkv: StepLinear  # d -> 3d  [W_q / sqrt(d/H); W_k; W_v]
    self_out: StepLinear  # d -> d
    cross_norm: tuple[torch.Tensor, torch.Tensor]
    action_query: StepLinear  # d -> d  W_q / sqrt(d/H)
    action_out_gate: StepLinear  # d -> 2d  [W_o; W_a W_o], no bias
    action_out_bias: torch.Tensor  # (d,) b_o
    gate_out_bias: torch.Tensor  # (d,) W_a b_o
    ffn_norm: tuple[torch.Tensor, torch.Tensor]
    ffn_in: StepLinear  # d -> f
    ffn_out: StepLinear  # f -> d

    def memory(self, memory: LayerMemory) -> StepMemory:
        """This layer's LayerMemory as the step reads it (once per sequence)."""
        b, heads, t, dh = memory.keys.shape
        output_bias = torch.cat([self.action_out_bias.expand(b, -1), memory.gate_bias[:, 0] + self.gate_out_bias], 1)
        return StepMemory(memory.keys.view(b * heads, t, dh).transpose(1, 2), memory.values.view(b * heads, t, dh),
                          memory.identity[:, 0], output_bias)

    def step(self, x: torch.Tensor, memory: StepMemory, cache: torch.Tensor, position: int) -> torch.Tensor:
        """One cached inference step: x (B, d) is the token at `position` -> (B, d).

        `cache` (2, B, H, T, d/H) holds the keys/values of positions < `position`; this token's are
        written at `position` and it attends to 0..position. The arithmetic of `DecoderLayer.forward`
        (no dropout) on 2-D activations; a 1-query attention is two batched products and a softmax.
        """
        b, d = x.shape
        heads, dh = self.heads, d // self.heads
        qkv = self.qkv(F.layer_norm(x, (d,), *self.self_norm, self.eps))  # (B, 3d)
        cache[:, :, :, position] = qkv[:, d:].view(b, 2, heads, dh).transpose(0, 1)
        keys, values = cache[:, :, :, : position + 1].flatten(1, 2)  # (B*H, t+1, d/H) each
        scores = torch.bmm(qkv[:, :d].reshape(b * heads, 1, dh), keys.transpose(1, 2))  # (B*H, 1, t+1)
        attended = torch.bmm(torch.softmax(scores, dim=-1), values).view(b, d)
        x = self.self_out(attended, residual=x)

        q = self.action_query(F.layer_norm(x, (d,), *self.cross_norm, self.eps))
        scores = torch.bmm(q.view(b * heads, 1, dh), memory.keys)  # (B*H, 1, T_mem)
        attended = torch.bmm(torch.softmax(scores, dim=-1), memory.values).view(b, d)
        action_gate = self.action_out_gate(attended, residual=memory.output_bias)  # (B, 2d): [a, W_a a + W_i i + b]
        x = x + lerp(memory.identity, action_gate[:, :d], torch.sigmoid(action_gate[:, d:]))

        hidden = self.ffn_in(F.layer_norm(x, (d,), *self.ffn_norm, self.eps), gelu=True)  # (B, f)
        return self.ffn_out(hidden, residual=x)


class DecoderLayer(nn.Module):
    def __init__(self, config: DTMRConfig):
        super().__init__()
        d = config.decoder_dim
        self.heads = config.decoder_heads
        self.self_norm = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.self_out = nn.Linear(d, d)
        self.cross_norm = nn.LayerNorm(d)
        self.action_query = nn.Linear(d, d)
        self.action_kv = nn.Linear(config.action_dim, 2 * d)
        self.action_out = nn.Linear(d, d)
        self.identity_value = nn.Linear(config.identity_dim, d)
        self.identity_out = nn.Linear(d, d)
        self.gate_action = nn.Linear(d, d)
        self.gate_identity = nn.Linear(d, d, bias=False)
        self.ffn_norm = nn.LayerNorm(d)
        self.ffn_in = nn.Linear(d, config.decoder_ffn)
        self.ffn_out = nn.Linear(config.decoder_ffn, d)
        self.dropout = nn.Dropout(config.dropout)

    def memory(self, action_memory: torch.Tensor, identity: torch.Tensor) -> LayerMemory:
        """action_memory (B, T_mem, action_dim), identity (B, identity_dim) -> this layer's LayerMemory."""
        b, t, _ = action_memory.shape
        d = self.qkv.in_features
        kv = self.action_kv(action_memory).view(b, t, 2, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        identity_context = self.identity_out(self.identity_value(identity)).unsqueeze(1)
        gate_bias = self.gate_identity(identity_context) + self.gate_action.bias
        return LayerMemory(kv[0].contiguous(), kv[1].contiguous(), identity_context, gate_bias)

    def forward(self, x: torch.Tensor, memory: LayerMemory) -> torch.Tensor:
        """Parallel pass: x (B, L, d) -> (B, L, d), causal self-attention among the L tokens."""
        b, length, d = x.shape
        q, k, v = self.qkv(self.self_norm(x)).view(b, length, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.dropout(self.self_out(attended.transpose(1, 2).reshape(b, length, d)))

        q = self.action_query(self.cross_norm(x)).view(b, length, self.heads, d // self.heads).transpose(1, 2)
        action = F.scaled_dot_product_attention(q, memory.keys, memory.values)
        action = self.action_out(action.transpose(1, 2).reshape(b, length, d))
        gate = torch.sigmoid(F.linear(action, self.gate_action.weight) + memory.gate_bias)
        x = x + self.dropout(lerp(memory.identity, action, gate))  # g * a + (1 - g) * i

        return x + self.dropout(self.ffn_out(F.gelu(self.ffn_in(self.ffn_norm(x)))))

    def step_layer(self, packed: bool) -> StepLayer:
        """This layer's parameters rearranged for the cached step (see StepLayer); call without autograd."""
        d = self.qkv.in_features
        scale = torch.ones(3 * d, dtype=self.qkv.weight.dtype, device=self.qkv.weight.device)
        scale[:d] = (d // self.heads) ** -0.5
        w_o, w_a = self.action_out.weight, self.gate_action.weight
        return StepLayer(
            self.heads, self.self_norm.eps,
            (self.self_norm.weight, self.self_norm.bias),
            StepLinear.of(self.qkv.weight * scale[:, None], self.qkv.bias * scale, packed),
            StepLinear.of(self.self_out.weight, self.self_out.bias, packed),
            (self.cross_norm.weight, self.cross_norm.bias),
            StepLinear.of(self.action_query.weight * scale[:d, None], self.action_query.bias * scale[:d], packed),
            StepLinear.of(torch.cat([w_o, w_a @ w_o]), None, packed), self.action_out.bias, w_a @ self.action_out.bias,
            (self.ffn_norm.weight, self.ffn_norm.bias),
            StepLinear.of(self.ffn_in.weight, self.ffn_in.bias, packed),
            StepLinear.of(self.ffn_out.weight, self.ffn_out.bias, packed),
        )


class FactorizedDecoder(nn.Module):
    def __init__(self, config: DTMRConfig, topology: Topology):
        super().__init__()
        d = config.decoder_dim
        num_joints = topology.num_joints
        self.frames = config.frames
        self.num_joints = num_joints
        self.heads = config.decoder_heads
        self.input_embedding = nn.Linear(num_joints * 3, d)
        self.start_token = nn.Parameter(torch.zeros(d))
        self.positions = nn.Parameter(torch.zeros(config.frames, d))
        nn.init.normal_(self.start_token, std=0.02)
        nn.init.normal_(self.positions, std=0.02)
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.decoder_layers))
        self.final_norm = nn.LayerNorm(d)
        self.kinematic = KinematicHead(topology) if config.output_head == "kinematic" else None
        self.output = nn.Linear(d, num_joints * 3 if self.kinematic is None else self.kinematic.raw_size)
        self._step_layers: dict[bool, tuple[tuple, list[StepLayer]]] = {}  # packed -> (parameter key, layers)

    def step_layers(self, packed: bool = False) -> list[StepLayer]:
        """The layers as the cached step computes them (StepLayer; `packed`: oneDNN StepLinears), derived from
        the parameters on first use and again whenever one of them changed (an optimizer step,
        load_state_dict, .to(), an in-place edit): the key is every parameter's storage, dtype and version
        counter. Not part of the state dict."""
        try:
            key = tuple((p.data_ptr(), p.dtype, p._version) for p in self.parameters())
        except RuntimeError:  # parameters created under inference_mode have no version counter: rebuild
            key = ()
        if not key or self._step_layers.get(packed, ((),))[0] != key:
            with torch.no_grad():
                self._step_layers[packed] = (key, [layer.step_layer(packed) for layer in self.layers])
        return self._step_layers[packed][1]

    # ------------------------------------------------------------------ building blocks

    def memories(self, action_memory: torch.Tensor, identity: torch.Tensor) -> list[LayerMemory]:
        return [layer.memory(action_memory, identity) for layer in self.layers]

    def _project(self, x: torch.Tensor, bone_lengths: torch.Tensor | None) -> torch.Tensor:
        """(B, ..., d) -> (B, ..., J*3); the kinematic head places its bones on `bone_lengths` (B, J-1)."""
        raw = self.output(self.final_norm(x))
        if self.kinematic is None:
            return raw
        if bone_lengths is None:
            raise ValueError("the kinematic output head needs the reference's bone lengths")
        return self.kinematic(raw, bone_lengths)

    def teacher_forced(self, action_memory: torch.Tensor, identity: torch.Tensor,
                       previous: torch.Tensor, bone_lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Parallel pass. previous (B, L, J, 3) are the frames fed back, L < frames.

        Returns (B, L + 1, J, 3): output t is predicted from the start token and previous[:, :t].
        """
        b, length = previous.shape[:2]
        start = self.start_token.expand(b, 1, -1)
        x = torch.cat([start, self.input_embedding(previous.flatten(2))], dim=1)
        x = x + self.positions[: length + 1]
        for layer, memory in zip(self.layers, self.memories(action_memory, identity)):
            x = layer(x, memory)
        return self._project(x, bone_lengths).view(b, length + 1, self.num_joints, 3)

    @torch.no_grad()
    def generate_cached(self, action_memory: torch.Tensor, identity: torch.Tensor,
                        bone_lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Fully autoregressive generation with key/value caches. (B, frames, J, 3). No autograd."""
        b, d = action_memory.shape[0], self.start_token.shape[0]
        layers = self.step_layers(packed=b >= PACKED_MIN_BATCH and onednn_linear_usable(action_memory))
        memories = [layer.memory(memory) for layer, memory in zip(layers, self.memories(action_memory, identity))]
        caches = action_memory.new_empty(len(layers), 2, b, self.heads, self.frames, d // self.heads)
        tokens = self.positions + self.input_embedding.bias  # (T, d): position t's embedding bias
        embedding = self.input_embedding.weight.t()  # (J*3, d)
        out = action_memory.new_empty(self.frames, b, self.num_joints * 3)
        x = (self.start_token + self.positions[0]).repeat(b, 1)
        for t in range(self.frames):
            for layer, memory, cache in zip(layers, memories, caches):
                x = layer.step(x, memory, cache, t)
            out[t] = self._project(x, bone_lengths)  # (B, J*3)
            if t + 1 < self.frames:
                x = torch.addmm(tokens[t + 1], out[t], embedding)
        return out.transpose(0, 1).reshape(b, self.frames, self.num_joints, 3)

    def generate_uncached(self, action_memory: torch.Tensor, identity: torch.Tensor,
                          bone_lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Autoregressive generation that recomputes the whole prefix at every step. (B, frames, J, 3)."""
        b = action_memory.shape[0]
        out = action_memory.new_empty(b, 0, self.num_joints, 3)
        for _ in range(self.frames):
            step = self.teacher_forced(action_memory, identity, out, bone_lengths)[:, -1:]
            out = torch.cat([out, step], dim=1)
        return out

    # ------------------------------------------------------------------ the decoder as the model uses it

    def forward(self, action_memory: torch.Tensor, identity: torch.Tensor, target: torch.Tensor | None = None,
                teacher_forcing: float = 0.0, use_cache: bool = True,
                bone_lengths: torch.Tensor | None = None) -> torch.Tensor:
        """(B, T, action_dim), (B, identity_dim) -> (B, frames, J, 3); `bone_lengths` (B, J-1) the reference's
        (needed by the kinematic head only).

        With `target` (B, frames, J, 3), one draw per batch decides: with probability `teacher_forcing`
        the ground truth shifted by one frame is fed back, otherwise the model's own outputs. Own
        outputs are generated first without gradients (cached), then fed back in one parallel pass that
        carries the gradients ("parallel scheduled sampling"): the result equals free-running decoding
        and every parameter is trained, without back-propagating through 64 sequential steps. Without
        `target` the decoder runs free; under no_grad/inference_mode that is the generation alone.
        """
        if target is not None and teacher_forcing > 0.0 and (
            teacher_forcing >= 1.0 or torch.rand(()).item() < teacher_forcing
        ):
            return self.teacher_forced(action_memory, identity, target[:, :-1], bone_lengths)
        with torch.no_grad():
            generate = self.generate_cached if use_cache else self.generate_uncached
            generated = generate(action_memory, identity, bone_lengths)
        if not torch.is_grad_enabled():
            return generated
        return self.teacher_forced(action_memory, identity, generated[:, :-1], bone_lengths)
