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

Several processes: `workers` > 1 starts that many processes on this machine, which take the chunks in turn
while this one merges the parts as they come (dtmr/release/workers.py); under `torchrun` every rank takes
part, chunk k going to rank k mod N, and rank 0 merges (dtmr/release/distributed.py, docs/scale.md).

Model batches: `batch` clips at a time ("auto": 32 on the CPU, what fits in a GPU's free memory), never more
than a chunk; `precision` "bf16" and `cuda_graph` apply on a CUDA device (dtmr/models/inference.py). The
batch and the precision are settings of the run: a batch's arithmetic depends on its size.

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import DtmrError
from ..io.atomic import atomic_write
from ..io.outputs import check_output
from ..io.sources import ClipSource, open_clip_source
from .channels import RELEASE_FRAMES
from .chunks import Job, reference_index
from .key import key_path_for
from .merge import write_release
from .runner import AUTO, Method, MethodInfo

__all__ = ["CHUNK", "KEEPABLE", "MAX_LENGTH", "ReleaseOptions", "RunSpec", "anonymize_source", "parse_batch",
           "parse_keep", "parse_length", "reference_index"]

CHUNK = 64
PARTS_SUFFIX = ".parts"
RUN_STATE = "run.json"
LOCK = "lock"
#: the identifying columns `keep` may leave in a release
KEEPABLE = ("view", "repetition")
#: the longest `length` accepted: 10^4 frames of 25 joints are 3 MB a clip
MAX_LENGTH = 10_000


@dataclass(frozen=True)
class ReleaseOptions:
    """What the release leaves in: `keep` (of KEEPABLE), `length` (every clip's frame count; None keeps each
    clip's own), the source's placement in the room and its missing-joint pattern (both removed unless kept,
    dtmr/release/channels.py), provenance."""

    keep: tuple[str, ...] = ()
    length: int | None = RELEASE_FRAMES
    with_provenance: bool = False
    keep_placement: bool = False
    keep_missing: bool = False

    @property
    def channels_kept(self) -> tuple[str, ...]:
        """The source channels this release opts into keeping (the audit fails each)."""
        return tuple(name for name, kept in (("placement", self.keep_placement), ("length", self.length is None),
                                             ("missing joints", self.keep_missing)) if kept)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.keep) - set(KEEPABLE))
        if unknown:
            raise DtmrError(f"--keep: cannot keep {', '.join(unknown)} (only {', '.join(KEEPABLE)})")
        object.__setattr__(self, "keep", tuple(sorted(set(self.keep))))
        if self.length is not None and not (isinstance(self.length, int) and 2 <= self.length <= MAX_LENGTH):
            raise DtmrError(f"--length must be 'keep' or a frame count from 2 to {MAX_LENGTH}, got {self.length!r}")


def parse_length(text: str | None) -> int | None:
    """`--length`: None (not given) -> RELEASE_FRAMES, "keep" -> None, else the frame count."""
    if text is None:
        return RELEASE_FRAMES
    if text.strip().lower() == "keep":
        return None
    try:
        return int(text)
    except ValueError:
        raise DtmrError(f"--length must be 'keep' or a frame count, got {text!r}") from None


def parse_keep(text: str) -> tuple[str, ...]:
    """`--keep view,repetition` -> ("repetition", "view")."""
    return tuple(sorted({part.strip() for part in text.split(",") if part.strip()}))


def parse_batch(text: str) -> int | str:
    """`--batch`: "auto" or a clip count of at least 1."""
    if text.strip().lower() == AUTO:
        return AUTO
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise DtmrError(f"--batch must be 'auto' or a clip count of at least 1, got {text!r}")
    return value


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
    batch: int | str = AUTO
    precision: str = "fp32"
    cuda_graph: bool = False
    #: processes of the run on one device (`--workers`; each torchrun rank has its own)
    sharing: int = 1

    @property
    def parts(self) -> Path:
        return parts_path(self.output)

    def method_on(self, device: str | None, topology: str) -> Method:
        """The run's method, its model (if any) on `device`; `topology` is the source's (parameter-free methods
        keep it)."""
        return Method(self.model, self.method, device, topology, batch=self.batch, precision=self.precision,
                      cuda_graph=self.cuda_graph, sharing=self.sharing)


def parts_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + PARTS_SUFFIX)


