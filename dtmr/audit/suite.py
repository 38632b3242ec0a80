"""`dtmr audit`: one release against the attacker suite (issue 17 part 3; docs/audit.md).

For every attacker (SGN, the temporal-conv network, bone lengths) and fold, two forms:
- **raw-trained**: trained on the raw clips of the fold's training part (the raw clips are `RAW`'s clips at
  the key's source indices, labelled with the key's subjects), tested on the released clips of the test
  part: a recognizer deployed before the release;
- **adaptive**: trained on the released clips of the training part, labelled through the key, tested on the
  released clips of the test part: an attacker who has some labelled clips of the release's people.
Linkage: each released test clip against every raw clip, by embedding nearest neighbour (cosine, the
raw-trained TCN's pooled features, or SGN's when the TCN is not run) and by frame count. The metadata scan
(`metadata.scan_metadata`) comes first in the results. The worst case is the attacker and form with the
highest mean accuracy; a clip's risk is the probability it gives the clip's true subject.

Utility, beside the privacy figures, in the attackers' two forms: the action recognition a deployed
recognizer keeps on the release (a TCN trained on the raw clips of each fold's training part with their
action labels, cached like the raw-trained attackers, so every release of a data set is read by the same
models), and a recognizer retrained on the release (the same TCN trained on the released clips of the
training part: whether the action is still in the motion for a model that adapts to it, the "retrained AR"
of `dtmr evaluate`). Both are tested on the released clips of the test part; a raw release gives the ceiling
the other releases are compared with.

Resuming: each (attacker, form, fold) result is a part file (store.py) reused when its settings match;
raw-trained attackers live in a cache shared by the audits of one data set.

Parallel runs: those cells (and the utility's folds) are independent; with `workers` the ones without a
part are computed by worker processes (dtmr/parallel.py), each cell seeded from its key alone, so
audit.json is the one-process run's (tests/audit/test_parallel_audit.py).
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from ..attacker_names import ATTACKER_NAMES
from ..attackers import (
    ATTACKERS,
    DEFAULT_EPOCHS,
    LEARNED,
    SIDE_CHANNELS,
    attacker_family,
    load_attacker,
    make_attacker,
)
from ..data.clip import Clip
from ..errors import DtmrError
from ..io.atomic import atomic_write
from ..parallel import Workers, run_cells, seed_cell
from ..skeleton.geometry import motion_amplitude
from .audit_json import AUDIT_FILE, AUDIT_FORMAT, AUDIT_VERSION, UTILITY_ENTRIES, attacker_file_key, default_out
from .linkage import frame_count_linkage, nearest_source, tied_linkage
from .splits import AuditSplit, audit_split
from .store import STORE_VERSION, PartStore, cache_path, clip_crcs, digest
from .summary import ABOVE_CHANCE, clip_risks, risk_distribution, scored, subject_risks

FORMS = ("raw-trained", "adaptive", "raw-known")
#: the ensemble's name in audit.json: the mean of the learned attackers' probabilities, per form and fold
ENSEMBLE = "ensemble"

#: the attackers whose raw-trained form gives the linkage embedding, in order of preference
EMBEDDERS = ("tcn", "sgn")
#: the recognizer of the utility figures (action recognition kept), its part files' name, and its forms: trained
#: on the raw clips (a deployed recognizer) or retrained on the release
UTILITY_ATTACKER = "tcn"
UTILITY_PART = "tcn-action"
UTILITY_FORMS = ("raw-trained", "retrained")


@dataclass
class AuditSettings:
    attackers: tuple[str, ...] = ATTACKER_NAMES
    #: one number for every neural attacker, or per attacker ({"tcn": 30}); None or a missing name: that
    #: attacker's default (attackers.DEFAULT_EPOCHS)
    epochs: int | dict[str, int] | None = None
    seed: int = 0
    device: str = "cpu"
    split: str | None = None
    folds: int | None = None
    cache: str | Path | None = None  # None: DIR/../.audit-cache
    #: the best raw re-identification known for this data (%, `--reference`): the calibration warns below it
    reference: float | None = None
    #: the action recognizers of the utility figures (`--no-utility` leaves them out: a quick privacy screen)
    utility: bool = True

    def epochs_of(self, name: str) -> int | None:
        if DEFAULT_EPOCHS[name] is None:
            return None
        chosen = self.epochs.get(name) if isinstance(self.epochs, dict) else self.epochs
        return chosen or DEFAULT_EPOCHS[name]


@dataclass
class _Inputs:
    """Everything the attackers see, read once."""

    release_path: str
    released: list[Clip]
    ids: list[str]
    key: object
    raw_path: str
    raw: list[Clip]
    subjects: np.ndarray  # (N,) per released clip
    sources: np.ndarray  # (N,) index of each released clip's source among the raw clips
    attributes: dict = field(default_factory=dict)
    raw_action_names: list[str] | None = None  # the raw library's, as `dtmr anonymize` passed them

    def raw_sources(self, indices: np.ndarray) -> list[Clip]:
        return [self.raw[self.sources[i]] for i in indices]

    def raw_subjects(self) -> np.ndarray:
        """(R,) the subject of every raw clip: the key's for the release's sources, else the raw library's
        own (-1 unknown)."""
        out = np.array([-1 if c.subject is None else int(c.subject) for c in self.raw], dtype=np.int64)
        out[self.sources] = self.subjects
        return out


def _read_inputs(release: str | Path, key: str | Path, raw: str | Path) -> _Inputs:
    from ..io.sources import open_clip_source
    from ..release.release import open_release, release_attributes

    library, release_key = open_release(release, key)
    with library:
        released = library.read_all()
        ids = [str(x) for x in library.column("sample_name").tolist()]
    source = open_clip_source(raw)
    try:
        raw_clips = source.read_all() if hasattr(source, "read_all") else [source.read(i) for i in range(len(source))]
        raw_action_names = source.action_names
    finally:
        source.close()
    sources = release_key.source_indices()
    outside = np.flatnonzero((sources < 0) | (sources >= len(raw_clips)))
    if outside.size:
        raise DtmrError(f"{key}: clip {ids[outside[0]]!r} comes from source clip {sources[outside[0]]}, but "
                        f"{raw} holds {len(raw_clips)} clips (is it the key's source, {release_key.source_file}?)")
    frames = np.array([raw_clips[s].num_frames for s in sources])
    expected = release_key.column("source_frames")
    wrong = np.flatnonzero(frames != expected)
    if wrong.size:
        i = wrong[0]
        raise DtmrError(f"{raw} does not hold the sources of {key}: source clip {sources[i]} has {frames[i]} "
                        f"frames, the key says {expected[i]} ({wrong.size} clips differ)")
    return _Inputs(str(release), released, ids, release_key, str(raw), raw_clips, release_key.subjects(), sources,
                   release_attributes(release), raw_action_names)


def linkage_embedder(attackers: tuple[str, ...]) -> str | None:
    """The attacker whose raw-trained form gives the linkage embedding (EMBEDDERS), None when none is run."""
    return next((n for n in EMBEDDERS if n in attackers), None)


def _scored_predictions(proba: np.ndarray, classes, truth: np.ndarray) -> dict:
    """accuracy (%), each clip's true-subject probability and whether its top class is the truth."""
    index = {c: j for j, c in enumerate(classes)}
    columns = [index.get(int(s)) for s in truth]
    true_p = [float(proba[r, c]) if c is not None else 0.0 for r, c in enumerate(columns)]
    correct = [c is not None and int(np.argmax(proba[r])) == c for r, c in enumerate(columns)]
    return {"accuracy": 100.0 * float(np.mean(correct)) if correct else 0.0, "true_probability": true_p,
            "correct": correct}


