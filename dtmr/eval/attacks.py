"""Recognition and re-identification attacks on (anonymized) clips.

Accuracies are in percent. A label the recognizer has no class for counts as a miss.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data.clip import Clip

SAMPLES = 5  # SGN's test protocol: logits averaged over 5 segment draws


def top_k_accuracy(probabilities: np.ndarray, classes: np.ndarray, k: int) -> float:
    """Percent of rows whose true class (index; -1 = none) is among the k most probable."""
    k = min(k, probabilities.shape[1])
    top = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]
    hit = (top == np.asarray(classes)[:, None]).any(axis=1)
    return float(100.0 * hit.mean()) if len(hit) else float("nan")


def recognition_accuracy(recognizer, clips: Sequence[Clip], labels: Sequence[int], seed: int) -> tuple[float, float]:
    """(top-1, top-5) of `recognizer` on `clips` against data-set `labels`."""
    classes = np.array([-1 if (c := recognizer.class_index(label)) is None else c for label in labels])
    proba = recognizer.predict_proba(list(clips), samples=SAMPLES, seed=seed)
    return top_k_accuracy(proba, classes, 1), top_k_accuracy(proba, classes, 5)


def linkage_accuracy(recognizer, anonymized: Sequence[Clip], raw: Sequence[Clip], seed: int) -> float:
    """Percent of anonymized clips whose nearest raw clip (cosine distance between the subject
    recognizer's clip embeddings) is the clip it was made from; anonymized[i] comes from raw[i].
    Chance is 100 / len(raw)."""
    a = recognizer.embed(list(anonymized), samples=SAMPLES, seed=seed)
    r = recognizer.embed(list(raw), samples=SAMPLES, seed=seed)
    a /= np.linalg.norm(a, axis=1, keepdims=True) + 1e-12
    r /= np.linalg.norm(r, axis=1, keepdims=True) + 1e-12
    nearest = np.argmax(a @ r.T, axis=1)
    return float(100.0 * (nearest == np.arange(len(a))).mean())