def anonymize_source(input_path: str | Path, output: str | Path, *, model: str | Path | None = None,
                     method: str | None = None, references: str | Path | None = None, seed: int = 0,
                     device: str | None = None, options: ReleaseOptions = ReleaseOptions(),
                     overwrite: bool = False, progress: Callable[[int, int], None] | None = None,
                     chunk: int | None = None, workers: int = 1, batch: int | str = AUTO,
                     precision: str = "fp32", cuda_graph: bool = False) -> Path:
    """Anonymize every clip of `input_path` with the checkpoint `model` or the parameter-free `method` into the
    release `output` and its key `key_path_for(output)`; returns `output`.

    `chunk` clips make one part (default CHUNK); `workers` > 1 writes the parts in that many processes, and
    under `torchrun` (WORLD_SIZE > 1) this call is one rank of the run (dtmr/release/distributed.py). `batch`,
    `precision` and `cuda_graph`: see the module docstring."""
    from . import distributed
    from . import workers as local_workers

    output, key_path = Path(output), key_path_for(output)
    inputs = [p for p in (input_path, references, model) if p is not None]
    check_output(output, kind="clip-library", inputs=inputs, overwrite=overwrite)
    check_output(key_path, kind="release-key", inputs=inputs, overwrite=overwrite)
    chunk = CHUNK if chunk is None else chunk
    if not (isinstance(chunk, int) and chunk >= 1):
        raise DtmrError(f"--chunk must be a clip count of at least 1, got {chunk!r}")
    if not (batch == AUTO or isinstance(batch, int) and batch >= 1):
        raise DtmrError(f"--batch must be 'auto' or a clip count of at least 1, got {batch!r}")
    world = distributed.torchrun_world_size()
    if workers < 1:
        raise DtmrError(f"--workers must be at least 1, got {workers}")
    if workers > 1 and world > 1:
        raise DtmrError("--workers starts its own processes: under torchrun leave it out (every rank takes part)")
    spec = RunSpec(input_path=str(input_path), output=str(output), model=None if model is None else str(model),
                   method=method, references=None if references is None else str(references), seed=seed,
                   device=device, options=options, chunk=chunk, batch=batch, precision=precision,
                   cuda_graph=cuda_graph, sharing=workers)
    if world > 1:
        distributed.anonymize_rank(spec, progress)
    elif workers > 1:
        local_workers.anonymize_with_workers(spec, workers, progress)
    else:
        with contextlib.ExitStack() as stack:
            opened = open_run(spec, stack, device)
            settings = run_settings(spec, len(opened.source), opened.runner.info)
            stack.enter_context(_locked(spec.parts, output))
            state = _run_state(spec.parts, settings, len(opened.source), options.with_provenance)
            job = opened.job(state["order"])
            job.write_parts(progress)
            write_release((job.read(start) for start in job.starts), output, key_path, state["release_token"],
                          options, settings, opened.runner.info, opened.source.action_names)
            shutil.rmtree(spec.parts)
    return output


@dataclass
class OpenedRun:
    """The open sources and the method of a run."""

    spec: RunSpec
    source: ClipSource
    reference_source: ClipSource
    runner: Method

    def job(self, order: list[int]) -> Job:
        return Job(self.source, self.reference_source, self.runner, self.spec.seed, order, self.spec.parts,
                   self.spec.chunk)


def open_sources(spec: RunSpec, stack: contextlib.ExitStack) -> tuple[ClipSource, ClipSource]:
    """The run's source and reference source (the same object without `--references`), closed by `stack`;
    a source without clips is refused."""
    source = open_clip_source(spec.input_path)
    stack.callback(source.close)
    if len(source) == 0:
        raise DtmrError(f"{spec.input_path}: no clips to anonymize")
    reference_source = source
    if spec.references:
        reference_source = open_clip_source(spec.references)
        stack.callback(reference_source.close)
    return source, reference_source


def open_run(spec: RunSpec, stack: contextlib.ExitStack, device: str | None) -> OpenedRun:
    """Open the run's sources (closed by `stack`) and its method on `device`."""
    source, reference_source = open_sources(spec, stack)
    return OpenedRun(spec, source, reference_source, spec.method_on(device, source.topology))


def run_settings(spec: RunSpec, clips: int, info: MethodInfo) -> dict:
    """What `run.json` must match for a rerun to resume: every argument that changes a part's bytes."""
    options = spec.options
    return {"input": str(Path(spec.input_path).resolve()), "clips": clips,
            "references": str(Path(spec.references).resolve()) if spec.references else None,
            "model": str(Path(spec.model).resolve()) if spec.model else None,
            "model_sha256": file_sha256(spec.model) if spec.model else "", "method": info.name, "seed": spec.seed,
            "chunk": spec.chunk, "batch": spec.batch, "precision": spec.precision, "keep": list(options.keep),
            "length": options.length, "with_provenance": options.with_provenance,
            "keep_placement": options.keep_placement, "keep_missing": options.keep_missing}


@contextlib.contextmanager
def _locked(parts: Path, output: Path) -> Iterator[None]:
    """Hold an exclusive lock on the parts folder (created when missing) for the whole run.

    flock is released by the kernel when the process dies, so a killed run never blocks its rerun.
    """
    for _ in range(5):
        parts.mkdir(parents=True, exist_ok=True)
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


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (the release key records its model's)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
