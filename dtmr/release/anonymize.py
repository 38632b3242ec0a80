"""Anonymizing a whole clip source into a release and its key, resumably (`dtmr anonymize`).

The release (`OUT.h5`) holds the anonymized joints, action, fps and the method, and nothing that identifies a
person or a source clip: opaque ids `R000001`... in an order drawn from `secrets` (never from the seed), no
subject, source name, path or index, view and repetition only when kept. The key (`OUT.key.json`, mode 0600)
maps each id back to its source (layouts in docs/io.md). `with_provenance` writes instead the internal,
un-scrubbed library of experiments (source order, source names, provenance in `extra`), marked
`provenance = "included"`, and still writes the key.

Resuming: clips are processed in chunks of the release order. Each finished chunk is written atomically to
`OUT.h5.parts/part-NNNNN.h5`; `run.json` there records the settings, the drawn order and the release token,
so a rerun with the same arguments skips the parts already written and gives the same release, byte for
byte in its joints. A rerun with other settings is refused while a part exists; a parts folder without any
finished part is simply reused. A run holds an exclusive lock on the parts folder: a second run on the same
output stops at once ("another run is writing OUT"). The key is renamed into place before the release, and
the parts folder is removed after both, so a kill at any moment leaves either no release or a release with
its key, and the rerun completes.

Several processes: `workers` > 1 starts that many processes on this machine, and under `torchrun` every rank
takes part; chunk k goes to rank k mod N and one process merges (dtmr/release/distributed.py, docs/scale.md).

References: each clip gets a reference drawn uniformly from the reference source's clips of another subject
(any other clip when subjects are unknown), from a generator seeded by (seed, source index), so the draw does
not depend on chunking, on the order or on where a run resumed. raw and noise use no reference.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from ..data.clip import Clip
from ..data.reference_pool import ReferencePool
from ..errors import DtmrError
from ..eval.methods import PARAMETER_FREE, EvalMethod
from ..io.atomic import atomic_write
from ..io.library import JOINTS_CRC, ClipLibrary
from ..io.outputs import check_output
from ..io.sources import ClipSource, open_clip_source
from ..skeleton import resample
from .key import KeyEntry, ReleaseKey, key_path_for, write_key
from .release import RELEASE_FORMAT, RELEASE_VERSION

CHUNK = 64
PARTS_SUFFIX = ".parts"
RUN_STATE = "run.json"
LOCK = "lock"
#: the identifying columns `keep` may leave in a release
KEEPABLE = ("view", "repetition")
#: the longest `length` accepted: 10^4 frames of 25 joints are 3 MB a clip
MAX_LENGTH = 10_000
#: what a `with_provenance` build leaves in, for its `kept` attribute
PROVENANCE_KEPT = ("subject", "sample_name", "source_file", "view", "repetition", "extra")


@dataclass(frozen=True)
class ReleaseOptions:
    """What the release leaves in: `keep` (of KEEPABLE), `length` (None keeps each clip's own), provenance."""

    keep: tuple[str, ...] = ()
    length: int | None = None
    with_provenance: bool = False

    def __post_init__(self) -> None:
        unknown = sorted(set(self.keep) - set(KEEPABLE))
        if unknown:
            raise DtmrError(f"--keep: cannot keep {', '.join(unknown)} (only {', '.join(KEEPABLE)})")
        object.__setattr__(self, "keep", tuple(sorted(set(self.keep))))
        if self.length is not None and not (isinstance(self.length, int) and 2 <= self.length <= MAX_LENGTH):
            raise DtmrError(f"--length must be 'keep' or a frame count from 2 to {MAX_LENGTH}, got {self.length!r}")


def parse_length(text: str) -> int | None:
    """`--length`: "keep" -> None, else the frame count."""
    if text.strip().lower() == "keep":
        return None
    try:
        return int(text)
    except ValueError:
        raise DtmrError(f"--length must be 'keep' or a frame count, got {text!r}") from None


def parse_keep(text: str) -> tuple[str, ...]:
    """`--keep view,repetition` -> ("repetition", "view")."""
    return tuple(sorted({part.strip() for part in text.split(",") if part.strip()}))


def reference_index(seed: int, index: int, source_subject: int | None, reference_subjects: np.ndarray,
                    same_source: bool) -> int:
    """The reference of clip `index`: `ReferencePool.draw_keyed`, keyed by the clip's index."""
    pick = ReferencePool(reference_subjects).draw_keyed(seed, index, source_subject, own=index if same_source else None)
    if pick is None:
        known = source_subject is not None and source_subject >= 0
        raise DtmrError(f"no reference for clip {index}: "
                        + ("no reference clip of another known subject" if known else "no other reference clip"))
    return pick


class _Method:
    """A checkpoint (through `Anonymizer`) or a parameter-free method of dtmr/eval/methods.py, behind one call."""

    def __init__(self, model: str | Path | None, method: str | None, device: str | None, topology: str):
        if (model is None) == (method is None):
            raise DtmrError("give a model checkpoint or a parameter-free method, not both")
        if model is not None:
            from ..models.anonymizer import Anonymizer

            self.anonymizer = Anonymizer.from_checkpoint(model, device=device)
            self.name = self.anonymizer.method
            self.beta: float | None = self.anonymizer.beta
            self.model = Path(model).name
            self.model_sha256 = _sha256(model)
            self.topology = self.anonymizer.topology.name
            self.uses_references = True
        else:
            if method not in PARAMETER_FREE:
                raise DtmrError(f"unknown method {method!r} (parameter-free methods: {', '.join(PARAMETER_FREE)})")
            self.anonymizer = None
            self.name, self.beta, self.model, self.model_sha256 = method, None, method, ""
            self.topology = topology
            self.uses_references = method == "naive"

    def run(self, clips: Sequence[Clip], references: Sequence[Clip], indices: Sequence[int], seed: int) -> list[Clip]:
        if self.anonymizer is not None:
            return self.anonymizer.anonymize_batch(clips, references)
        method = EvalMethod(self.name)
        # one call per clip, seeded by its source index, so the noise does not depend on the release order
        return [method.anonymize([clip], [ref], _clip_seed(seed, i))[0]
                for clip, ref, i in zip(clips, references, indices)]


@dataclass(frozen=True)
class RunSpec:
    """The arguments of one run, picklable: every process of a distributed run reopens the run from it."""

    input_path: str
    output: str
    model: str | None
    method: str | None
    references: str | None
    seed: int
    device: str | None
    options: ReleaseOptions
    chunk: int

    @property
    def parts(self) -> Path:
        return parts_path(self.output)


def parts_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + PARTS_SUFFIX)


