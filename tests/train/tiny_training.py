"""A tiny DisentangledTMR and a tiny synthetic library, shared by the trainer tests and the training bench's."""

from __future__ import annotations

from pathlib import Path

from dtmr.data.synthetic import generate_clips
from dtmr.io.library import ClipLibrary

#: DTMRConfig fields for a model that trains in a fraction of a second per step
TINY = {
    "action_conv_channels": 8, "action_hidden": 16, "action_heads": 2, "action_layers": 1, "action_ffn": 32,
    "action_dim": 16, "mixformer_channels": [40], "mixformer_blocks": [1], "identity_channels": [8, 16, 16, 16],
    "identity_heads": 2, "bone_hidden": 16, "identity_fusion_hidden": 32, "identity_dim": 16,
    "decoder_layers": 1, "decoder_dim": 16, "decoder_heads": 2, "decoder_ffn": 32, "dropout": 0.0,
}


def create_tiny_library(path: Path) -> Path:
    """4 subjects x 3 actions x 2 repetitions of synthetic clips (split "synthetic")."""
    ClipLibrary.create(path, generate_clips(subjects=4, actions=3, repetitions=2, seed=0))
    return path
