"""Joining a run's parts into the release and its key.

`write_release` takes the parts' clips as an iterable, in release order, and writes them as they come: a
caller that yields a part as soon as it is written (the parent of `--workers`, rank 0 under torchrun)
merges while the other processes still compute, instead of after them. The bytes do not depend on when the
parts came: the release is the same clips in the same order, written in the same batches. The release and
its key are written beside the parts first and then swapped in as one unit (dtmr/release/swap.py): a kill at
any moment leaves the old pair or the new one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..data.clip import Clip
from ..data.provenance import Provenance
from ..errors import DtmrError
from ..io.atomic import atomic_write
from ..io.hdf5_output import hdf5_output
from ..io.library import JOINTS_CRC, ClipLibrary
from .channels import release_joints
from .key import KeyEntry, ReleaseKey, key_path_for, write_key
from .release import RELEASE_FORMAT, RELEASE_VERSION
from .runner import MethodInfo
from .swap import discard_staged, staged_paths, swap_in

#: clips per write of the merge: small, so that a merge fed as parts finish has little left to write after
#: the last part (the run's tail); a constant, so that the bytes do not depend on the chunking
MERGE_BATCH_CLIPS = 256
#: what a `with_provenance` build leaves in, for its `kept` attribute
PROVENANCE_KEPT = ("subject", "sample_name", "source_file", "view", "repetition", "extra")


def write_release(parts: Iterable[Sequence[Clip]], output: Path, key_path: Path, token: str, options,
                  settings: dict, info: MethodInfo, action_names: list[str] | None) -> None:
    """Write the release `output` of the parts' clips (in release order) and its key `key_path` (which must be
    `key_path_for(output)`), replacing an existing pair as one unit. `options` is the run's ReleaseOptions,
    `settings` its run.json settings. The caller holds the run's lock."""
    if Path(key_path) != key_path_for(output):
        raise ValueError(f"the key of {output} is {key_path_for(output)}, not {key_path}")
    entries: list[dict] = []
    staged_release, staged_key = staged_paths(output)
    discard_staged(output)

    def released() -> Iterator[Clip]:
        position = 0
        for part in parts:
            for clip in part:
                release_id = _release_id(position, clip, options)
                position += 1
                entries.append(_entry(clip, release_id))
                joints = release_joints(clip.joints, clip.topology, options.length, options.keep_placement,
                                        options.keep_missing)
                if options.with_provenance:
                    yield clip.replace(joints=joints)
                else:
                    yield Clip(joints=joints, topology=clip.topology, fps=clip.fps, action=clip.action,
                               view=clip.view if "view" in options.keep else None,
                               repetition=clip.repetition if "repetition" in options.keep else None,
                               sample_name=release_id)

    with atomic_write(staged_release) as tmp:
        ClipLibrary.write(tmp, released(), topology=info.topology, action_names=action_names,
                          batch_clips=MERGE_BATCH_CLIPS)
        with hdf5_output(tmp, "r+") as h5:
            for name, value in _attributes(info, settings["model_sha256"], token, options).items():
                h5.attrs[name] = value
            crc = h5["clips"][JOINTS_CRC][()]
        if output.is_file():  # the release keeps the mode of the file it replaces, as atomic_write does
            os.chmod(tmp, output.stat().st_mode & 0o777)
    key = ReleaseKey(path=str(staged_key), release_file=output.name, release_token=token,
                     source_file=settings["input"], reference_file=settings["references"] or settings["input"],
                     method=info.name, beta=info.beta, model=info.model, seed=settings["seed"],
                     entries=[KeyEntry(**e, joints_crc32=int(c)) for e, c in zip(entries, crc)],
                     model_sha256=settings["model_sha256"])
    write_key(key)
    swap_in(output, token)


def _release_id(position: int, clip: Clip, options) -> str:
    """`R000001`... by release position; a provenance build keeps the source's names."""
    return (clip.sample_name or "") if options.with_provenance else f"R{position + 1:06d}"


def _entry(clip: Clip, release_id: str) -> dict:
    """A key entry but its joint checksum, from a part clip (source metadata + its `Provenance`)."""
    made = Provenance.from_clip(clip)
    if made is None or not made.is_release_part or made.source_frames is None or made.reference_index is None:
        raise DtmrError(f"release part clip {clip.name!r} (of {clip.source_file}) carries no release provenance")
    return {"release_id": release_id, "source_index": made.source_index, "source_clip": made.source_clip or "",
            "subject": clip.subject, "action": clip.action, "view": clip.view, "repetition": clip.repetition,
            "source_frames": made.source_frames, "reference_index": made.reference_index,
            "reference_clip": made.reference_clip or "", "reference_subject": made.reference_subject}


def _attributes(info: MethodInfo, model_sha256: str, token: str, options) -> dict:
    attrs = {"release_format": RELEASE_FORMAT, "release_version": RELEASE_VERSION, "method": info.name,
             "model": info.model, "model_sha256": model_sha256,
             "kept": json.dumps(list(PROVENANCE_KEPT if options.with_provenance else options.keep)),
             "length": "keep" if options.length is None else options.length,
             "placement": "source" if options.keep_placement else "canonical",
             "missing": "kept" if options.keep_missing else "filled",
             "provenance": "included" if options.with_provenance else "none", "release_token": token}
    if info.beta is not None:
        attrs["beta"] = float(info.beta)
    return attrs
