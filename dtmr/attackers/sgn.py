"""The SGN attacker: the project's recognizer (`dtmr.models.recognizers`) trained by `train_recognizer` as a
subject model, the attacker of `dtmr evaluate`'s protocol. Predictions average the logits of SGN's 5
segment draws (fixed draws, so they are deterministic); `embed` gives its 512-d clip features."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from ..data.clip import Clip
from ..models.recognizers import TEST_SAMPLES, Recognizer
from .base import class_targets, read_attacker_file, save_attacker

DEFAULT_EPOCHS = 30


class SGNAttacker:
    name = "sgn"
    family = "SGN"

    def __init__(self, epochs: int = DEFAULT_EPOCHS, device: str | torch.device = "cpu"):
        self.epochs = int(epochs)
        self.device = torch.device(device)
        self.classes: list[int] = []
        self.recognizer: Recognizer | None = None

    def fit(self, clips: Sequence[Clip], labels: Sequence[int], seed: int) -> None:
        from ..train.distributed import DistributedContext
        from ..train.recognizer_trainer import train_recognizer

        classes, _ = class_targets(labels, clips)
        torch.manual_seed(seed)  # SGN's initial weights come from the global generator
        with tempfile.TemporaryDirectory(prefix="dtmr-audit-sgn-") as tmp:
            self.recognizer = train_recognizer("subject", list(clips), [int(x) for x in labels], classes, None,
                                               clips[0].topology, tmp, ctx=DistributedContext(device=self.device),
                                               epochs=self.epochs, seed=seed)
        self.classes = classes

    def predict_proba(self, clips: Sequence[Clip]) -> np.ndarray:
        if self.recognizer is None:
            raise RuntimeError("the attacker is not trained")
        return self.recognizer.predict_proba(list(clips), TEST_SAMPLES, seed=0)

    def embed(self, clips: Sequence[Clip]) -> np.ndarray:
        return self.recognizer.embed(list(clips), TEST_SAMPLES, seed=0)

    def save(self, path: str | Path) -> Path:
        config = {"epochs": self.epochs, "topology": self.recognizer.topology.name, "seg": self.recognizer.seg}
        return save_attacker(path, self.name, self.classes, config, self.recognizer.state_dict())

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu") -> "SGNAttacker":
        payload = read_attacker_file(path, cls.name)
        config = payload["config"]
        attacker = cls(config["epochs"], device)
        attacker.classes = list(payload["classes"])
        recognizer = Recognizer.create("subject", attacker.classes, None, config["topology"], config["seg"])
        recognizer.load_state_dict(payload["state"])
        attacker.recognizer = recognizer.to(attacker.device).eval()
        return attacker
