"""The privacy/utility evaluation protocol (DESIGN §5), with the public PMR code's defects fixed.

Evaluators are SGN recognizers trained on the raw **train** split (one for actions, one for subjects);
everything is measured on the anonymized **test** split. For every method and seed:

1. each test clip gets a reference drawn uniformly from the test clips of other subjects (each train clip
   one from the train clips of other subjects); the draws depend on the seed only, so every method sees
   the same references;
2. pre-trained protocol: the raw-trained evaluators' top-1/top-5 on the anonymized test clips (RI is
   scored against the *source* subject; chance = 1/#subjects);
3. retrained AR: an SGN action model trained on the anonymized train clips; adaptive attacker: an SGN
   subject model trained on the anonymized train clips labelled with their source subjects — both tested
   on the anonymized test clips (for `raw` these are the evaluators themselves). SGN training is the cost
   of the whole protocol on a CPU, so by default the two models are trained once per method, on the train
   clips anonymized with the first seed's references, and tested on every seed's test clips;
   `retrain_per_seed` trains them again for every seed. `ri_adaptive_worst` is the worst case of
   `dtmr audit`'s adaptive suite: the largest of that SGN's, a temporal-conv network's and a bone-length
   regression's re-ID, each trained on the same anonymized train clips (the raw train clips for `raw`) for
   `retrain_epochs`; the SGN column stays for the papers' protocol;
4. linkage attack: the nearest raw test clip of each anonymized clip, by the subject evaluator's clip
   embedding, should not be its source (chance = 1/#test clips);
5. geometry over all frames (`geometry.py`), against the paired target where the data set has one.

Numbers are mean ± std over the seeds (reference draws, segment sampling, and retraining when per seed).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..data.clip import Clip
from ..data.reference_pool import ReferencePool
from ..methods import RAW
from ..models.recognizers import TEST_SAMPLES
from ..train.data import TrainingData
from .attacks import (
    accuracy_of_probabilities,
    nearest_is_source,
    recognition_accuracy,
)
from .geometry import geometry_metrics
from .methods import EvalMethod
from .metrics import summarize
from .references import paired_targets
from .row import EvaluationRow, Summary

ACCURACY_KEYS = ("ar_top1", "ar_top5", "ri_top1", "ri_top5", "ar_retrained_top1", "ri_adaptive_top1",
                 "ri_adaptive_worst", "linkage")
#: the audit's attackers (dtmr/audit) besides SGN whose adaptive forms give `ri_adaptive_worst`
WORST_CASE_ATTACKERS = ("tcn", "bone-lengths")


@dataclass
class EvalSettings:
    seeds: int = 5
    recognizer_epochs: int = 60  # raw-trained evaluators
    retrain_epochs: int = 30  # retrained AR and adaptive attacker, per method and seed
    retrain: bool = True
    retrain_per_seed: bool = False


@dataclass
class SeedDraw:
    """What a seed fixes for every method: references of test and train clips, paired targets."""

    seed: int
    test_refs: np.ndarray
    train_refs: np.ndarray
    targets: np.ndarray  # per test clip: index of its paired target among the test clips, or -1


def draw_seed(data: TrainingData, seed: int) -> SeedDraw:
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xD7]))
    test, train = data.test, data.train
    test_refs = ReferencePool(test.subjects).draw_all(rng)
    train_refs = ReferencePool(train.subjects).draw_all(rng)
    targets = paired_targets(test.actions, test.views, test.subjects[test_refs], test.subjects, test.actions,
                             test.views)
    return SeedDraw(seed, test_refs, train_refs, targets)


def ensure_evaluators(data: TrainingData, folder: Path, epochs: int, log: Callable[[str], None],
                      device: str | torch.device = "cpu"):
    """The raw-trained action and subject evaluators in `folder` (trained and saved there when missing),
    on `device`."""
    from ..errors import DtmrError
    from ..models.recognizers import Recognizer
    from ..train.recognizer_trainer import train_recognizer

    out = {}
    for task, labels in (("action", data.action_labels), ("subject", data.subject_labels)):
        path = folder / f"{task}.pt"
        if path.is_file():
            recognizer = Recognizer.from_checkpoint(path, device=device)
            mismatch = _evaluator_mismatch(recognizer, task, [int(x) for x in labels], data.topology)
            if mismatch:
                raise DtmrError(f"{path}: this {task} recognizer does not match {data.path} ({data.split} split): "
                                f"{mismatch}; give --recognizers a folder trained on this data, or leave it out "
                                "to train them")
            log(f"using the {task} evaluator {path}")
        else:
            log(f"training the {task} evaluator on the raw train split ({epochs} epochs) -> {path}")
            names = data.action_class_names() if task == "action" else [f"subject {s}" for s in labels]
            clips = data.train.clips
            recognizer = train_recognizer(task, clips, [getattr(c, task) for c in clips], labels, names,
                                          data.topology, folder, ctx=_context(device), epochs=epochs,
                                          data_description=data.describe())
            recognizer.training_epochs = epochs
        out[task] = recognizer
    return out["action"], out["subject"]


def _evaluator_mismatch(recognizer, task: str, labels: list[int], topology: str) -> str | None:
    """What differs between a saved evaluator and the data (one phrase), None when it fits."""
    if recognizer.topology.name != topology:
        return f"it reads {recognizer.topology.name} skeletons, the data is {topology}"
    if recognizer.labels == labels:
        return None
    known, wanted = set(recognizer.labels), set(labels)

    def some(values: set[int]) -> str:
        listed = sorted(values)
        return ", ".join(map(str, listed[:5])) + (f" and {len(listed) - 5} more" if len(listed) > 5 else "")

    detail = [f"it knows {len(known)} {task}s, the data has {len(wanted)}"]
    if wanted - known:
        detail.append(f"the data's {some(wanted - known)} unknown to it")
    if known - wanted:
        detail.append(f"its {some(known - wanted)} not in the data")
    if known == wanted:
        detail.append("in another class order")
    return "; ".join(detail)


def _context(device: str | torch.device):
    from ..train.distributed import DistributedContext

    return DistributedContext(device=torch.device(device))


def _retrained(task: str, data: TrainingData, clips: Sequence[Clip], labels: Sequence[int], seed: int,
               epochs: int, device: str | torch.device):
    from ..train.recognizer_trainer import train_recognizer

    classes = data.action_labels if task == "action" else data.subject_labels
    # the model's initial weights come from the global generator: seed it here, or they would depend on
    # what the methods evaluated before this one drew, and a method's row on the others in its run
    torch.manual_seed(seed)
    with tempfile.TemporaryDirectory(prefix="dtmr-eval-") as tmp:
        return train_recognizer(task, clips, labels, classes, None, data.topology, tmp, ctx=_context(device),
                                epochs=epochs, seed=seed)


def _adaptive_suite(train_out: Sequence[Clip], subjects: Sequence[int], seed: int, epochs: int,
                    device: str | torch.device) -> list:
    """The audit's other attackers trained on the anonymized train clips (`dtmr audit`'s adaptive form).

    Torch's global generator is restored afterwards, so the rows of methods evaluated later are what they
    were before these attackers joined the protocol."""
    from ..attackers import make_attacker

    out = []
    devices = [torch.device(device)] if torch.device(device).type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        for name in WORST_CASE_ATTACKERS:
            attacker = make_attacker(name, epochs, device)
            attacker.fit(list(train_out), list(subjects), seed)
            out.append(attacker)
    return out


def _top1(attacker, clips: Sequence[Clip], labels: Sequence[int]) -> float:
    predicted = np.asarray(attacker.classes)[np.argmax(attacker.predict_proba(list(clips)), axis=1)]
    return float(100.0 * np.mean(predicted == np.asarray(labels)))


def seed_values(method: EvalMethod, data: TrainingData, draws: Sequence[SeedDraw], evaluators,
                settings: EvalSettings, log: Callable[[str], None], raw_embeddings: dict[int, np.ndarray],
                device: str | torch.device = "cpu") -> list[dict]:
    """Every metric of `method` for each of `draws` (accuracies in percent), in their order.

    The retrained models are trained on the first of `draws` and kept for the others unless
    `settings.retrain_per_seed`: a method's seeds that share them are one cell of work (cells.py).
    `raw_embeddings[seed]`: the subject evaluator's embeddings of the raw test clips (shared by methods);
    `device`: where the retrained models are trained.
    """
    action_eval, subject_eval = evaluators
    test, train = data.test.clips, data.train.clips
    source_actions = [c.action for c in test]
    source_subjects = [c.subject for c in test]
    per_seed = []
    retrained = None
    suite = None  # the audit's other adaptive attackers (WORST_CASE_ATTACKERS), trained like `retrained`
    for draw in draws:
        started = time.monotonic()
        references = [test[i] for i in draw.test_refs]
        anonymized = method.anonymize(test, references, draw.seed, data.action_names)
        v: dict[str, float] = {}
        v["ar_top1"], v["ar_top5"] = recognition_accuracy(action_eval, anonymized, source_actions, draw.seed)
        embedding = subject_eval.embed(anonymized, TEST_SAMPLES, draw.seed)
        v["ri_top1"], v["ri_top5"] = accuracy_of_probabilities(
            subject_eval, subject_eval.probabilities_from_embedding(embedding), source_subjects)
        if settings.retrain:
            train_out = None
            if method.method == RAW.name:
                v["ar_retrained_top1"], v["ri_adaptive_top1"] = v["ar_top1"], v["ri_top1"]
            else:
                if retrained is None or settings.retrain_per_seed:
                    train_out = method.anonymize(train, [train[i] for i in draw.train_refs], draw.seed,
                                                 data.action_names)
                    retrained = (
                        _retrained("action", data, train_out, [c.action for c in train], draw.seed,
                                   settings.retrain_epochs, device),
                        _retrained("subject", data, train_out, [c.subject for c in train], draw.seed,
                                   settings.retrain_epochs, device),
                    )
                v["ar_retrained_top1"] = recognition_accuracy(retrained[0], anonymized, source_actions, draw.seed)[0]
                v["ri_adaptive_top1"] = recognition_accuracy(retrained[1], anonymized, source_subjects, draw.seed)[0]
            if suite is None or settings.retrain_per_seed:
                if train_out is None:
                    train_out = train if method.method == RAW.name else \
                        method.anonymize(train, [train[i] for i in draw.train_refs], draw.seed, data.action_names)
                suite = _adaptive_suite(train_out, [c.subject for c in train], draw.seed, settings.retrain_epochs,
                                        device)
            v["ri_adaptive_worst"] = max([v["ri_adaptive_top1"], *(_top1(a, anonymized, source_subjects)
                                                                  for a in suite)])
        v["linkage"] = nearest_is_source(embedding, raw_embeddings[draw.seed])
        targets = [test[t] if t >= 0 else None for t in draw.targets]
        v.update(geometry_metrics(anonymized, test, references, targets))
        per_seed.append(v)
        log(f"{method.label}, seed {draw.seed}: AR {v['ar_top1']:.1f}  RI {v['ri_top1']:.1f}"
            + (f"  AR retrained {v['ar_retrained_top1']:.1f}  RI adaptive {v['ri_adaptive_top1']:.1f}"
               if settings.retrain else "")
            + f"  linkage {v['linkage']:.1f}  ({time.monotonic() - started:.0f} s)")
    return per_seed


def method_row(method: EvalMethod, per_seed: Sequence[dict]) -> EvaluationRow:
    """One row of the results: every metric as mean ± std over the seeds, plus the per-seed values."""
    return EvaluationRow(method=method.method, beta=method.beta, label=method.label, checkpoint=method.checkpoint,
                         setting=method.setting, training_seed=method.training_seed,
                         metrics={key: Summary(**summarize([s[key] for s in per_seed])) for key in per_seed[0]},
                         seeds=tuple(dict(s) for s in per_seed))


def chance_levels(data: TrainingData) -> dict[str, float]:
    return {"action": 100.0 / len(data.action_labels), "subject": 100.0 / len(data.subject_labels),
            "linkage": 100.0 / len(data.test)}