class AuditRun:
    def __init__(self, inputs: _Inputs, split: AuditSplit, out: Path, settings: AuditSettings,
                 log: Callable[[str], None]):
        self.inputs, self.split, self.out, self.settings, self.log = inputs, split, out, settings, log
        self.parts = PartStore(out)
        self.cache = Path(settings.cache) if settings.cache is not None else out.parent / ".audit-cache"
        self.raw_crcs = clip_crcs(inputs.raw)
        self.release_digest = digest({"token": getattr(inputs.key, "release_token", ""),
                                      "crc": inputs.key.column("joints_crc32"), "subjects": inputs.subjects})
        self.embedder = linkage_embedder(settings.attackers)

    def _settings(self, name: str, form: str, k: int) -> dict:
        fold = self.split.folds[k]
        linkage = (form == "raw-trained" and name == self.embedder) or (form == "raw-known" and name in SIDE_CHANNELS)
        return {"version": STORE_VERSION, "attacker": name, "form": form, "fold": k,
                "epochs": self.settings.epochs_of(name), "seed": self.settings.seed, "release": self.release_digest,
                "train": digest(fold.train), "test": digest(fold.test), "linkage": linkage}

    def cell(self, key: tuple) -> dict:
        """The part of a cell: ("attack", attacker, form, fold) or ("utility", form, fold)."""
        seed_cell("audit", self.settings.seed, *key)
        return self.action_recognition(*key[1:]) if key[0] == "utility" else self.result(*key[1:])

    def stored(self, key: tuple) -> dict | None:
        """A cell's part when a run made it before with these settings (and, for fold 0 of an attacker,
        its model file is there); else None."""
        if key[0] == "utility":
            _, form, k = key
            return self.parts.load(UTILITY_PART, form, k, self._utility_settings(form, k))
        _, name, form, k = key
        model_file = self._model_file(name, form, k)
        part = self.parts.load(name, form, k, self._settings(name, form, k))
        return part if part is not None and (model_file is None or model_file.is_file()) else None

    def _model_file(self, name: str, form: str, k: int) -> Path | None:
        return self.out / "attackers" / f"{name}_{form}.pt" if k == 0 else None

    def _utility_settings(self, form: str, k: int) -> dict:
        return {**self._settings(UTILITY_ATTACKER, form, k), "task": "action"}

    def result(self, name: str, form: str, k: int) -> dict:
        settings = self._settings(name, form, k)
        model_file = self._model_file(name, form, k)
        part = self.stored(("attack", name, form, k))
        if part is not None:
            self.log(f"{name} {form}, fold {k + 1}/{len(self.split.folds)}: {part['accuracy']:.1f} % (done before)")
            return part
        started = time.monotonic()
        fold, inp = self.split.folds[k], self.inputs
        labels = inp.subjects[fold.train]
        if form == "raw-trained":
            attacker = self.raw_trained(name, fold.train, labels)
        elif form == "raw-known":
            attacker = self.raw_known(name)
        else:
            attacker = make_attacker(name, self.settings.epochs_of(name), self.settings.device)
            attacker.fit([inp.released[i] for i in fold.train], labels.tolist(), self.settings.seed)
        if model_file is not None:
            attacker.save(model_file)
        test_clips = [inp.released[i] for i in fold.test]
        proba = attacker.predict_proba(test_clips)
        result = {**_scored_predictions(proba, attacker.classes, inp.subjects[fold.test]), "test": fold.test.tolist()}
        if name in LEARNED:  # the ensemble averages these
            result.update(classes=[int(c) for c in attacker.classes], proba=np.round(proba, 5).tolist())
        if form == "raw-trained":  # calibration: the same attacker on the raw sources of the test clips
            raw_proba = attacker.predict_proba(inp.raw_sources(fold.test))
            result["raw_accuracy"] = _scored_predictions(raw_proba, attacker.classes,
                                                         inp.subjects[fold.test])["accuracy"]
        if settings["linkage"]:
            sources = inp.sources[fold.test]
            if getattr(attacker, "metric", "cosine") == "euclidean":
                result["linkage"] = 100.0 * float(tied_linkage(attacker.embed(test_clips), attacker.embed(inp.raw),
                                                                sources, self.raw_crcs).mean())
            else:
                linked = nearest_source(attacker.embed(test_clips), attacker.embed(inp.raw), sources, self.raw_crcs)
                result["linkage"] = 100.0 * float(linked.mean())
        result["seconds"] = round(time.monotonic() - started, 1)
        self.log(f"{name} {form}, fold {k + 1}/{len(self.split.folds)}: {result['accuracy']:.1f} % "
                 f"({result['seconds']:.0f} s)")
        return self.parts.save(name, form, k, settings, result)

    def action_recognition(self, form: str, k: int) -> dict:
        """Fold k's utility part of `form`: top-1 % of the action TCN, trained on the raw clips of the fold's
        training part (raw-trained) or on their releases (retrained), on the released test clips."""
        fold, inp = self.split.folds[k], self.inputs
        settings = self._utility_settings(form, k)
        part = self.stored(("utility", form, k))
        if part is not None:
            self.log(f"action recognition ({form}), fold {k + 1}/{len(self.split.folds)}: {part['accuracy']:.1f} % "
                     "(done before)")
            return part
        started = time.monotonic()
        actions = inp.key.column("action")
        if form == "raw-trained":
            model = self.raw_trained(UTILITY_ATTACKER, fold.train, actions[fold.train])
        else:
            model = make_attacker(UTILITY_ATTACKER, self.settings.epochs_of(UTILITY_ATTACKER), self.settings.device)
            model.fit([inp.released[i] for i in fold.train], actions[fold.train].tolist(), self.settings.seed)
        proba = model.predict_proba([inp.released[i] for i in fold.test])
        predicted = np.asarray(model.classes)[np.argmax(proba, axis=1)]
        accuracy = 100.0 * float(np.mean(predicted == actions[fold.test]))
        result = {"accuracy": accuracy, "seconds": round(time.monotonic() - started, 1)}
        self.log(f"action recognition ({form} {UTILITY_ATTACKER}), fold {k + 1}/{len(self.split.folds)}: "
                 f"{accuracy:.1f} % ({result['seconds']:.0f} s)")
        return self.parts.save(UTILITY_PART, form, k, settings, result)

    def raw_trained(self, name: str, train: np.ndarray, labels: np.ndarray):
        """The attacker trained on the raw sources of `train`, from the cache or trained into it."""
        sources = self.inputs.sources[train]
        return self._cached(name, sources, labels)

    def raw_known(self, name: str):
        """The attacker trained on every raw clip of known subject (the raw data set is public), from the cache
        or trained into it: the raw-known form, which names a released clip's subject by finding its source."""
        subjects = self.inputs.raw_subjects()
        known = np.flatnonzero(subjects >= 0)
        return self._cached(name, known, subjects[known])

    def _cached(self, name: str, raw_indices: np.ndarray, labels: np.ndarray):
        path = cache_path(self.cache, name, self.settings.epochs_of(name), self.settings.seed,
                          self.raw_crcs[raw_indices], labels)
        if path.is_file():
            try:
                return load_attacker(path, self.settings.device)
            except DtmrError:
                self.log(f"{path}: unreadable, training it again")
        attacker = make_attacker(name, self.settings.epochs_of(name), self.settings.device)
        attacker.fit([self.inputs.raw[i] for i in raw_indices], labels.tolist(), self.settings.seed)
        attacker.save(path)
        return attacker


