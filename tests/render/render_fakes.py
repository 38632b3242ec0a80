"""Procedural NTU-25 clips and stand-ins for the Anonymizer and Recognizer contracts (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import numpy as np

from dtmr import Clip
from dtmr.data.label_set import RecognizerClasses, TrainedOn

#: a person standing 3 m in front of a Kinect, arms out to the sides (y up, x to the sensor's left)
T_POSE = np.array([
    [0.00, 1.00, 3.00], [0.00, 1.25, 3.00], [0.00, 1.52, 3.00], [0.00, 1.68, 3.00],
    [-0.18, 1.45, 3.00], [-0.45, 1.45, 3.00], [-0.70, 1.45, 3.00], [-0.78, 1.45, 3.00],
    [0.18, 1.45, 3.00], [0.45, 1.45, 3.00], [0.70, 1.45, 3.00], [0.78, 1.45, 3.00],
    [-0.10, 0.95, 3.00], [-0.10, 0.52, 3.00], [-0.10, 0.09, 3.00], [-0.10, 0.03, 2.88],
    [0.10, 0.95, 3.00], [0.10, 0.52, 3.00], [0.10, 0.09, 3.00], [0.10, 0.03, 2.88],
    [0.00, 1.45, 3.00], [-0.84, 1.45, 3.00], [-0.80, 1.48, 2.97], [0.84, 1.45, 3.00], [0.80, 1.48, 2.97],
], dtype=np.float32)

LEFT_ELBOW, LEFT_WRIST = 5, 6


def swaying_clip(frames: int = 12, subject: int = 1, action: int = 0, scale: float = 1.0) -> Clip:
    """The T-pose swaying sideways by up to 5 cm, feet planted."""
    joints = np.repeat(T_POSE[None] * scale, frames, axis=0)
    joints[:, :12, 0] += 0.05 * np.sin(np.linspace(0, 2 * np.pi, frames))[:, None]
    return Clip(joints, topology="ntu25", fps=30.0, subject=subject, action=action, sample_name=f"s{subject}a{action}")


class FakeAnonymizer:
    """retarget_pair: retargeted = the source scaled to the reference's height; released = β blend."""

    method = "fake"

    def __init__(self, beta: float = 0.5):
        self.beta = beta
        self.action_names = []  # what each call was given

    def retarget_pair(self, clip: Clip, reference: Clip, action_names=None) -> tuple[Clip, Clip]:
        self.action_names.append(action_names)
        ratio = np.nanmax(reference.joints[..., 1]) / np.nanmax(clip.joints[..., 1])
        retargeted = clip.joints * ratio
        released = (1 - self.beta) * clip.joints + self.beta * retargeted
        return clip.replace(joints=retargeted), clip.replace(joints=released)


class FakeRecognizer:
    """Always predicts class `predicted` with probability 0.75 on every frame; `trained_on`: the data set its
    checkpoint would record (`Recognizer.classes`)."""

    def __init__(self, task: str, labels: list[int], class_names: list[str], predicted: int,
                 trained_on: TrainedOn = TrainedOn()):
        self.task, self.labels, self.class_names, self.predicted = task, labels, class_names, predicted
        self.classes = RecognizerClasses(task, tuple(labels), tuple(class_names), trained_on)

    def window_probabilities(self, clip: Clip, window: int = 32, stride: int = 1) -> np.ndarray:
        probabilities = np.full((clip.num_frames, len(self.labels)), 0.25 / (len(self.labels) - 1))
        probabilities[:, self.predicted] = 0.75
        return probabilities
