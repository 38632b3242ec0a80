"""The state machine of one `dtmr anonymize` run, shared by the one-process run, `--workers` and torchrun.

Clips are processed in chunks of the release order. Each finished chunk is written atomically to
`OUT.h5.parts/part-NNNNN.h5`; `run.json` there records the settings, the drawn order and the release token,
so a rerun with the same arguments skips the parts already written and gives the same release, byte for
byte in its joints. A rerun with other settings is refused while a part exists; a parts folder without any
finished part is simply reused. A run holds an exclusive lock on the parts folder: a second run on the same
output stops at once ("another run is writing OUT"). The release and its key are written beside the parts and
swapped in as one unit through a journal (dtmr/release/swap.py), and the parts folder is removed after, so a
kill at any moment leaves the old pair (or none) or the new pair, and the rerun completes.
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import DtmrError
from ..io.atomic import atomic_write
from ..io.clip_source import ClipSource
from ..io.sources import open_clip_source
from .chunks import Job
from .key import key_path_for
from .options import ReleaseOptions
from .release import release_attributes
from .runner import AUTO, Method, MethodInfo
from .swap import parts_folder

CHUNK = 64
RUN_STATE = "run.json"
LOCK = "lock"


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
    return parts_folder(output)


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
def locked(parts: Path, output: Path) -> Iterator[None]:
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


def remove_parts(parts: Path) -> None:
    """Remove a finished run's parts folder, `run.json` after every part: a kill midway leaves a folder whose
    `run.json` still describes the parts left (the rerun recomputes the missing ones, same order and token),
    never parts without their `run.json` (which a rerun would refuse as another run's)."""
    entries = sorted(parts.iterdir(), key=lambda entry: entry.name in (RUN_STATE, LOCK))
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
    with contextlib.suppress(FileNotFoundError):
        parts.rmdir()


def run_state(parts: Path, settings: dict, n: int, source_order: bool) -> dict:
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


def unfinished_key(output: str | Path) -> bool:
    """The key beside `output` was written by the run whose parts folder is still there: a run killed after
    its release and key were swapped in and before it removed its parts. Its rerun finishes it, so that key is
    not a key a user keeps (the output guard would refuse it)."""
    token, key_path = _run_token(output), key_path_for(output)
    if token is None or not key_path.is_file():  # also a FIFO, which reading would block on
        return False
    try:
        key = json.loads(key_path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(key, dict) and key.get("release_token") == token


def unfinished_release(output: str | Path) -> bool:
    """`output` is the release of the run whose parts folder is still there (killed after its swap, before it
    removed its parts): like its key, not a file the output guard keeps from that run's rerun."""
    token, output = _run_token(output), Path(output)
    if token is None or not output.is_file():
        return False
    try:
        return release_attributes(output).get("release_token") == token
    except DtmrError:
        return False


def _run_token(output: str | Path) -> str | None:
    """The release token in the `run.json` of `output`'s parts folder, or None."""
    state_path = parts_path(output) / RUN_STATE
    if not state_path.is_file():
        return None
    try:
        state = json.loads(state_path.read_text())
    except (OSError, ValueError):
        return None
    token = state.get("release_token") if isinstance(state, dict) else None
    return token if isinstance(token, str) else None
