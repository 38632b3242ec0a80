"""The metadata attacker: what a release gives away without a single joint being looked at.

Every per-clip column (`clips/*`, each key of `clips/extra`, any other dataset or attribute array with one
value per clip), every file and dataset attribute and every other string dataset of the release is checked.

With the key (which says each released clip's subject and source):
- a column **equal to the subject id** (for >= 90 % of the clips of known subject);
- a column **one-to-one with the subject**: its values partition the clips exactly as subjects do (>= 2
  subjects, some subject with >= 2 clips), e.g. `subject * 7 + 1` or a performer code;
- a column **one-to-one with the source clip**: unique per clip and, for >= 90 % of the clips, containing the
  source clip's name or equal to (or, in a string, holding the number of) its source index or index + 1;
  a numeric column with many distinct values whose rank correlation with the source index exceeds 0.9
  **follows the source order**; so does the clip order itself (Spearman |rho| > 0.9, >= 8 clips);
- a column naming the **reference clip** (>= 90 % of the clips), a string naming the key's source or
  reference **file**;
- the **frame count**: how many released clips have their source's frame count while that count is unique
  among the raw clips (so it names the source); a failure when that is at least 3 clips and 5 times what
  independent frame counts would give.
Without the key only what needs none: strings that look like **paths**, NTU names with a performer number
(`P` other than 000), a `provenance = "included"` attribute, a subject column that holds values at all.

Each finding is a dict `{"field", "problem", "detail", "severity"}` (contract in dtmr/audit); failures first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import h5py
import numpy as np

from ..errors import DtmrError, InputError
from ..io.hdf5_watchdog import check_readable

if TYPE_CHECKING:
    from ..io.clip_source import ClipSource
    from ..release.key import ReleaseKey

#: share of clips a value must match for "equals" / "contains" findings
MATCH_SHARE = 0.9
#: |Spearman rho| above which an order follows the source's
ORDER_RHO = 0.9
#: fewer clips than this and a random order reaches ORDER_RHO too often to mean anything
ORDER_MIN_CLIPS = 8
#: frame-count links: at least this many clips, and this many times the count independent lengths give
FRAMES_MIN_LINKED = 3
FRAMES_TIMES_CHANCE = 5.0
#: shortest name searched for inside other strings (shorter ones match by accident)
MIN_NAME = 4

_PATH = re.compile(
    r"(?:^|[\s\"'=(,])(?:/(?:[\w.~-]+/)+[\w.~-]*"       # /abs/path/…  (two components at least)
    r"|~/[\w.~/-]+"                                     # ~/…
    r"|[A-Za-z]:[\\/][^\s\"']*"                        # C:\… or C:/…
    r"|file://\S+"
    r"|[\w.-]+(?:[\\/][\w.-]+)+\.(?:h5|hdf5|npz|npy|skeleton|pkl|pickle|pt|pth|json|csv|txt|mp4|avi|gif))",
    re.IGNORECASE,
)
_NTU_PERFORMER = re.compile(r"S\d{3}C\d{3}P(\d{3})R\d{3}A\d{3}")
_INTEGER = re.compile(r"-?\d+")
_DIGITS = re.compile(r"\d+")
#: library datasets never read: the joints (large) and the ragged offsets
_SKIPPED = {"joints_flat", "offsets"}
#: the library's own per-joint / per-action lists: searched as strings, never taken for per-clip columns
#: (a release of 25 clips would otherwise compare the 25 joint names with its clips)
_NOT_COLUMNS = {"attrs/joint_names", "attrs/parents", "action_names"}


def finding(field: str, problem: str, detail: str, severity: str = "fail") -> dict:
    return {"field": field, "problem": problem, "detail": detail, "severity": severity}


def scan_metadata(release_path: str | Path, key: ReleaseKey | None, raw: ClipSource | None) -> list[dict]:
    """Every metadata finding of the release at `release_path` (failures first); `raw` is the source the
    release was made from (for the frame-count check; the key's frame counts stand in without it)."""
    columns, strings, attrs, frames = _read_release(Path(release_path))
    n = len(frames)
    findings = _string_findings(strings)
    if attrs.get("provenance") == "included":
        findings.append(finding("attrs/provenance", "provenance included",
                                "built with --with-provenance: an internal library, not a release"))
    findings += channel_findings(attrs)
    if key is None:
        subject = columns.get("clips/subject")
        if subject is not None and any(_as_int(v) is not None and _as_int(v) >= 0 for v in subject):
            findings.append(finding("clips/subject", "holds subject ids",
                                    "a release's subject column is -1; this one holds values (give the key to "
                                    "check them)", "warn"))
    else:
        if len(key.entries) != n:
            raise DtmrError(f"{key.path} is not the key of {release_path}: the key lists {len(key.entries)} "
                            f"clips, the release holds {n}")
        findings += _subject_findings(columns, key.subjects())
        findings += _source_findings(columns, key)
        findings += _file_name_findings(strings, key)
        findings += _order_findings(key.source_indices())
        findings += _frame_findings(frames, key, raw, release_path)
    return [f for f in findings if f["severity"] == "fail"] + [f for f in findings if f["severity"] != "fail"]


def channel_findings(attrs: dict) -> list[dict]:
    """Failures for the source channels a release says it kept (dtmr/release/channels.py): camera-space
    placement and the missing-joint pattern. A release written before these channels were removed has no
    attribute saying so, and kept both."""
    from ..release.release import RELEASE_FORMAT

    if attrs.get("release_format") != RELEASE_FORMAT:
        return []
    out = []
    if attrs.get("placement") != "canonical":
        out.append(finding("attrs/placement", "placement kept",
                           "the clips stand where their sources stood in camera space (--keep-placement, or made "
                           "before canonical placement): the first frame's root links a clip to its source and "
                           "its recording session"))
    if attrs.get("missing") != "filled":
        out.append(finding("attrs/missing", "missing-joint pattern kept",
                           "the source's missing joints are NaN where the tracker lost them (--keep-missing, or "
                           "made before they were filled): the pattern links a clip to its source"))
    return out


# -- reading -----------------------------------------------------------------------------------------------
def _read_release(path: Path) -> tuple[dict[str, list], dict[str, list[str]], dict, np.ndarray]:
    """(per-clip columns, every string by field, file attributes, frames per clip)."""
    columns: dict[str, list] = {}
    strings: dict[str, list[str]] = {}
    check_readable(path)
    try:
        with h5py.File(path, "r") as h5:
            frames = np.diff(h5["offsets"][()].astype(np.int64))
            n = len(frames)
            attrs = {str(k): _plain(v) for k, v in h5.attrs.items()}
            _add_attributes(columns, strings, "attrs", attrs, n)
            objects: list[tuple[str, h5py.HLObject]] = []
            h5.visititems(lambda name, obj: objects.append((name, obj)))
            for name, obj in objects:
                _add_attributes(columns, strings, f"{name}/attrs", {str(k): _plain(v) for k, v in obj.attrs.items()}, n)
                if not isinstance(obj, h5py.Dataset) or name in _SKIPPED:
                    continue
                values = _plain(obj.asstr()[()] if obj.dtype.kind in "OS" else obj[()])
                values = values if isinstance(values, list) else [values]
                if name == "clips/extra":  # searched through its keys' columns (or whole, when not JSON)
                    _add_extra(columns, values)
                    continue
                if obj.ndim == 1 and len(values) == n and name not in _NOT_COLUMNS:
                    columns[name] = values
                texts = [v for v in values if isinstance(v, str)]
                if texts:
                    strings[name] = texts
    except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:
        raise InputError(path, f"unreadable release ({' '.join(str(exc).split())})") from None
    for name, values in columns.items():  # extra keys and attribute arrays are strings to search too
        texts = [v for v in values if isinstance(v, str)]
        if texts and name not in strings:
            strings[name] = texts
    return columns, strings, attrs, frames


def _add_attributes(columns: dict, strings: dict, prefix: str, attrs: dict, n: int) -> None:
    for name, value in attrs.items():
        field = f"{prefix}/{name}"
        if isinstance(value, list) and len(value) == n and n > 1 and field not in _NOT_COLUMNS:
            columns[field] = value
        texts = [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
        if texts:
            strings[field] = texts


def _add_extra(columns: dict, texts: list) -> None:
    """One column per `extra` key (None where a clip lacks it); a value that is not JSON stays a column."""
    parsed = []
    for text in texts:
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = None
        parsed.append(value if isinstance(value, dict) else None)
    if any(p is None for p in parsed):
        columns["clips/extra"] = texts
        return
    for name in sorted({k for p in parsed for k in p}):
        columns[f"clips/extra/{name}"] = [None if p.get(name) is None else str(p[name]) for p in parsed]


def _plain(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()] if value.ndim else _plain(value.item())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _as_int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    return None


def _hashable(value):
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


def _example(values: Iterable[str]) -> str:
    value = next(iter(values))
    return repr(value if len(value) <= 60 else value[:57] + "...")


# -- checks that need no key ---------------------------------------------------------------------------------
def _string_findings(strings: dict[str, list[str]]) -> list[dict]:
    out = []
    for field, texts in strings.items():
        paths = [t for t in texts if _PATH.search(t)]
        if paths:
            out.append(finding(field, "names a path", _some(paths, texts, "look like file paths",
                                                            "looks like a file path")))
        named = [t for t in texts if any(int(m.group(1)) != 0 for m in _NTU_PERFORMER.finditer(t))]
        if named:
            out.append(finding(field, "names an NTU performer",
                               _some(named, texts, "hold NTU names with a performer number",
                                     "holds an NTU name with a performer number")))
    return out


def _some(hits: list[str], texts: list[str], plural: str, singular: str) -> str:
    """"3 of 12 values <plural>, e.g. 'x'" or, for one value, "'x' <singular>"."""
    if len(texts) == 1:
        return f"{_example(hits)} {singular}"
    return f"{len(hits)} of {len(texts)} values {plural}, e.g. {_example(hits)}"


# -- subject ---------------------------------------------------------------------------------------------
def _subject_findings(columns: dict[str, list], subjects: np.ndarray) -> list[dict]:
    known = np.flatnonzero(subjects >= 0)
    s = subjects[known].tolist()
    if len(set(s)) < 2:  # one subject (or none known): nothing can tell subjects apart
        return []
    out = []
    for field, values in columns.items():
        v = [values[i] for i in known.tolist()]
        ints = [_as_int(x) for x in v]
        equal = sum(a == b for a, b in zip(ints, s))
        if equal >= MATCH_SHARE * len(s):
            out.append(finding(field, "equals the subject id",
                               f"equal to the subject for {equal} of {len(s)} clips of known subject"))
        elif _one_to_one([_hashable(x) for x in v], s):
            out.append(finding(field, "one-to-one with the subject",
                               f"its {len(set(map(_hashable, v)))} values group the clips exactly as the "
                               f"{len(set(s))} subjects do"))
    return out


def _one_to_one(values: Sequence, subjects: Sequence[int]) -> bool:
    """Values and subjects partition the clips alike (each determines the other), with some subject
    holding two clips or more (otherwise any unique column would qualify)."""
    distinct = len(set(subjects))
    return (len(set(values)) == distinct == len(set(zip(values, subjects)))
            and distinct < len(subjects) and None not in values)


# -- source clip, reference clip, files --------------------------------------------------------------------
def _source_findings(columns: dict[str, list], key: ReleaseKey) -> list[dict]:
    n = len(key.entries)
    index = key.source_indices().tolist()
    names = [e.source_clip for e in key.entries]
    references = [e.reference_clip for e in key.entries]
    out = []
    for field, values in columns.items():
        hashable = [_hashable(v) for v in values]
        unique = None not in hashable and len(set(hashable)) == n
        if unique and _names_or_numbers(values, names, index) >= MATCH_SHARE * n:
            out.append(finding(field, "one-to-one with the source clip",
                               f"unique per clip and holds its source clip's name or index for "
                               f"{_names_or_numbers(values, names, index)} of {n} clips"))
            continue
        named = _contains(values, references)
        with_reference = sum(len(r) >= MIN_NAME for r in references)
        if with_reference and named >= MATCH_SHARE * with_reference:
            out.append(finding(field, "names the reference clip",
                               f"holds the name of the clip's reference for {named} of {with_reference} clips"))
            continue
        numbers = [v if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in values]
        if None in numbers or n < ORDER_MIN_CLIPS or len(set(numbers)) < n / 2:
            continue
        rho = _spearman(np.array(numbers, dtype=np.float64), np.array(index, dtype=np.float64))
        if abs(rho) > ORDER_RHO:
            out.append(finding(field, "follows the source order",
                               f"its values rise and fall with the clips' source indices (Spearman rho {rho:.2f})"))
    return out


def _names_or_numbers(values: list, names: list[str], index: list[int]) -> int:
    """Clips whose value holds the source clip's name, or is (or holds as a number) its index or index + 1."""
    hits = 0
    for value, name, i in zip(values, names, index):
        if isinstance(value, str):
            numbers = {int(d) for d in _DIGITS.findall(value)}
            hits += (len(name) >= MIN_NAME and name in value) or bool(numbers & {i, i + 1})
        else:
            hits += _as_int(value) in (i, i + 1)
    return hits


def _contains(values: list, names: list[str]) -> int:
    return sum(isinstance(v, str) and len(name) >= MIN_NAME and name in v for v, name in zip(values, names))


def _file_name_findings(strings: dict[str, list[str]], key: ReleaseKey) -> list[dict]:
    files = {Path(p).name for p in (key.source_file, key.reference_file) if p and len(Path(p).name) >= MIN_NAME}
    out = []
    for field, texts in strings.items():
        hits = [t for t in texts if any(f in t for f in files)]
        if hits:
            out.append(finding(field, "names the source file",
                               _some(hits, texts, "name the source or reference file",
                                     "names the source or reference file"), "warn"))
    return out


# -- order and frame counts --------------------------------------------------------------------------------
def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 0, ties given their mean rank (so a constant column has no order at all)."""
    ranks = np.empty(len(x))
    ranks[np.argsort(x, kind="stable")] = np.arange(len(x))
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return (np.bincount(inverse, weights=ranks) / counts)[inverse]


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = _ranks(a), _ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return 0.0
    return float(np.corrcoef(ra, rb)[0, 1])


def _order_findings(source_index: np.ndarray) -> list[dict]:
    n = len(source_index)
    if n < ORDER_MIN_CLIPS:
        return []
    rho = _spearman(np.arange(n, dtype=np.float64), source_index.astype(np.float64))
    if (np.diff(source_index) > 0).all():
        return [finding("clip order", "follows the source order", f"the {n} clips are in their source order")]
    if abs(rho) > ORDER_RHO:
        return [finding("clip order", "follows the source order",
                        f"release position and source index correlate (Spearman rho {rho:.2f} over {n} clips)")]
    return []


def _frame_findings(frames: np.ndarray, key: ReleaseKey, raw: ClipSource | None, release_path) -> list[dict]:
    source_index = key.source_indices()
    source_frames = key.column("source_frames")
    if raw is not None:
        raw_frames = np.asarray(raw.metadata_table()["num_frames"], dtype=np.int64)
        if source_index.size and source_index.max() >= len(raw_frames):
            raise DtmrError(f"{key.path}: source index {int(source_index.max())} is beyond the {len(raw_frames)} "
                            f"clips of {raw.path}, which is not the source of {release_path}")
        source_frames = raw_frames[source_index]
        where = f"the {len(raw_frames)} raw clips"
    else:
        raw_frames = source_frames
        where = f"the sources of the {len(raw_frames)} released clips"
    values, counts = np.unique(raw_frames, return_counts=True)
    unique_counts = set(values[counts == 1].tolist())
    same = frames == source_frames
    linked = int(np.count_nonzero(same & np.isin(frames, list(unique_counts))))
    # a released clip whose frame count is unique among the raw clips names one of them: its own source with
    # probability 1 / (raw clips) when frame counts carry no information
    chance = float(np.isin(frames, list(unique_counts)).sum()) / max(len(raw_frames), 1)
    n = len(frames)
    if linked >= FRAMES_MIN_LINKED and linked >= FRAMES_TIMES_CHANCE * chance:
        return [finding("frame count", "frame count links to the source",
                        f"{linked} of {n} clips keep their source's frame count, unique among {where} "
                        f"({chance:.1f} expected by chance); resample with --length")]
    kept = int(np.count_nonzero(same))
    if kept >= max(FRAMES_MIN_LINKED, n / 2):
        return [finding("frame count", "frame count links to the source",
                        f"{kept} of {n} clips keep their source's frame count ({linked} of them unique among "
                        f"{where}): a frame count narrows down the source", "warn")]
    return []