def _describe(folds: int, key: tuple) -> str:
    if key[0] == "utility":
        return f"action recognition ({UTILITY_ATTACKER} {key[1]}), fold {key[2] + 1}/{folds}"
    _, name, form, k = key
    return f"{name} {form}, fold {k + 1}/{folds}"


def _worker_run(release: str, key: str, raw: str, out: str, settings: AuditSettings, device: str) -> AuditRun:
    """A worker's AuditRun: the inputs read again, the attackers on the worker's `device`."""
    from dataclasses import replace

    settings = replace(settings, device=device)
    inputs = _read_inputs(release, key, raw)
    return AuditRun(inputs, _split(inputs, settings), Path(out), settings, lambda m: None)


def _worker_cell(run: AuditRun, key: tuple, log: Callable[[str], None]) -> dict:
    run.log = log
    return run.cell(key)


def _split(inputs: _Inputs, settings: AuditSettings) -> AuditSplit:
    return audit_split(inputs.subjects, inputs.sources,
                       {n: inputs.key.column(n) for n in ("action", "view", "repetition")},
                       split=settings.split, folds=settings.folds, seed=settings.seed)


def run_audit(release: str | Path, key: str | Path, raw: str | Path, out: str | Path | None = None,
              settings: AuditSettings | None = None, command: str = "", log: Callable[[str], None] = print,
              workers: Workers | None = None, partners: str | Path | None = None) -> dict:
    """Audit `release` (with its `key`) against the raw clips `raw`; writes OUT/audit.json (+ reports).
    With `workers`, the cells without a part are computed in that many processes; with `partners` (the
    release's k-same model file), the partners' exposure is measured too (partners.py)."""
    from ..io.outputs import check_output
    from .metadata import scan_metadata
    from .partners import check_partner_model, partner_exposure
    from .report import write_reports

    settings = settings or AuditSettings()
    unknown = [a for a in settings.attackers if a not in ATTACKERS]
    if unknown or not settings.attackers:
        raise DtmrError(f"unknown attacker(s) {', '.join(unknown) or '(none given)'} (known: {', '.join(ATTACKERS)})")
    out = check_output(default_out(release) if out is None else out, kind="audit", folder=True,
                       inputs=[release, key, raw])
    inputs = _read_inputs(release, key, raw)
    partner_model = None if partners is None else \
        check_partner_model(partners, inputs.key, release, linkage_embedder(settings.attackers))
    split = _split(inputs, settings)
    out.mkdir(parents=True, exist_ok=True)
    log(f"{len(inputs.released)} released clips of {np.unique(inputs.subjects).size} subjects, "
        f"{len(inputs.raw)} raw clips; split: {split.kind}, {len(split.folds)} fold(s)")
    from ..io.sources import open_clip_source

    raw_source = open_clip_source(raw)
    try:
        findings = scan_metadata(release, inputs.key, raw_source)
    finally:
        raw_source.close()
    for f in findings:
        log(f"metadata {f['severity']}: {f['field']}: {f['problem']} ({f['detail']})")
    run = AuditRun(inputs, split, out, settings, log)
    folds = range(len(split.folds))
    keys = [("attack", name, form, k) for name in settings.attackers for form in FORMS for k in folds]
    if settings.utility and (inputs.key.column("action") >= 0).all():
        keys += [("utility", form, k) for form in UTILITY_FORMS for k in folds]
    computed = {}
    pending = [k for k in keys if run.stored(k) is None]
    if workers is not None and workers.parallel and pending:
        log(f"{len(pending)} cells over {workers.count} worker processes ({workers.threads} torch thread(s) each)")
        computed = run_cells(pending, _worker_cell, _worker_run, (str(release), str(key), str(raw), str(out), settings),
                             workers=workers.count, devices=workers.devices, threads=workers.threads, log=log,
                             describe=partial(_describe, len(split.folds)))
    parts = {k: computed[k] if k in computed else run.cell(k) for k in keys}
    results = {(name, form): [parts[("attack", name, form, k)] for k in folds]
               for name in settings.attackers for form in FORMS}
    utility = {form: [parts[("utility", form, k)] for k in folds] for form in UTILITY_FORMS} \
        if ("utility", UTILITY_FORMS[0], 0) in parts else None
    audit = assemble(inputs, split, settings, results, findings, run.embedder, command, utility)
    if partners is not None:
        audit["partners"] = partner_exposure(run, partner_model, log)
    with atomic_write(out / AUDIT_FILE, suffix=".json") as tmp:
        tmp.write_text(json.dumps(audit, indent=1) + "\n")
    write_reports(audit, out)
    return audit


