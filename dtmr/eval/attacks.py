"""Recognition and re-identification attacks on (anonymized) clips.

Accuracies are in percent. A label the recognizer has no class for counts as a miss.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data.clip import Clip
from ..models.recognizers import TEST_SAMPLES


def top_k_accuracy(probabilities: np.ndarray, classes: np.ndarray, k: int) -> float:
    """Percent of rows whose true class (index; -1 = none) is among the k most probable."""
    k = min(k, probabilities.shape[1])
    top = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]
    hit = (top == np.asarray(classes)[:, None]).any(axis=1)
    return float(100.0 * hit.mean()) if len(hit) else float("nan")


def _classes(recognizer, labels: Sequence[int]) -> np.ndarray:
    return np.array([-1 if (c := recognizer.class_index(label)) is None else c for label in labels])


def accuracy_of_probabilities(recognizer, probabilities: np.ndarray, labels: Sequence[int]) -> tuple[float, float]:
    classes = _classes(recognizer, labels)
    return top_k_accuracy(probabilities, classes, 1), top_k_accuracy(probabilities, classes, 5)


def recognition_accuracy(recognizer, clips: Sequence[Clip], labels: Sequence[int], seed: int) -> tuple[float, float]:
    """(top-1, top-5) of `recognizer` on `clips` against data-set `labels`."""
    return accuracy_of_probabilities(recognizer, recognizer.predict_proba(list(clips), TEST_SAMPLES, seed), labels)


def nearest_is_source(anonymized_embedding: np.ndarray, raw_embedding: np.ndarray) -> float:
    """Linkage attack: percent of anonymized clips whose nearest raw clip (cosine similarity of clip
    embeddings) is the clip it was made from (row i of both). Chance is 100 / len(raw)."""
    a = anonymized_embedding / (np.linalg.norm(anonymized_embedding, axis=1, keepdims=True) + 1e-12)
    r = raw_embedding / (np.linalg.norm(raw_embedding, axis=1, keepdims=True) + 1e-12)
    return float(100.0 * (np.argmax(a @ r.T, axis=1) == np.arange(len(a))).mean())
