"""The parts of a run: chunk k of the release order is anonymized into `OUT.h5.parts/part-k.h5`.

A part depends only on its chunk: its clips, their references (drawn per (seed, source index),
`reference_index`) and the method's noise (seeded per source index) do not depend on which process writes
it, nor when. Each part carries the provenance the release's key is built from (`Job.provenance`).

The process that merges needs every part's clips. Those of the parts it writes itself it keeps in memory
while they hold under KEEP_BYTES of joints, in their stored form (`stored_form`: what reading the part back
would give, which a test pins), so the merge opens no part it wrote (an open is a full read by the HDF5
watchdog's child process, dtmr/io/hdf5_watchdog.py, then a checked read). A `--workers` process does the
same and sends what it kept to the merging process (dtmr/release/workers.py). Parts are scratch files, read
at most once (by a resumed run): their joints are stored without gzip, which is half of writing them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..data.provenance import Provenance
from ..data.reference_pool import ReferencePool
from ..errors import DtmrError
from ..io.clip_source import ClipSource
from ..io.library import ClipLibrary, stored_form
from .runner import Method

#: joint bytes of its own parts a merging process keeps for the merge (about 13,000 clips of 65 frames)
KEEP_BYTES = 256 << 20


def reference_index(seed: int, index: int, source_subject: int | None, reference_subjects: np.ndarray,
                    same_source: bool) -> int:
    """The reference of clip `index`: `ReferencePool.draw_keyed`, keyed by the clip's index."""
    pick = ReferencePool(reference_subjects).draw_keyed(seed, index, source_subject, own=index if same_source else None)
    if pick is None:
        known = source_subject is not None and source_subject >= 0
        raise DtmrError(f"no reference for clip {index}: "
                        + ("no reference clip of another known subject" if known else "no other reference clip"))
    return pick


def subjects(source: ClipSource) -> np.ndarray:
    """Every clip's subject (-1 unknown), from the one column when the source has columns (a library: no
    clip's `extra` is parsed)."""
    column = getattr(source, "column", None)
    return column("subject") if column is not None else source.metadata_table()["subject"]


class PartFiles:
    """The part files of a run: chunk starts, their paths, which exist."""

    def __init__(self, parts: Path, clips: int, chunk: int):
        self.parts, self.clips, self.chunk = parts, clips, chunk
        self.starts = range(0, clips, chunk)

    def part(self, start: int) -> Path:
        return self.parts / f"part-{start // self.chunk:05d}.h5"

    def size(self, start: int) -> int:
        return min(self.chunk, self.clips - start)

    def done(self) -> int:
        """Clips in the parts written so far (by any process)."""
        return sum(self.size(start) for start in self.starts if self.part(start).is_file())

    def missing(self) -> list[int]:
        """The starts of the chunks without a part."""
        return [start for start in self.starts if not self.part(start).is_file()]

    def read(self, start: int) -> list[Clip]:
        with ClipLibrary(self.part(start)) as part:
            return part.read_all()


class Job(PartFiles):
    """Writes the parts of a run: `source`'s clips in `order`, anonymized by `runner` against references
    from `reference_source`."""

    def __init__(self, source: ClipSource, reference_source: ClipSource, runner: Method, seed: int,
                 order: Sequence[int], parts: Path, chunk: int):
        super().__init__(parts, len(order), chunk)
        self.source, self.reference_source, self.runner = source, reference_source, runner
        self.seed, self.order = seed, order
        self.subjects = subjects(source)
        self.reference_subjects = self.subjects if reference_source is source else subjects(reference_source)
        self.batch = runner.model_batch(chunk)
        self.kept: dict[int, list[Clip]] = {}
        self.kept_bytes = 0

    def write_parts(self, progress: Callable[[int, int], None] | None, rank: int = 0, world: int = 1) -> None:
        """Write the missing parts of chunks k with k mod `world` == `rank` (all of them in one process).

        In one process `progress` gets the clips up to this chunk; in a shared run, those of every part
        written so far, by any process. Rank 0 merges, so it keeps the parts it writes (see the module
        docstring)."""
        for k, start in enumerate(self.starts):
            if k % world != rank:
                continue
            if not self.part(start).is_file():
                self.write_part(start, keep=rank == 0)
            if progress is not None:
                progress(start + self.size(start) if world == 1 else self.done(), self.clips)

    def write_part(self, start: int, keep: bool = False) -> None:
        """Anonymize chunk `start` into its part (written atomically); `keep` its clips for `read`."""
        indices = self.order[start : start + self.chunk]
        clips = [self.source.read(i) for i in indices]
        same = self.reference_source is self.source
        picks = [reference_index(self.seed, i, int(self.subjects[i]), self.reference_subjects, same)
                 if self.runner.info.uses_references else -1 for i in indices]
        refs = [self.reference_source.read(j) if j >= 0 else c for c, j in zip(clips, picks)]
        released = self.runner.run(clips, refs, indices, self.seed, self.batch, self.source.action_names)
        out = [r.replace(extra=self.provenance(r, c, i, ref if j >= 0 else None, j))
               for r, c, i, ref, j in zip(released, clips, indices, refs, picks)]
        ClipLibrary.write(self.part(start), out, action_names=self.source.action_names, compress=False)
        if keep and self.kept_bytes < KEEP_BYTES:
            self.kept[start] = [stored_form(clip) for clip in out]
            self.kept_bytes += sum(c.joints.nbytes for c in self.kept[start])

    def read(self, start: int) -> list[Clip]:
        """The clips of part `start`: kept, or read from its file."""
        kept = self.kept.pop(start, None)
        if kept is None:
            return super().read(start)
        self.kept_bytes -= sum(c.joints.nbytes for c in kept)
        return kept

    def provenance(self, released: Clip, clip: Clip, index: int, reference: Clip | None, pick: int) -> dict:
        """`released`'s `extra` with the provenance the release's key is built from (`Provenance`, a part
        clip's: every release field, over what the method or an anonymized source wrote)."""
        info = self.runner.info
        made = Provenance(method=info.name, beta=info.beta, model=info.model, source_clip=clip.name,
                          source_file=str(self.source.path), source_index=int(index), source_frames=clip.num_frames,
                          seed=self.seed, reference_index=int(pick),
                          reference_clip=None if reference is None else reference.name,
                          reference_subject=None if reference is None else reference.subject,
                          reference_file=None if reference is None else str(self.reference_source.path))
        return made.over(released.extra)