def assemble(inputs: _Inputs, split: AuditSplit, settings: AuditSettings, results: dict, findings: list[dict],
             embedder: str | None, command: str, utility: dict[str, list[dict]] | None = None) -> dict:
    """audit.json's content (contract §3) from the per-fold results (and the utility parts of each form, when
    the key knows every clip's action)."""
    subjects = np.unique(inputs.subjects)
    chance = 100.0 / len(subjects)
    linkage_chance = 100.0 / len(inputs.raw)
    results = {**results, **ensemble_parts(results, inputs.subjects)}
    attackers = []
    for (name, form), parts in results.items():
        entry = {"name": name, "family": ENSEMBLE_FAMILY if name == ENSEMBLE else attacker_family(name), "form": form,
                 "epochs": settings.epochs_of(name) if name in ATTACKERS else None,
                 "seconds": round(sum(p.get("seconds", 0.0) for p in parts), 1)}
        attackers.append(scored(entry, [p["accuracy"] for p in parts], chance))
    linkage = []
    if embedder is not None:
        linkage.append(scored({"name": "embedding", "embedder": f"{embedder} (raw-trained)"},
                              [p["linkage"] for p in results[(embedder, "raw-trained")]], linkage_chance))
    for name in settings.attackers:
        if name in SIDE_CHANNELS:
            linkage.append(scored({"name": name, "embedder": f"{name} (nearest raw clip, ties shared)"},
                                  [p["linkage"] for p in results[(name, "raw-known")]], linkage_chance))
    released_frames = np.array([c.num_frames for c in inputs.released])
    raw_frames = np.array([c.num_frames for c in inputs.raw])
    unique, expected = zip(*(frame_count_linkage(released_frames[f.test], raw_frames, inputs.sources[f.test])
                             for f in split.folds))
    frame_entry = scored({"name": "frame count"}, unique, linkage_chance)
    frame_entry["expected"] = scored({}, expected, linkage_chance)["accuracy"]
    linkage.append(frame_entry)
    # a tie goes to the adaptive form: the attacker that learns from the release is the one that matters
    worst = max(attackers, key=lambda a: (a["accuracy"]["mean"], a["form"] == "adaptive"))
    calibration = calibrate(results, chance, settings.reference)
    clips = clip_risks(results[(worst["name"], worst["form"])], inputs.ids, inputs.subjects)
    attrs = inputs.attributes
    key = inputs.key
    utility_entries = None if utility is None else {
        UTILITY_ENTRIES[form]: _action_recognition(inputs, settings, form, cells) for form, cells in utility.items()}
    utility_entries = {**(utility_entries or {}), "motion_amplitude_kept": amplitude_kept(inputs)}
    return {
        "format": AUDIT_FORMAT, "version": AUDIT_VERSION, "command": command,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "release": {"file": Path(inputs.release_path).name, "clips": len(inputs.released),
                    "subjects": int(len(subjects)), "method": attrs.get("method", key.method),
                    "beta": attrs.get("beta", key.beta), "model": attrs.get("model", key.model),
                    "provenance": attrs.get("provenance", "none")},
        "raw": {"file": Path(inputs.raw_path).name, "clips": len(inputs.raw)},
        "split": split.describe(),
        "settings": {"attackers": list(settings.attackers), "seed": settings.seed, "device": str(settings.device),
                     "reference": settings.reference,
                     "epochs": {n: settings.epochs_of(n) for n in settings.attackers}},
        "chance": {"subject": round(chance, 4), "linkage": round(linkage_chance, 4)},
        "metadata": {"passed": not any(f.get("severity") == "fail" for f in findings), "findings": findings},
        "calibration": calibration,
        "attackers": attackers,
        "linkage": linkage,
        "worst": {"name": worst["name"], "form": worst["form"], "accuracy": worst["accuracy"]["mean"],
                  "times_chance": worst["times_chance"]},
        "subjects": subject_risks(clips),
        "clips": clips,
        "risk": risk_distribution(clips),
        "attacker_files": {attacker_file_key(n, form): f"attackers/{n}_{form}.pt" for n in settings.attackers
                           for form in FORMS},
        "utility": utility_entries,
    }


