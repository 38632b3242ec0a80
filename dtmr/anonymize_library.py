"""Anonymizing a whole clip source into an HDF5 library, resumably (`dtmr anonymize`).

Clips are processed in chunks. Each finished chunk is written atomically to `OUT.h5.parts/part-NNNNN.h5`
next to the output; a run that is interrupted (Ctrl-C, a crash, a reboot) and started again with the same
arguments skips the parts already written. When every part exists they are merged into `OUT.h5`
(atomically) and the parts folder is removed. `run.json` in the parts folder records the settings, so a
resume with other settings is refused instead of mixing two runs.

References: each clip gets a reference drawn uniformly from the reference source's clips of another
subject (any other clip when subjects are unknown), from a generator seeded by (seed, clip index), so the
draw does not depend on chunking or on where a run resumed. Each output clip carries its provenance in
`extra`: source and reference file and clip, model file, method, β and seed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .errors import DtmrError
from .io.atomic import atomic_write
from .io.library import ClipLibrary
from .io.sources import open_clip_source

CHUNK = 64
PARTS_SUFFIX = ".parts"


def reference_index(seed: int, index: int, source_subject: int | None, reference_subjects: np.ndarray,
                    same_source: bool) -> int:
    """The reference of clip `index`: uniform over the reference clips of another subject."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
    if source_subject is not None and source_subject >= 0:
        candidates = np.flatnonzero(reference_subjects != source_subject)
    else:
        candidates = np.arange(len(reference_subjects))
        if same_source:
            candidates = candidates[candidates != index]
    if candidates.size == 0:
        raise DtmrError(f"no reference for clip {index}: no reference clip of another subject")
    return int(candidates[rng.integers(candidates.size)])


def anonymize_source(input_path: str | Path, model_path: str | Path, output: str | Path, *,
                     references: str | Path | None = None, seed: int = 0, device: str | None = None,
                     progress: Callable[[int, int], None] | None = None) -> Path:
    """Anonymize every clip of `input_path` with the checkpoint `model_path` into the library `output`."""
    from .models.anonymizer import Anonymizer

    output = Path(output)
    parts = output.with_name(output.name + PARTS_SUFFIX)
    settings = {"input": str(Path(input_path).resolve()), "model": str(Path(model_path).resolve()),
                "references": str(Path(references).resolve()) if references else None, "seed": seed,
                "chunk": CHUNK}
    if parts.is_dir():
        saved = json.loads((parts / "run.json").read_text()) if (parts / "run.json").is_file() else None
        if saved != settings:
            raise DtmrError(f"{parts}: holds an unfinished run with other settings; remove it or rerun with the "
                            "same arguments")
    else:
        parts.mkdir(parents=True)
        with atomic_write(parts / "run.json") as tmp:
            tmp.write_text(json.dumps(settings, indent=1))

    anonymizer = Anonymizer.from_checkpoint(model_path, device=device)
    source = open_clip_source(input_path)
    reference_source = open_clip_source(references) if references else source
    try:
        n = len(source)
        if n == 0:
            raise DtmrError(f"{input_path}: no clips to anonymize")
        subjects = source.metadata_table()["subject"]
        reference_subjects = reference_source.metadata_table()["subject"]
        chunks = range(0, n, CHUNK)
        done = 0
        for start in chunks:
            part = parts / f"part-{start // CHUNK:05d}.h5"
            stop = min(start + CHUNK, n)
            if not part.is_file():
                clips = [source.read(i) for i in range(start, stop)]
                picks = [reference_index(seed, i, int(subjects[i]), reference_subjects, reference_source is source)
                         for i in range(start, stop)]
                refs = [reference_source.read(j) for j in picks]
                released = anonymizer.anonymize_batch(clips, refs)
                for clip, j, out in zip(clips, picks, released):
                    out.extra.update(source_file=str(source.path), reference_file=str(reference_source.path),
                                     reference_index=str(j), model=Path(model_path).name, seed=str(seed))
                ClipLibrary.create(part, released, action_names=source.action_names).close()
            done = stop
            if progress is not None:
                progress(done, n)
        action_names = source.action_names
    finally:
        if reference_source is not source:
            reference_source.close()
        source.close()

    def merged():
        for start in chunks:
            with ClipLibrary(parts / f"part-{start // CHUNK:05d}.h5") as part:
                yield from part.read_all()

    ClipLibrary.create(output, merged(), topology=anonymizer.topology.name, action_names=action_names).close()
    shutil.rmtree(parts)
    return output