def anonymize_source(input_path: str | Path, output: str | Path, *, model: str | Path | None = None,
                     method: str | None = None, references: str | Path | None = None, seed: int = 0,
                     device: str | None = None, options: ReleaseOptions = ReleaseOptions(),
                     overwrite: bool = False, progress: Callable[[int, int], None] | None = None,
                     chunk: int | None = None, workers: int = 1) -> Path:
    """Anonymize every clip of `input_path` with the checkpoint `model` or the parameter-free `method` into the
    release `output` and its key `key_path_for(output)`; returns `output`.

    `chunk` clips make one part (default CHUNK); `workers` > 1 writes the parts in that many processes, and
    under `torchrun` (WORLD_SIZE > 1) this call is one rank of the run (dtmr/release/distributed.py)."""
    from . import distributed

    output, key_path = Path(output), key_path_for(output)
    inputs = [p for p in (input_path, references, model) if p is not None]
    check_output(output, kind="clip-library", inputs=inputs, overwrite=overwrite)
    check_output(key_path, kind="release-key", inputs=inputs, overwrite=overwrite)
    chunk = CHUNK if chunk is None else chunk
    if not (isinstance(chunk, int) and chunk >= 1):
        raise DtmrError(f"--chunk must be a clip count of at least 1, got {chunk!r}")
    world = distributed.torchrun_world_size()
    if workers < 1:
        raise DtmrError(f"--workers must be at least 1, got {workers}")
    if workers > 1 and world > 1:
        raise DtmrError("--workers starts its own processes: under torchrun leave it out (every rank takes part)")
    spec = RunSpec(input_path=str(input_path), output=str(output), model=None if model is None else str(model),
                   method=method, references=None if references is None else str(references), seed=seed,
                   device=device, options=options, chunk=chunk)
    if world > 1:
        distributed.anonymize_rank(spec, progress)
        return output

    with contextlib.ExitStack() as stack:
        # the parent of workers only merges: its copy of the model stays on the CPU
        opened = open_run(spec, stack, "cpu" if workers > 1 else device)
        parts = spec.parts
        stack.enter_context(_locked(parts, output))
        state = _run_state(parts, opened.settings, opened.clips, options.with_provenance)
        job = opened.job(state["order"], parts)
        if workers > 1:
            distributed.run_workers(spec, job, workers, progress)
        else:
            job.write_parts(progress)
        _write_release(job, output, key_path, state["release_token"], options, opened.settings)
        shutil.rmtree(parts)
    return output


