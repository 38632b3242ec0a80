"""Small stand-ins for the library pieces the Studio calls (JABS `_fakes.py` style).

`FakeSource` follows the `ClipSource` interface of docs/ARCHITECTURE.md, `FakeAnonymizer` the
`Anonymizer.retarget_pair` contract and `FakeRecognizer` the `Recognizer` one. Clips are procedural
NTU-25 motions (y up, metres, standing ~3 m in front of a Kinect), different per subject and action.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import torch
from PySide6.QtWidgets import QApplication

from dtmr import Clip
from dtmr.skeleton import get_topology

REST_POSE = np.array([
    [0.00, 1.00, 3.00], [0.00, 1.25, 3.00], [0.00, 1.52, 3.00], [0.00, 1.66, 3.00],
    [-0.18, 1.45, 3.00], [-0.20, 1.18, 3.00], [-0.22, 0.95, 3.00], [-0.22, 0.88, 3.00],
    [0.18, 1.45, 3.00], [0.20, 1.18, 3.00], [0.22, 0.95, 3.00], [0.22, 0.88, 3.00],
    [-0.10, 0.95, 3.00], [-0.10, 0.52, 3.00], [-0.10, 0.09, 3.00], [-0.10, 0.03, 2.88],
    [0.10, 0.95, 3.00], [0.10, 0.52, 3.00], [0.10, 0.09, 3.00], [0.10, 0.03, 2.88],
    [0.00, 1.45, 3.00], [-0.22, 0.80, 3.00], [-0.19, 0.86, 2.97], [0.22, 0.80, 3.00], [0.19, 0.86, 2.97],
], dtype=np.float32)

ACTION_NAMES = ["wave", "march", "sway"]


def make_clip(subject: int, action: int, frames: int = 48, view: int = 0, missing: bool = False) -> Clip:
    """A procedural clip: subject sets the body scale and posture, action the motion."""
    t = np.arange(frames, dtype=np.float32) / 30.0
    scale = 0.85 + 0.06 * (subject % 6)
    pose = np.repeat(REST_POSE[None], frames, axis=0).copy()
    root = pose[:, :1, :].copy()
    pose = root + (pose - root) * scale
    pose[:, :, 1] -= (1.0 - scale) * 0.03  # feet stay near the floor
    phase = 2 * np.pi * (0.8 + 0.1 * subject) * t
    if action % 3 == 0:  # wave: the right forearm swings up and sideways
        pose[:, [9, 10, 11, 23, 24], 1] += (0.25 * (1 + np.sin(phase)))[:, None]
        pose[:, [10, 11, 23, 24], 0] += (0.15 * np.sin(phase))[:, None]
    elif action % 3 == 1:  # march: knees and feet lift alternately
        lift = 0.12 * np.maximum(np.sin(phase), 0)[:, None]
        other = 0.12 * np.maximum(-np.sin(phase), 0)[:, None]
        pose[:, [13, 14, 15], 1] += lift
        pose[:, [17, 18, 19], 1] += other
    else:  # sway: the whole body slides sideways (feet slide too)
        pose[:, :, 0] += (0.2 * np.sin(phase))[:, None]
    pose[:, :, 0] += 0.3 * (view - 1)
    if missing:
        pose[frames // 3 :, 7] = np.nan
    return Clip(pose.astype(np.float32), "ntu25", fps=30.0, subject=subject, action=action, view=view,
                sample_name=f"S{subject:02d}A{action:02d}V{view}")


class FakeSource:
    """An in-memory ClipSource."""

    def __init__(self, clips: list[Clip], path: str | Path = "fake.h5", action_names=ACTION_NAMES) -> None:
        self.clips = clips
        self.path = Path(path)
        self.topology = "ntu25"
        self.action_names = list(action_names) if action_names is not None else None
        self.reads = 0

    def __len__(self) -> int:
        return len(self.clips)

    def metadata(self, i: int) -> dict:
        return self.clips[i].metadata()

    def metadata_table(self) -> dict[str, np.ndarray]:
        def column(name, default):
            return np.array([default if getattr(c, name) is None else getattr(c, name) for c in self.clips])

        return {
            "subject": column("subject", -1), "action": column("action", -1), "view": column("view", -1),
            "repetition": column("repetition", -1), "fps": column("fps", 30.0),
            "sample_name": column("sample_name", ""), "source_file": column("source_file", ""),
        }

    def read(self, i: int) -> Clip:
        self.reads += 1
        return self.clips[i]


def make_source(subjects: int = 3, actions: int = 3, views: int = 1, frames: int = 48, path="fake.h5") -> FakeSource:
    clips = [make_clip(s, a, frames + 4 * a, view=v) for s in range(subjects) for a in range(actions)
             for v in range(views)]
    return FakeSource(clips, path)


class FakeAnonymizer:
    """retarget_pair: the source rescaled about its root to the reference's height; β blend.

    `delay` seconds of sleep (in small slices, checking `release`) make supersede and stall tests possible.
    """

    def __init__(self, beta: float = 0.2, method: str = "dtmr", delay: float = 0.0) -> None:
        self.beta = beta
        self.method = method
        self.topology = get_topology("ntu25")
        self.delay = delay
        self.calls: list[tuple[str, str]] = []
        self.action_names: list = []  # what each call was told the library's action names are
        self.release = threading.Event()

    def retarget_pair(self, clip: Clip, reference: Clip, action_names=None):
        self.calls.append((clip.name, reference.name))
        self.action_names.append(action_names)
        deadline = time.monotonic() + self.delay
        while time.monotonic() < deadline and not self.release.is_set():
            time.sleep(0.005)
        def height(c):  # NaN for a clip with no finite joint (the library tests' broken clips)
            ys = c.joints[..., 1][np.isfinite(c.joints[..., 1])]
            return float(ys.max() - ys.min()) if ys.size else float("nan")
        ratio = height(reference) / height(clip)
        root = clip.joints[:, :1]
        full = root + (clip.joints - root) * ratio
        released = (1 - self.beta) * clip.joints + self.beta * full
        extra = {"source_clip": clip.name, "reference_clip": reference.name, "beta": str(self.beta),
                 "method": self.method}
        return clip.replace(joints=full, extra=extra), clip.replace(joints=released, extra=extra)

    def retarget_parts(self, clip: Clip, reference: Clip, action_names=None):
        """`retarget_pair` and the released clip's two terms (the source residual)."""
        from dtmr.models.blend import ReleaseParts

        retargeted, released = self.retarget_pair(clip, reference, action_names)
        return retargeted, released, ReleaseParts(retargeted.joints, clip.joints, self.beta)


