"""Checkpoint builders of the baselines, registered with `dtmr.models.checkpoints.checkpoint` on import.

Each builder rebuilds the untrained module from a checkpoint's "config" and "topology"; the checkpoint
module then loads the weights (none for naive and noise: their state dicts are empty).
"""

from __future__ import annotations

from ... import methods
from ..checkpoints.checkpoint import register_method
from .naive import NaiveRetargeter
from .noise import DEFAULT_SIGMA, GaussianNoise
from .pmr import DMR, DMR_LATENT, PMR, PMR_LATENT


def _build_dmr(checkpoint: dict) -> DMR:
    return DMR(checkpoint["topology"], latent=tuple(checkpoint["config"].get("latent", DMR_LATENT)))


def _build_pmr(checkpoint: dict) -> PMR:
    config = checkpoint["config"]
    return PMR(checkpoint["topology"], num_subjects=int(config["num_subjects"]),
               num_actions=int(config["num_actions"]), latent=tuple(config.get("latent", PMR_LATENT)))


def _build_naive(checkpoint: dict) -> NaiveRetargeter:
    return NaiveRetargeter(checkpoint["topology"])


def _build_noise(checkpoint: dict) -> GaussianNoise:
    config = checkpoint["config"]
    return GaussianNoise(checkpoint["topology"], sigma=float(config.get("sigma", DEFAULT_SIGMA)),
                         seed=int(config.get("seed", 0)))


register_method(methods.DMR.name, _build_dmr)
register_method(methods.PMR.name, _build_pmr)
register_method(methods.NAIVE.name, _build_naive)
register_method(methods.NOISE.name, _build_noise)