@dataclass
class OpenedRun:
    """The open sources, the method and the settings of a run (what `run.json` must match)."""

    spec: RunSpec
    source: ClipSource
    reference_source: ClipSource
    runner: _Method
    settings: dict

    @property
    def clips(self) -> int:
        return self.settings["clips"]

    def job(self, order: list[int], parts: Path) -> _Job:
        return _Job(self.source, self.reference_source, self.runner, self.spec.seed, order, parts, self.spec.chunk)


def open_run(spec: RunSpec, stack: contextlib.ExitStack, device: str | None) -> OpenedRun:
    """Open the run's sources (closed by `stack`) and its method on `device`."""
    source = open_clip_source(spec.input_path)
    stack.callback(source.close)
    reference_source = source
    if spec.references:
        reference_source = open_clip_source(spec.references)
        stack.callback(reference_source.close)
    runner = _Method(spec.model, spec.method, device, source.topology)
    n = len(source)
    if n == 0:
        raise DtmrError(f"{spec.input_path}: no clips to anonymize")
    options = spec.options
    settings = {"input": str(Path(spec.input_path).resolve()), "clips": n,
                "references": str(Path(spec.references).resolve()) if spec.references else None,
                "model": str(Path(spec.model).resolve()) if spec.model else None, "model_sha256": runner.model_sha256,
                "method": runner.name, "seed": spec.seed, "chunk": spec.chunk, "keep": list(options.keep),
                "length": options.length, "with_provenance": options.with_provenance}
    return OpenedRun(spec, source, reference_source, runner, settings)


@contextlib.contextmanager
def _locked(parts: Path, output: Path) -> Iterator[None]:
    """Hold an exclusive lock on the parts folder (created when missing) for the whole run.

    flock is released by the kernel when the process dies, so a killed run never blocks its rerun.
    """
    for _ in range(5):
        parts.mkdir(exist_ok=True)
        lock = parts / LOCK
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:  # a finishing run removed the folder between the two calls
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise DtmrError(f"another run is writing {output}; wait for it to finish") from None
            raise
        try:
            same = lock.exists() and os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # locked a lock file that a finishing run has just removed: start again
            os.close(fd)
            continue
        try:
            yield
        finally:
            os.close(fd)
        return
    raise DtmrError(f"another run is writing {output}; wait for it to finish")


