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
  computed once per sequence (`DecoderLayer.step`). A prepared model
  (`dtmr.models.serving.prepare_for_inference`) runs the same steps on the layers' weights rearranged
  for a memory- and call-bound step (`dtmr.models.serving.step_decoder`);
* uncached generation: the parallel pass re-run on the growing prefix at every step (memory
  projections included), which is what the cache saves; kept for tests and `dtmr bench model`.
"""

from __future__ import annotations

from dataclasses import dataclass

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

    def step(self, x: torch.Tensor, memory: LayerMemory, cache: torch.Tensor, position: int) -> torch.Tensor:
        """One cached step: x (B, d) is the token at `position` -> (B, d); `forward`'s arithmetic (no dropout).

        `cache` (2, B, H, T, d/H) holds the keys/values of positions < `position`; this token's are written
        at `position` and it attends to 0..position.
        """
        b, d = x.shape
        qkv = self.qkv(self.self_norm(x)).view(b, 3, self.heads, 1, d // self.heads)
        cache[:, :, :, position : position + 1] = qkv[:, 1:].transpose(0, 1)
        attended = F.scaled_dot_product_attention(qkv[:, 0], cache[0, :, :, : position + 1],
                                                  cache[1, :, :, : position + 1])
        x = x + self.self_out(attended.reshape(b, d))
        q = self.action_query(self.cross_norm(x)).view(b, self.heads, 1, d // self.heads)
        action = self.action_out(F.scaled_dot_product_attention(q, memory.keys, memory.values).reshape(b, d))
        gate = torch.sigmoid(F.linear(action, self.gate_action.weight) + memory.gate_bias[:, 0])
        x = x + lerp(memory.identity[:, 0], action, gate)
        return x + self.ffn_out(F.gelu(self.ffn_in(self.ffn_norm(x))))

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
        #: the cached decode as inference serving computes it (`dtmr.models.serving.step_decoder`), or None: the
        #: plain one below. Not a submodule and not in the state dict.
        self.fast_generation = None

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
        """Fully autoregressive generation with key/value caches. (B, frames, J, 3). No autograd.

        Every layer keeps a preallocated cache of its self-attention keys/values; the memory terms are computed
        once per sequence. A prepared model (`prepare_for_inference`) runs the same steps on rearranged weights.
        """
        if self.fast_generation is not None:
            return self.fast_generation(action_memory, identity, bone_lengths)
        b, d = action_memory.shape[0], self.start_token.shape[0]
        memories = self.memories(action_memory, identity)
        caches = action_memory.new_empty(len(self.layers), 2, b, self.heads, self.frames, d // self.heads)
        out = action_memory.new_empty(b, self.frames, self.num_joints * 3)
        x = (self.start_token + self.positions[0]).expand(b, d)
        for t in range(self.frames):
            for layer, memory, cache in zip(self.layers, memories, caches):
                x = layer.step(x, memory, cache, t)
            out[:, t] = self._project(x, bone_lengths)
            if t + 1 < self.frames:
                x = self.input_embedding(out[:, t]) + self.positions[t + 1]
        return out.view(b, self.frames, self.num_joints, 3)

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