class FakeRecognizer:
    """window_probabilities: a softmax that favours the clip's own label, blurred by β-like scaling."""

    def __init__(self, task: str, num_classes: int) -> None:
        self.task = task
        self.labels = np.arange(num_classes)
        self.class_names = [f"{task} {i}" for i in range(num_classes)]
        self.topology = get_topology("ntu25")

    def window_probabilities(self, clip: Clip, window: int = 32, stride: int = 1) -> np.ndarray:
        label = clip.action if self.task == "action" else clip.subject
        logits = np.zeros((clip.num_frames, len(self.labels)), dtype=np.float32)
        height = float(np.nanmax(clip.joints[..., 1]))
        logits[:, (label or 0) % len(self.labels)] = 2.0 + np.linspace(0, 1, clip.num_frames)
        logits[:, int(height * 10) % len(self.labels)] += 1.0
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def load_named_recognizer(info, device) -> FakeRecognizer:
    """A `fakes.load_recognizer`: the fake recognizer with the class names its checkpoint records."""
    recognizer = FakeRecognizer(info.task, len(info.classes.labels))
    recognizer.class_names = list(info.classes.class_names)
    return recognizer


def save_fake_checkpoint(path: Path, method: str = "dtmr", beta: float | None = 0.2, task: str | None = None) -> Path:
    """A checkpoint file the catalogue can read (metadata only; the fake loaders ignore the weights)."""
    data = {"format": "dtmr-checkpoint", "version": 1, "method": method, "config": {"preset_name": "small"},
            "topology": "ntu25", "beta": beta, "data": {}, "metrics": {}, "state_dict": {"w": torch.zeros(1)}}
    if task is not None:
        data.update(task=task, labels=list(range(4)), class_names=[f"{task} {i}" for i in range(4)])
    torch.save(data, path)
    return path


#: overrides of the `small` preset that make a DisentangledTMR of a few thousand parameters (fast on a CPU)
TINY_DTMR = {
    "action_conv_channels": 8, "action_hidden": 16, "action_heads": 2, "action_layers": 1, "action_ffn": 32,
    "action_dim": 16, "mixformer_channels": [40], "mixformer_blocks": [1], "identity_channels": [8, 16, 16, 16],
    "identity_heads": 2, "bone_hidden": 16, "identity_fusion_hidden": 32, "identity_dim": 16,
    "decoder_layers": 1, "decoder_dim": 16, "decoder_heads": 2, "decoder_ffn": 32, "dropout": 0.0,
}


def save_tiny_dtmr_checkpoint(path: Path, beta: float = 0.2, seed: int = 0) -> Path:
    """A real (untrained, tiny) DisentangledTMR checkpoint that `Anonymizer.from_checkpoint` loads."""
    from dtmr.models import DisentangledTMR, DTMRConfig, save_checkpoint

    torch.manual_seed(seed)
    model = DisentangledTMR(DTMRConfig.preset("small", "ntu25", **TINY_DTMR), beta=beta)
    return save_checkpoint(path, model, data={"name": "tests"}, metrics={})


def settle(qtbot, window, timeout: int = 20000) -> None:
    """Wait until every background job of the window is done and the latest frame is drawn.

    A job thread posts its result before it stops being busy, and the result's handler may submit the next
    job (a retarget's result starts the model views' recognition): so idle means not busy *after* the
    results posted so far were delivered."""
    def idle() -> bool:
        if window.controller.busy:
            return False
        QApplication.processEvents()
        return not window.controller.busy

    qtbot.waitUntil(idle, timeout=timeout)
    window.coalescer.flush()