ENSEMBLE_FAMILY = "ensemble (mean probability of the learned attackers)"


def ensemble_parts(results: dict, subjects: np.ndarray) -> dict:
    """{(ENSEMBLE, form): per-fold parts} from the learned attackers' stored probabilities: their mean per
    clip, scored like any attacker. Only with at least two learned attackers run (and their probabilities
    stored: parts of an older audit have none)."""
    out = {}
    for form in FORMS:
        members = [results[(n, form)] for n in LEARNED if (n, form) in results]
        if len(members) < 2 or not all("proba" in p for parts in members for p in parts):
            continue
        folds = []
        for cells in zip(*members):
            classes = cells[0]["classes"]
            if any(c["classes"] != classes for c in cells):
                break
            proba = np.mean([np.asarray(c["proba"]) for c in cells], axis=0)
            test = np.asarray(cells[0]["test"])
            folds.append({**_scored_predictions(proba, classes, subjects[test]), "test": test.tolist(),
                          "seconds": 0.0})
        else:
            out[(ENSEMBLE, form)] = folds
    return out


def calibrate(results: dict, chance: float, reference: float | None) -> dict:
    """Each attacker's re-identification of the *raw* sources of the test clips (its raw-trained form),
    the suite's best, and a warning when the best is below what a plain attacker reaches on raw data: 3 ×
    chance, or the stated `reference` (%, the best raw figure known for this data, docs/audit.md)."""
    rows = []
    for (name, form), parts in results.items():
        if form == "raw-trained" and all("raw_accuracy" in p for p in parts):
            rows.append(scored({"name": name}, [p["raw_accuracy"] for p in parts], chance))
    best = max(rows, key=lambda r: r["accuracy"]["mean"]) if rows else None
    floor = ABOVE_CHANCE * chance
    target = {"accuracy": round(floor, 2), "why": f"{ABOVE_CHANCE:g} × chance"}
    if reference is not None and reference > floor:
        target = {"accuracy": round(float(reference), 2), "why": "the best raw re-identification known for this "
                  "data (--reference)"}
    warning = None
    if best is None:
        warning = "no attacker was tested on the raw clips: the suite's strength is unknown"
    elif best["accuracy"]["mean"] < target["accuracy"]:
        warning = (f"the suite's best attacker re-identifies {best['accuracy']['mean']:.1f} % of the raw clips, "
                   f"below {target['accuracy']:.1f} % ({target['why']}): low figures on the release may only "
                   "mean weak attackers")
    return {"raw": rows, "best": None if best is None else {"name": best["name"], "accuracy": best["accuracy"]["mean"]},
            "reference": target, "warning": warning}


