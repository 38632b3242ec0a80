"""The decoder's cached step as inference serves it: the same arithmetic on rearranged weights.

A step of `FactorizedDecoder.generate_cached` is memory- and call-bound (at batch 1 it streams every weight
once for a matrix-vector product), so a prepared decoder (`StepGeneration`, put in place by
`prepare_for_inference`) runs on StepLayers: the layers' parameters rearranged once, kept until a parameter
changes, never stored: matrices transposed for the product or packed for oneDNN's linear (float32 CPU,
batch > 1; bias and GELU fused), the attention scale folded into the query projections, the action output
and its gate term as one product; a 1-query attention as bmm + softmax + bmm; the next token's embedding
and position as one addmm. Exact in real arithmetic; the rounding differs from the plain step.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F

from ..autocast_safe import lerp
from ..decoder import DecoderLayer, FactorizedDecoder, LayerMemory


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


def step_layer(layer: DecoderLayer, packed: bool) -> StepLayer:
    """`layer`'s parameters rearranged for the cached step (see StepLayer); call without autograd."""
    d = layer.qkv.in_features
    scale = torch.ones(3 * d, dtype=layer.qkv.weight.dtype, device=layer.qkv.weight.device)
    scale[:d] = (d // layer.heads) ** -0.5
    w_o, w_a = layer.action_out.weight, layer.gate_action.weight
    return StepLayer(
        layer.heads, layer.self_norm.eps,
        (layer.self_norm.weight, layer.self_norm.bias),
        StepLinear.of(layer.qkv.weight * scale[:, None], layer.qkv.bias * scale, packed),
        StepLinear.of(layer.self_out.weight, layer.self_out.bias, packed),
        (layer.cross_norm.weight, layer.cross_norm.bias),
        StepLinear.of(layer.action_query.weight * scale[:d, None], layer.action_query.bias * scale[:d], packed),
        StepLinear.of(torch.cat([w_o, w_a @ w_o]), None, packed), layer.action_out.bias, w_a @ layer.action_out.bias,
        (layer.ffn_norm.weight, layer.ffn_norm.bias),
        StepLinear.of(layer.ffn_in.weight, layer.ffn_in.bias, packed),
        StepLinear.of(layer.ffn_out.weight, layer.ffn_out.bias, packed),
    )


class StepGeneration:
    """`decoder.generate_cached` on StepLayers (see the module docstring); callable like it.

    Holds the decoder (not a module: the decoder keeps it as a plain attribute, outside its state dict).
    Subclasses may change `step` or `layers` to compare other step implementations (`dtmr bench model`)."""

    def __init__(self, decoder: FactorizedDecoder):
        self.decoder = decoder
        self._layers: dict[bool, tuple[tuple, list[StepLayer]]] = {}  # packed -> (parameter key, layers)

    def layers(self, packed: bool = False) -> list[StepLayer]:
        """The decoder's layers as StepLayers (`packed`: oneDNN StepLinears), derived from the parameters on
        first use and again whenever one of them changed (an optimizer step, load_state_dict, .to(), an
        in-place edit): the key is every parameter's storage, dtype and version counter."""
        try:
            key = tuple((p.data_ptr(), p.dtype, p._version) for p in self.decoder.parameters())
        except RuntimeError:  # parameters created under inference_mode have no version counter: rebuild
            key = ()
        if not key or self._layers.get(packed, ((),))[0] != key:
            with torch.no_grad():
                self._layers[packed] = (key, [step_layer(layer, packed) for layer in self.decoder.layers])
        return self._layers[packed][1]

    def step(self, layer: StepLayer, x: torch.Tensor, memory: StepMemory, cache: torch.Tensor,
             position: int) -> torch.Tensor:
        return layer.step(x, memory, cache, position)

    @torch.no_grad()
    def __call__(self, action_memory: torch.Tensor, identity: torch.Tensor,
                 bone_lengths: torch.Tensor | None = None) -> torch.Tensor:
        """(B, T_mem, action_dim), (B, identity_dim) -> (B, frames, J, 3), as `generate_cached`."""
        decoder = self.decoder
        b, d = action_memory.shape[0], decoder.start_token.shape[0]
        layers = self.layers(packed=b >= PACKED_MIN_BATCH and onednn_linear_usable(action_memory))
        memories = [layer.memory(memory) for layer, memory in zip(layers, decoder.memories(action_memory, identity))]
        caches = action_memory.new_empty(len(layers), 2, b, decoder.heads, decoder.frames, d // decoder.heads)
        tokens = decoder.positions + decoder.input_embedding.bias  # (T, d): position t's embedding bias
        embedding = decoder.input_embedding.weight.t()  # (J*3, d)
        out = action_memory.new_empty(decoder.frames, b, decoder.num_joints * 3)
        x = (decoder.start_token + decoder.positions[0]).repeat(b, 1)
        for t in range(decoder.frames):
            for layer, memory, cache in zip(layers, memories, caches):
                x = self.step(layer, x, memory, cache, t)
            out[t] = decoder._project(x, bone_lengths)  # (B, J*3)
            if t + 1 < decoder.frames:
                x = torch.addmm(tokens[t + 1], out[t], embedding)
        return out.transpose(0, 1).reshape(b, decoder.frames, decoder.num_joints, 3)