def _run_state(parts: Path, settings: dict, n: int, source_order: bool) -> dict:
    """The run's settings, clip order and release token: read back when they match, drawn anew otherwise.

    Other settings are refused only when a finished part exists: an empty parts folder (left by a run that
    stopped before its first part, or by a wrong command) is not an unfinished run.
    """
    saved = saved_state(parts, settings, n)
    if saved is not None:
        return saved
    if any(parts.glob("part-*.h5")):
        raise DtmrError(f"{parts}: holds an unfinished run with other settings; remove it or rerun with the "
                        "same arguments")
    order = list(range(n)) if source_order else _shuffled(n)
    state = {"settings": settings, "release_token": uuid.uuid4().hex, "order": order}
    with atomic_write(parts / RUN_STATE) as tmp:
        tmp.write_text(json.dumps(state))
    return state


def saved_state(parts: Path, settings: dict, n: int) -> dict | None:
    """The `run.json` of `parts` when it was written for `settings`, else None."""
    saved = None
    with contextlib.suppress(OSError, ValueError):
        saved = json.loads((parts / RUN_STATE).read_text())
    return saved if _valid_state(saved, settings, n) else None


def _valid_state(saved: object, settings: dict, n: int) -> bool:
    if not isinstance(saved, dict) or saved.get("settings") != settings:
        return False
    order, token = saved.get("order"), saved.get("release_token")
    return (isinstance(token, str) and isinstance(order, list) and len(order) == n
            and all(isinstance(i, int) for i in order) and sorted(order) == list(range(n)))


def _shuffled(n: int) -> list[int]:
    """A uniform random permutation of range(n) from the OS's randomness (Fisher-Yates with `secrets`)."""
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = secrets.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


class _Job:
    """The anonymized clips of one run, chunk by chunk in release order, each part carrying its provenance."""

    def __init__(self, source: ClipSource, reference_source: ClipSource, runner: _Method, seed: int,
                 order: list[int], parts: Path, chunk: int):
        self.source, self.reference_source, self.runner = source, reference_source, runner
        self.seed, self.order, self.parts, self.chunk = seed, order, parts, chunk
        self.starts = range(0, len(order), chunk)

    def part(self, start: int) -> Path:
        return self.parts / f"part-{start // self.chunk:05d}.h5"

    def done(self) -> int:
        """Clips in the parts written so far (by any process)."""
        return sum(min(self.chunk, len(self.order) - start) for start in self.starts if self.part(start).is_file())

    def missing(self) -> list[Path]:
        return [self.part(start) for start in self.starts if not self.part(start).is_file()]

    def write_parts(self, progress: Callable[[int, int], None] | None, rank: int = 0, world: int = 1) -> None:
        """Write the missing parts of chunks k with k mod `world` == `rank` (all of them in one process).

        In one process `progress` gets the clips up to this chunk; in a shared run, those of every part
        written so far, by any process."""
        n = len(self.order)
        subjects = self.source.metadata_table()["subject"]
        reference_subjects = self.reference_source.metadata_table()["subject"]
        for k, start in enumerate(self.starts):
            if k % world != rank:
                continue
            stop = min(start + self.chunk, n)
            if not self.part(start).is_file():
                indices = self.order[start:stop]
                clips = [self.source.read(i) for i in indices]
                picks = [reference_index(self.seed, i, int(subjects[i]), reference_subjects,
                                         self.reference_source is self.source) if self.runner.uses_references
                         else -1 for i in indices]
                refs = [self.reference_source.read(j) if j >= 0 else c for c, j in zip(clips, picks)]
                released = self.runner.run(clips, refs, indices, self.seed)
                out = [r.replace(extra=self._provenance(r, c, i, ref if j >= 0 else None, j))
                       for r, c, i, ref, j in zip(released, clips, indices, refs, picks)]
                ClipLibrary.create(self.part(start), out, action_names=self.source.action_names).close()
            if progress is not None:
                progress(stop if world == 1 else self.done(), n)

    def _provenance(self, released: Clip, clip: Clip, index: int, reference: Clip | None, pick: int) -> dict:
        extra = dict(released.extra)
        extra.update(source_clip=clip.name, source_file=str(self.source.path), source_index=str(index),
                     source_frames=str(clip.num_frames), model=self.runner.model, method=self.runner.name,
                     seed=str(self.seed), reference_index=str(pick), reference_clip="", reference_subject="",
                     reference_file="")
        if reference is not None:
            extra.update(reference_clip=reference.name, reference_file=str(self.reference_source.path),
                         reference_subject="" if reference.subject is None else str(reference.subject))
        if self.runner.beta is None:
            extra.pop("beta", None)
        else:
            extra["beta"] = f"{self.runner.beta:g}"
        return extra

    def clips(self) -> Iterator[Clip]:
        for start in self.starts:
            with ClipLibrary(self.part(start)) as part:
                yield from part.read_all()