def amplitude_kept(inputs: _Inputs) -> dict:
    """How much of its source's motion each released clip keeps (`motion_amplitude`, independent of the body
    and the placement): the median and quartiles over clips of released / source amplitude. An average of
    several people (k-same) shrinks the motion, a loss no recognizer's accuracy shows."""
    ratios = []
    for clip, source in zip(inputs.released, inputs.raw_sources(np.arange(len(inputs.released)))):
        base = motion_amplitude(source.joints, source.topology)
        if np.isfinite(base) and base > 0:
            ratios.append(motion_amplitude(clip.joints, clip.topology) / base)
    ratios = np.asarray([r for r in ratios if np.isfinite(r)])
    if not ratios.size:
        return {"median": None, "quartiles": None, "clips": 0}
    q1, median, q3 = np.percentile(ratios, [25, 50, 75])
    return {"median": round(float(median), 3), "quartiles": [round(float(q1), 3), round(float(q3), 3)],
            "clips": int(ratios.size)}


def _action_recognition(inputs: _Inputs, settings: AuditSettings, form: str, utility: list[dict]) -> dict:
    """A utility entry: accuracy over the folds against chance (no verdict: higher is better here)."""
    chance = 100.0 / len(np.unique(inputs.key.column("action")))
    entry = scored({"name": UTILITY_ATTACKER, "form": form, "epochs": settings.epochs_of(UTILITY_ATTACKER)},
                   [u["accuracy"] for u in utility], chance)
    entry.pop("verdict")
    return entry
