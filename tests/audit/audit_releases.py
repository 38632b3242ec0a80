"""Releases for the audit's tests: `make_release` copies a source's clips into a release (opaque ids,
shuffled order, no identifying field: what `dtmr anonymize --method raw` writes) with a matching key.

A module of its own (not conftest.py): test modules import it by name, and `conftest` is not a unique name."""

from __future__ import annotations

import uuid
import zlib
from pathlib import Path

import h5py
import numpy as np

from dtmr.data.clip import Clip
from dtmr.io.library import ClipLibrary
from dtmr.release.key import KeyEntry, ReleaseKey, key_path_for, write_key


def make_release(clips: list[Clip], source_file: str | Path, out: str | Path, *, order_seed: int = 7,
                 leak_subject: bool = False, transform=None, canonical: bool = False) -> tuple[Path, Path]:
    """(release path, key path) of `clips` released unchanged (or through `transform(clip) -> joints`);
    `leak_subject` keeps the subject column (a leaky release). The attributes say placement and missing
    joints were kept (as they are, unchanged), or with `canonical` that they were removed (for a
    `transform` that removes them)."""
    order = np.random.default_rng(order_seed).permutation(len(clips))
    released, entries = [], []
    for n, i in enumerate(order):
        c = clips[i]
        joints = c.joints if transform is None else transform(c)
        rid = f"R{n + 1:06d}"
        released.append(Clip(joints=joints, topology=c.topology, fps=c.fps, action=c.action, sample_name=rid,
                             subject=c.subject if leak_subject else None))
        entries.append(KeyEntry(release_id=rid, source_index=int(i), source_clip=c.sample_name or "",
                                subject=c.subject, action=c.action, view=c.view, repetition=c.repetition,
                                source_frames=c.num_frames, reference_index=-1, reference_clip="",
                                reference_subject=None,
                                joints_crc32=zlib.crc32(np.ascontiguousarray(joints, dtype=np.float32))))
    out = Path(out)
    ClipLibrary.create(out, released).close()
    token = uuid.uuid4().hex
    with h5py.File(out, "a") as h5:
        for name, value in (("release_format", "dtmr-release"), ("release_version", 1), ("method", "raw"),
                            ("beta", 0.0), ("model", ""), ("model_sha256", ""), ("kept", "[]"), ("length", "keep"),
                            ("provenance", "none"), ("release_token", token),
                            ("placement", "canonical" if canonical else "source"),
                            ("missing", "filled" if canonical else "kept")):
            h5.attrs[name] = value
    key = ReleaseKey(path=str(key_path_for(out)), release_file=out.name, release_token=token,
                     source_file=str(Path(source_file).resolve()), reference_file="", method="raw", beta=None,
                     model="", seed=0, entries=entries)
    return out, write_key(key)