def _write_release(job: _Job, output: Path, key_path: Path, token: str, options: ReleaseOptions,
                   settings: dict) -> None:
    """Merge the parts into the release and write its key; the key is in place before the release is."""
    entries: list[dict] = []

    def released() -> Iterator[Clip]:
        for position, clip in enumerate(job.clips()):
            release_id = _release_id(position, clip, options)
            entries.append(_entry(clip, release_id))
            joints = clip.joints if options.length is None else resample(clip.joints, options.length)
            if options.with_provenance:
                yield clip.replace(joints=joints)
            else:
                yield Clip(joints=joints, topology=clip.topology, fps=clip.fps, action=clip.action,
                           view=clip.view if "view" in options.keep else None,
                           repetition=clip.repetition if "repetition" in options.keep else None,
                           sample_name=release_id)

    with atomic_write(output) as tmp:
        ClipLibrary.create(tmp, released(), topology=job.runner.topology,
                           action_names=job.source.action_names).close()
        with h5py.File(tmp, "r+") as h5:
            for name, value in _attributes(job.runner, token, options).items():
                h5.attrs[name] = value
            crc = h5["clips"][JOINTS_CRC][()]
        key = ReleaseKey(path=str(key_path), release_file=output.name, release_token=token,
                         source_file=settings["input"], reference_file=settings["references"] or settings["input"],
                         method=job.runner.name, beta=job.runner.beta, model=job.runner.model, seed=job.seed,
                         entries=[KeyEntry(**e, joints_crc32=int(c)) for e, c in zip(entries, crc)],
                         model_sha256=job.runner.model_sha256)
        write_key(key)


def _release_id(position: int, clip: Clip, options: ReleaseOptions) -> str:
    """`R000001`... by release position; a provenance build keeps the source's names."""
    return (clip.sample_name or "") if options.with_provenance else f"R{position + 1:06d}"


def _entry(clip: Clip, release_id: str) -> dict:
    """A key entry but its joint checksum, from a part clip (source metadata + provenance in `extra`)."""
    extra = clip.extra
    reference_subject = extra["reference_subject"]
    return {"release_id": release_id, "source_index": int(extra["source_index"]),
            "source_clip": extra["source_clip"], "subject": clip.subject, "action": clip.action, "view": clip.view,
            "repetition": clip.repetition, "source_frames": int(extra["source_frames"]),
            "reference_index": int(extra["reference_index"]), "reference_clip": extra["reference_clip"],
            "reference_subject": int(reference_subject) if reference_subject else None}


def _attributes(runner: _Method, token: str, options: ReleaseOptions) -> dict:
    attrs = {"release_format": RELEASE_FORMAT, "release_version": RELEASE_VERSION, "method": runner.name,
             "model": runner.model, "model_sha256": runner.model_sha256,
             "kept": json.dumps(list(PROVENANCE_KEPT if options.with_provenance else options.keep)),
             "length": "keep" if options.length is None else options.length,
             "provenance": "included" if options.with_provenance else "none", "release_token": token}
    if runner.beta is not None:
        attrs["beta"] = float(runner.beta)
    return attrs


def _clip_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def _sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
