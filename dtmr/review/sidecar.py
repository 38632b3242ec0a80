"""The review sidecar `LIB.review.<annotator>.json`: reading, validating and atomic writing.

Clip keys must survive reopening the library: a clip is keyed by its sample name when every clip of the
library has a distinct, non-empty name, otherwise by its index (`#12`). The library's fingerprint (file
name, clip count, CRC-32 of the NUL-joined sample names) tells a review made on another library apart.

Frames: in memory a flag is a 0-based frame index range (the clip's arrays, the Studio's clock); the file
stores 1-based frame numbers from version 2 on, as the Studio's frame counter shows them (`frames`).
Version 1 files, which stored 0-based indices, are read as they were meant.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..errors import InputError
from ..io.atomic import atomic_write
from ..io.bounded_tree import loads_json
from .frames import to_numbers
from .location import review_folder

FORMAT = "dtmr-review"
VERSION = 2
#: the first frame number a version's flags count from: version 1 wrote 0-based indices
FRAME_BASE = {1: 0, 2: 1}
VERDICTS = ("plausible", "implausible", "unsure")
#: what `sidecar_path` puts between the library's file name and the annotator
SIDECAR_INFIX = ".review."


@dataclass(frozen=True)
class LibraryFingerprint:
    name: str
    clips: int
    names_crc32: int

    @classmethod
    def of(cls, path: str | Path, sample_names) -> LibraryFingerprint:
        names = [str(n) for n in sample_names]
        return cls(Path(path).name, len(names), zlib.crc32("\0".join(names).encode("utf-8")))


@dataclass(frozen=True)
class ClipReview:
    verdict: str | None = None
    #: inclusive 0-based frame index ranges (start <= end), sorted; the file stores them 1-based
    flags: tuple[tuple[int, int], ...] = ()
    note: str = ""
    tags: tuple[str, ...] = ()
    time: str = ""

    @property
    def reviewed(self) -> bool:
        """A clip counts as reviewed once it has a verdict."""
        return self.verdict is not None

    @property
    def empty(self) -> bool:
        return self.verdict is None and not self.flags and not self.note and not self.tags


@dataclass
class Review:
    library: LibraryFingerprint
    annotator: str
    clips: dict[str, ClipReview] = field(default_factory=dict)


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def clip_keys(sample_names) -> list[str]:
    """One key per clip: the sample name when the names are distinct and non-empty, else `#<index>`."""
    names = [str(n) for n in sample_names]
    if all(names) and len(set(names)) == len(names) and not any(n.startswith("#") for n in names):
        return names
    return [f"#{i}" for i in range(len(names))]


def annotator_slug(annotator: str) -> str:
    """The annotator as it goes into a file name (letters, digits, `_`, `-`)."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", annotator.strip()).strip("_")
    return slug or "anonymous"


def sidecar_name(library_path: str | Path, annotator: str) -> str:
    """`clips.h5` -> `clips.h5.review.<annotator>.json`."""
    return f"{Path(library_path).name}{SIDECAR_INFIX}{annotator_slug(annotator)}.json"


def sidecar_path(library_path: str | Path, annotator: str, data_dir: str | Path | None = None) -> Path:
    """The annotator's sidecar of `library_path`: beside it (a folder library: beside the folder), or in the
    user's data folder `data_dir` for a bundled or read-only library (`location.review_folder`)."""
    return review_folder(library_path, data_dir) / sidecar_name(library_path, annotator)


def sidecar_beside(library_path: str | Path, annotator: str) -> Path:
    """The sidecar's place beside the library, where versions before issue 42 also wrote the reviews of bundled
    and read-only libraries: read from there when `sidecar_path` holds none yet."""
    return Path(library_path).absolute().parent / sidecar_name(library_path, annotator)


def find_sidecars(library_path: str | Path, data_dir: str | Path | None = None) -> list[Path]:
    """Every annotator's sidecar of the library (in `review_folder`), sorted by name."""
    library_path = Path(library_path)
    folder = review_folder(library_path, data_dir)
    return sorted(folder.glob(f"{glob_escape(library_path.name)}{SIDECAR_INFIX}*.json"))


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def write_review(path: str | Path, review: Review) -> None:
    """Replace `path` atomically (a crash leaves the previous file whole)."""
    data = {
        "format": FORMAT,
        "version": VERSION,
        "library": {"name": review.library.name, "clips": review.library.clips,
                    "names_crc32": review.library.names_crc32},
        "annotator": review.annotator,
        "frames": "1-based",
        "clips": {key: _clip_json(c) for key, c in sorted(review.clips.items()) if not c.empty},
    }
    with atomic_write(path, ".json.tmp") as tmp:
        tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _clip_json(c: ClipReview) -> dict:
    return {"verdict": c.verdict, "flags": [list(to_numbers(f)) for f in c.flags], "note": c.note,
            "tags": list(c.tags), "time": c.time}


def read_review(path: str | Path) -> Review:
    """A sidecar read back; any damage is one `InputError` naming the file."""
    path = Path(path)
    try:
        data = loads_json(path.read_text(encoding="utf-8"), path, "review sidecar")
    except UnicodeDecodeError:
        raise InputError(path, "not a review sidecar (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"damaged review sidecar: {exc.msg}", line=exc.lineno) from None
    except OSError as exc:
        raise InputError(path, exc.strerror or str(exc)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(path, f"not a review sidecar (no \"format\": \"{FORMAT}\")")
    version = data.get("version")
    if isinstance(version, bool) or version not in FRAME_BASE:
        raise InputError(path, f"review sidecar version {version!r} is not supported "
                               f"(this dtmr reads {', '.join(map(str, FRAME_BASE))})")
    base = FRAME_BASE[version]
    if version >= 2 and data.get("frames", "1-based") != "1-based":
        raise InputError(path, f"damaged review sidecar: \"frames\" is {data.get('frames')!r}, version {version} "
                               "stores \"1-based\" frame numbers")
    try:
        lib = data["library"]
        library = LibraryFingerprint(str(lib["name"]), _int(lib["clips"]), _int(lib["names_crc32"]))
        annotator = data["annotator"]
        if not isinstance(annotator, str):
            raise TypeError("annotator must be a string")
        clips = {str(k): _clip_review(v, base) for k, v in _dict(data["clips"]).items()}
    except KeyError as exc:
        raise InputError(path, f"damaged review sidecar: missing {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise InputError(path, f"damaged review sidecar: {exc}") from None
    return Review(library, annotator, clips)


def _dict(value) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _clip_review(value, base: int) -> ClipReview:
    """One clip's review; its flags counted from frame `base` in the file, 0-based in memory."""
    value = _dict(value)
    verdict = value.get("verdict")
    if verdict is not None and verdict not in VERDICTS:
        raise ValueError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    flags = []
    for flag in value.get("flags", []):
        if not (isinstance(flag, list) and len(flag) == 2):
            raise TypeError(f"flag {flag!r} is not a [start, end] pair")
        start, end = _int(flag[0]), _int(flag[1])
        if not base <= start <= end:
            raise ValueError(f"flag {flag!r} is not a frame range ({base} <= start <= end)")
        flags.append((start - base, end - base))
    note, tags, time = value.get("note", ""), value.get("tags", []), value.get("time", "")
    if not isinstance(note, str) or not isinstance(time, str):
        raise TypeError("note and time must be strings")
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise TypeError("tags must be a list of strings")
    return ClipReview(verdict, tuple(sorted(flags)), note, tuple(tags), time)
