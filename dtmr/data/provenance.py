"""`Provenance`: what an anonymized clip carries about how it was made, typed, and stored as text entries of
`Clip.extra` (the library's storage of free-form metadata, so the HDF5 format is unchanged).

Every writer (the `Anonymizer`, the naive and noise baselines, a release's parts) and every reader (the merge
that builds a release's key, the Studio) goes through this class; no code parses those `extra` entries itself.

The entries: `method`, `beta`, `model`, `output` ("retargeted" or "released"), `sigma` (the noise baseline's),
`source_clip`, `reference_clip`, and on a release's part clips the fields its key is built from
(dtmr/release/chunks.py, merge.py): `source_file`, `source_index`, `source_frames`, `seed`, `reference_index`
(-1: the method took no reference), `reference_subject`, `reference_file`. A part clip writes all of them,
an empty text where there is no value, so that it replaces whatever an anonymized source clip carried.
`provenance_version` is `PROVENANCE_VERSION`; clips written before it existed have the same entries
without it and read as version 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .clip import Clip

#: the version this code writes; 0: clips written before the entry existed (the same entries)
PROVENANCE_VERSION = 1
VERSION_KEY = "provenance_version"
#: the entries of a release's part clips, written together (module docstring)
RELEASE_FIELDS = ("source_file", "source_index", "source_frames", "seed", "reference_index", "reference_clip",
                  "reference_subject", "reference_file")
_INT_FIELDS = ("source_index", "source_frames", "seed", "reference_index", "reference_subject")
_FLOAT_FIELDS = ("beta", "sigma")


@dataclass(frozen=True)
class Provenance:
    #: the method that made the clip (`dtmr.methods` name)
    method: str
    #: the release blend's β (`dtmr.models.blend`); None for a method without one (a parameter-free release)
    beta: float | None = None
    #: the model: a checkpoint's path (the `Anonymizer`'s) or file name (a release's), or a method's name
    model: str | None = None
    #: "retargeted" (the model's full output) or "released" (the β blend), for a model's outputs
    output: str | None = None
    #: the noise baseline's σ (m)
    sigma: float | None = None
    #: the names (`Clip.name`) of the source clip and of the reference clip, None without a reference
    source_clip: str | None = None
    reference_clip: str | None = None
    #: a release's: where the source clip is in its file, its length, the release seed, the reference's index
    #: (-1 without one) and subject, and the two files
    source_file: str | None = None
    source_index: int | None = None
    source_frames: int | None = None
    seed: int | None = None
    reference_index: int | None = None
    reference_subject: int | None = None
    reference_file: str | None = None
    #: the version it was read from (`PROVENANCE_VERSION` when made by this code)
    version: int = dataclasses.field(default=PROVENANCE_VERSION, compare=False)

    @property
    def is_release_part(self) -> bool:
        """Whether it holds the fields a release's key is built from (a part clip's)."""
        return self.source_index is not None

    def to_extra(self) -> dict[str, str]:
        """The `Clip.extra` entries: the fields that have a value (every release field on a part clip)."""
        out = {VERSION_KEY: str(PROVENANCE_VERSION)}
        release = set(RELEASE_FIELDS) if self.is_release_part else set()
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name == "version" or (value is None and item.name not in release):
                continue
            out[item.name] = "" if value is None else f"{value:g}" if item.name in _FLOAT_FIELDS else str(value)
        return out

    def over(self, extra: Mapping[str, str]) -> dict[str, str]:
        """`extra` with this provenance written over it. Without β it also drops a `beta` an earlier step
        wrote: a parameter-free release of clips made by a model (or by the naive or noise baseline) has none."""
        out = {key: value for key, value in extra.items() if not (key == "beta" and self.beta is None)}
        out.update(self.to_extra())
        return out

    def stamp(self, clip: Clip, **changes) -> Clip:
        """`clip` (with `changes`, e.g. new joints) carrying this provenance over its own `extra`."""
        return clip.replace(extra=self.over(clip.extra), **changes)

    @classmethod
    def from_clip(cls, clip: Clip, where: str | Path | None = None) -> Provenance | None:
        """The provenance `clip` carries, None when it carries none (no `method` entry); `InputError` naming
        `where` (default: the clip's source file) when an entry is not of its type."""
        extra = clip.extra
        if not extra.get("method"):
            return None

        def fail(key: str, what: str):
            raise InputError(where if where is not None else clip.source_file,
                             f"clip {clip.name!r}: its provenance entry {key}={extra[key]!r} is not {what}")

        values: dict[str, object] = {}
        for item in dataclasses.fields(cls):
            text = extra.get(VERSION_KEY if item.name == "version" else item.name)
            if item.name == "version":
                values["version"] = 0 if text is None else _number(text, int, lambda: fail(VERSION_KEY, "a version"))
                if values["version"] > PROVENANCE_VERSION:
                    fail(VERSION_KEY, f"one this dtmr reads (0 to {PROVENANCE_VERSION}): written by a newer one?")
            elif text is None or text == "":
                values[item.name] = None
            elif item.name in _INT_FIELDS:
                values[item.name] = _number(text, int, lambda key=item.name: fail(key, "an integer"))
            elif item.name in _FLOAT_FIELDS:
                values[item.name] = _number(text, float, lambda key=item.name: fail(key, "a number"))
            else:
                values[item.name] = text
        return cls(**values)


def _number(text: str, kind: type, fail):
    try:
        return kind(text)
    except ValueError:
        fail()
