"""NTU RGB+D `.skeleton` text files: reader, writer and the main-actor `Clip` (SPEC_NOTES §5.3).

Layout: line 1 is the frame count; each frame has a body-count line, then per body one line of 10 values
(bodyID, clipedEdges, handLeftConfidence, handLeftState, handRightConfidence, handRightState, isResticted,
leanX, leanY, trackingState), a joint-count line (25) and 25 lines of 12 values (x, y, z, depthX, depthY,
colorX, colorY, orientationW, orientationX, orientationY, orientationZ, trackingState).

Parsing is vectorized: the token count of every line is computed with NumPy from the raw bytes, a short
Python walk over the frame and body headers checks the structure, and all joint lines are converted to
numbers in one bulk call. Nothing is allocated from a declared count, so a bogus huge count only leads to
a "file ends early" error.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from .atomic import atomic_write
from .bounded_read import read_bounded
from .multi_body import partner_order

JOINTS = 25
JOINT_VALUES = 12  # x y z depthX depthY colorX colorY orientationW X Y Z trackingState
BODY_VALUES = 10  # bodyID + 9 BODY_FIELDS
LINES_PER_BODY = 2 + JOINTS
#: the largest `.skeleton` file read: NTU's longest clips (about 300 frames of up to 4 bodies) take a few MB; a
#: file past this (a sparse file of gigabytes) is refused before it is read, not parsed into memory
MAX_SKELETON_BYTES = 256 * 1024 * 1024
BODY_FIELDS = (
    "clipedEdges", "handLeftConfidence", "handLeftState", "handRightConfidence", "handRightState",
    "isResticted", "leanX", "leanY", "trackingState",
)
JOINT_FIELDS = ("depthX", "depthY", "colorX", "colorY", "orientationW", "orientationX", "orientationY", "orientationZ")
TRACKED = 2
NOT_TRACKED = 0
NTU_FPS = 30.0

_NAME = re.compile(r"S(\d{3})C(\d{3})P(\d{3})R(\d{3})A(\d{3})")
_INT64 = (-(2**63), 2**63 - 1)
_JOINT_COUNTS = [JOINT_VALUES] * JOINTS
_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(eq=False)
class SkeletonBody:
    """One tracked body: the frames it appears in and every per-joint field needed to write it back."""

    body_id: int
    #: (n,) 0-based indices of the file's frames (frames without any body included in the numbering)
    frames: np.ndarray
    #: (n, 25, 3) float64 x, y, z in metres, exactly as written in the file
    joints: np.ndarray
    #: (n, 25, 8) float64, see JOINT_FIELDS
    joint_fields: np.ndarray
    #: (n, 25) int8 tracking state per joint: 0 not tracked, 1 inferred, 2 tracked
    tracking: np.ndarray
    #: (n, 9) float64, see BODY_FIELDS
    body_fields: np.ndarray

    @property
    def num_frames(self) -> int:
        return int(len(self.frames))

    @property
    def motion(self) -> float:
        """Sum over joints and axes of the variance of the position over time (DESIGN §2.2)."""
        return float(self.joints.var(axis=0).sum())


@dataclass(eq=False)
class SkeletonFile:
    """Every body of one `.skeleton` file; `bodies` keeps the order in which bodies first appear."""

    #: number of frames in the file, frames with no body included
    frame_count: int
    bodies: dict[int, SkeletonBody]
    path: str | None = None

    @property
    def body_ids(self) -> list[int]:
        return list(self.bodies)

    @property
    def frames_with_bodies(self) -> np.ndarray:
        """Sorted indices of the frames that hold at least one body (the others are skipped)."""
        if not self.bodies:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate([b.frames for b in self.bodies.values()]))

    @property
    def main_body_id(self) -> int | None:
        """The body with the largest motion (the first to appear on a tie); None when there is no body."""
        if not self.bodies:
            return None
        motions = [b.motion for b in self.bodies.values()]
        return self.body_ids[int(np.argmax(motions))]

    @property
    def main_body(self) -> SkeletonBody | None:
        body_id = self.main_body_id
        return None if body_id is None else self.bodies[body_id]

    def to_clip(self, body_id: int | None = None) -> Clip:
        """The clip of one body (the main actor by default) in the frames it appears in.

        A joint at exactly (0, 0, 0) is missing (NaN): Kinect camera space puts every real joint at z > 0.
        Labels come from the file name `SsssCcccPpppRrrrAaaa`; other names give unknown labels. The body with
        the most motion among the others (`dtmr.io.multi_body.partner_order`) is the clip's partner, in the
        clip's frames (NaN where it is absent); `extra["partner_body_ids"]` names it.
        """
        if not self.bodies:
            raise InputError(self.path, "no body in any frame")
        body = self.bodies[self.main_body_id if body_id is None else body_id]
        joints = body.joints.astype(np.float32)
        joints[(body.joints == 0).all(axis=-1)] = np.nan
        partners, partner_ids = self._partners(body)
        name = Path(self.path).stem if self.path else None
        labels = parse_ntu_name(name) if name else None
        extra = {"body_id": str(body.body_id)}
        if partner_ids:
            extra["partner_body_ids"] = ",".join(partner_ids)
        if labels:
            extra["setup"] = str(labels["setup"])
        return Clip(
            joints=joints,
            topology="ntu25",
            fps=NTU_FPS,
            subject=labels["performer"] if labels else None,
            action=labels["action"] if labels else None,
            view=labels["camera"] if labels else None,
            repetition=labels["replication"] if labels else None,
            source_file=self.path,
            sample_name=name,
            extra=extra,
            partners=partners,
        )

    def _partners(self, main: SkeletonBody) -> tuple[np.ndarray | None, list[str]]:
        """(P, n, 25, 3) partners of `main` in its n frames (NaN where absent or missing), and their body ids."""
        ids = self.body_ids
        motions = [b.motion for b in self.bodies.values()]
        kept, names = [], []
        for index in partner_order(motions, ids.index(main.body_id)):
            other = self.bodies[ids[index]]
            joints = np.full((main.num_frames, JOINTS, 3), np.nan, dtype=np.float32)
            at = np.searchsorted(other.frames, main.frames)
            at = np.minimum(at, other.num_frames - 1)
            shared = other.frames[at] == main.frames
            if not shared.any():
                continue
            joints[shared] = other.joints[at[shared]]
            joints[(joints == 0).all(axis=-1)] = np.nan
            kept.append(joints)
            names.append(str(other.body_id))
        return (np.stack(kept) if kept else None), names


def parse_ntu_name(name: str) -> dict[str, int] | None:
    """setup, camera, performer, replication, action from a name starting with `SsssCcccPpppRrrrAaaa`."""
    match = _NAME.match(name)
    if not match:
        return None
    keys = ("setup", "camera", "performer", "replication", "action")
    return dict(zip(keys, (int(g) for g in match.groups())))


def read_skeleton_file(path: str | Path) -> SkeletonFile:
    """Parse a `.skeleton` file; any malformation raises InputError(path, ..., line=<1-based>)."""
    path = Path(path)
    return parse_skeleton_bytes(read_bounded(path, MAX_SKELETON_BYTES, "a .skeleton file"), str(path))


def read_ntu_clip(path: str | Path) -> Clip:
    """The main actor of a `.skeleton` file as a `Clip` (ntu25, 30 fps, labels from the file name)."""
    return read_skeleton_file(path).to_clip()


class _Lines:
    """Line boundaries and per-line token counts of a byte buffer, computed without Python loops."""

    def __init__(self, data: bytes, path: str):
        self.data = data
        self.path = path
        raw = np.frombuffer(data, dtype=np.uint8)
        newlines = np.flatnonzero(raw == ord("\n"))
        self.starts = np.concatenate(([0], newlines + 1))
        self.ends = np.concatenate((newlines, [len(data)]))
        binary = (raw > 126) | (raw < 9) | ((raw > 13) & (raw < 32))  # white space is 9..13 and 32
        if binary.any():
            at = int(np.argmax(binary))
            line = int(np.searchsorted(newlines, at)) + 1
            raise InputError(path, f"not a text file (byte 0x{raw[at]:02x})", line=line)
        blank = raw <= 32  # only the ASCII white space is left below 33
        token_start = ~blank
        token_start[1:] &= blank[:-1]
        first_bytes = np.flatnonzero(token_start)
        self.counts = np.searchsorted(first_bytes, self.ends) - np.searchsorted(first_bytes, self.starts)
        # Python lists for the header walk: indexing them is far cheaper than indexing NumPy arrays
        self.count_list = self.counts.tolist()
        self.start_list = self.starts.tolist()
        self.end_list = self.ends.tolist()

    def __len__(self) -> int:
        return len(self.start_list)

    def text(self, ln: int) -> bytes:
        return self.data[self.start_list[ln]:self.end_list[ln]]

    def span(self, first: int, last: int) -> bytes:
        """Bytes of lines first..last (inclusive)."""
        return self.data[self.start_list[first]:self.end_list[last]]

    def error(self, ln: int, message: str) -> InputError:
        return InputError(self.path, message, line=ln + 1)

    def expect_tokens(self, ln: int, count: int, what: str) -> None:
        if self.count_list[ln] != count:
            raise self.error(ln, f"{what}: expected {count} values, found {self.count_list[ln]}")

    def integer(self, ln: int, what: str, token: bytes | None = None) -> int:
        if token is None:
            self.expect_tokens(ln, 1, what)
            token = self.text(ln)
        try:
            value = int(token)
        except ValueError:
            raise self.error(ln, f"{what}: not an integer: {_show(token.strip())}") from None
        if not _INT64[0] <= value <= _INT64[1]:
            raise self.error(ln, f"{what}: {value} is out of range")
        return value


def _show(token: bytes) -> str:
    text = token.decode("latin-1")
    return repr(text if len(text) <= 24 else text[:24] + "...")


def parse_skeleton_bytes(data: bytes, path: str) -> SkeletonFile:
    """Parse the bytes of a `.skeleton` file; `path` is only used in error messages and the result."""
    if not data.strip():
        raise InputError(path, "empty file", line=1)
    lines = _Lines(data, path)
    frame_count = lines.integer(0, "frame count")
    if frame_count < 0:
        raise lines.error(0, f"negative frame count {frame_count}")

    body_lines: list[int] = []  # line of each body header, in file order
    block_ids: list[int] = []
    block_frames: list[int] = []
    last_content = int(np.flatnonzero(lines.counts)[-1])
    ln = 1
    for frame in range(frame_count):  # each frame consumes at least one line, so this ends with the file
        if ln > last_content:
            raise InputError(path, f"file ends after {frame} of {frame_count} frames", line=last_content + 1)
        body_count = lines.integer(ln, "body count")
        if body_count < 0:
            raise lines.error(ln, f"negative body count {body_count}")
        if ln + body_count * LINES_PER_BODY > last_content:
            raise lines.error(
                last_content, f"file ends inside frame {frame + 1} ({body_count} bodies declared on line {ln + 1})"
            )
        ln += 1
        seen: set[int] = set()
        for _ in range(body_count):
            lines.expect_tokens(ln, BODY_VALUES, "body line")
            body_id = lines.integer(ln, "body id", lines.text(ln).split(None, 1)[0])
            if body_id in seen:
                raise lines.error(ln, f"body {body_id} appears twice in frame {frame + 1}")
            seen.add(body_id)
            joint_count = lines.integer(ln + 1, "joint count")
            if joint_count != JOINTS:
                raise lines.error(ln + 1, f"expected {JOINTS} joints, found {joint_count}")
            if lines.count_list[ln + 2:ln + 2 + JOINTS] != _JOINT_COUNTS:
                bad = next(k for k in range(ln + 2, ln + 2 + JOINTS) if lines.count_list[k] != JOINT_VALUES)
                raise lines.error(bad, f"joint line: expected {JOINT_VALUES} values, found {lines.count_list[bad]}")
            body_lines.append(ln)
            block_ids.append(body_id)
            block_frames.append(frame)
            ln += LINES_PER_BODY
    trailing = np.flatnonzero(lines.counts[ln:])
    if len(trailing):
        raise lines.error(ln + int(trailing[0]), f"unexpected content after the last of {frame_count} frames")

    if not body_lines:
        return SkeletonFile(frame_count=frame_count, bodies={}, path=path)
    heads = np.asarray(body_lines, dtype=np.int64)
    body_values = _parse_numbers(lines, heads, 1, BODY_VALUES)
    joint_values = _parse_numbers(lines, heads + 2, JOINTS, JOINT_VALUES).reshape(len(heads), JOINTS, JOINT_VALUES)
    checks = (
        (~np.isin(joint_values[..., -1], (0, 1, 2)), "joint tracking state must be 0, 1 or 2"),
        ((np.abs(joint_values[..., :3]) > _FLOAT32_MAX).any(axis=-1), "coordinate out of the float32 range"),
    )
    for bad, message in checks:
        if bad.any():
            block, joint = np.argwhere(bad)[0]
            raise lines.error(int(heads[block]) + 2 + int(joint), message)
    return SkeletonFile(
        frame_count=frame_count,
        bodies=_group_bodies(block_ids, np.asarray(block_frames), body_values, joint_values),
        path=path,
    )


def _parse_numbers(lines: _Lines, firsts: np.ndarray, run: int, width: int) -> np.ndarray:
    """Rows of `width` finite numbers from the runs of `run` lines starting at `firsts` (token counts checked)."""
    blob = b"\n".join(lines.span(f, f + run - 1) for f in firsts.tolist())
    try:
        values = np.loadtxt(io.BytesIO(blob), dtype=np.float64, comments=None, ndmin=2)
    except ValueError:
        values = _parse_numbers_slowly(lines, firsts, run)
    if values.shape != (len(firsts) * run, width):
        values = _parse_numbers_slowly(lines, firsts, run)
    finite = np.isfinite(values).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        raise lines.error(int(firsts[row // run]) + row % run, "value is not finite (NaN or infinity)")
    return values


def _parse_numbers_slowly(lines: _Lines, firsts: np.ndarray, run: int) -> np.ndarray:
    """Token by token, only after the bulk parse failed: finds the offending line or parses what it missed."""
    rows = []
    for first in firsts:
        for ln in range(int(first), int(first) + run):
            row = []
            for token in lines.text(ln).split():
                try:
                    row.append(float(token))
                except ValueError:
                    raise lines.error(ln, f"not a number: {_show(token)}") from None
            rows.append(row)
    return np.asarray(rows, dtype=np.float64)


def _group_bodies(ids: list[int], frames: np.ndarray, body_values: np.ndarray, joint_values: np.ndarray) -> dict:
    unique, first_seen, which = np.unique(np.asarray(ids, dtype=np.int64), return_index=True, return_inverse=True)
    bodies: dict[int, SkeletonBody] = {}
    for k in np.argsort(first_seen):
        rows = np.flatnonzero(which == k)
        block = joint_values[rows]
        bodies[int(unique[k])] = SkeletonBody(
            body_id=int(unique[k]),
            frames=frames[rows].astype(np.int64),
            joints=np.ascontiguousarray(block[..., :3]),
            joint_fields=np.ascontiguousarray(block[..., 3:11]),
            tracking=block[..., 11].astype(np.int8),
            body_fields=body_values[rows, 1:],
        )
    return bodies


def skeleton_from_clip(clip: Clip, path: str | Path | None = None) -> SkeletonFile:
    """A `.skeleton` structure for an ntu25 clip: its person, then its partners (`Clip.partners`).

    Fields a `Clip` does not carry are 0, the body and joint tracking states are 2 (tracked), a NaN joint
    is written as (0, 0, 0) with tracking state 0. The body id is `extra["body_id"]` when it is an
    integer (clips read from `.skeleton` files keep theirs), else 0; partners take the ids of
    `extra["partner_body_ids"]` when those are distinct integers, else the next ids after the main one. A
    partner is written in the frames where it has a joint (NaN frames: absent).
    """
    if clip.topology != "ntu25":
        raise InputError(
            path, f"clip {clip.name} has topology {clip.topology}; a .skeleton file holds ntu25 joints only"
            " (export it to .npz, or map it first with dtmr.skeleton.to_ntu25)"
        )
    n = clip.num_frames
    body_id = clip.extra.get("body_id", "0")
    main_id = int(body_id) if body_id.lstrip("-").isdigit() and _in_int64(int(body_id)) else 0
    bodies = {main_id: _body(main_id, clip.joints, np.arange(n, dtype=np.int64))}
    partners = [] if clip.partners is None else list(clip.partners)
    for partner_id, partner in zip(_partner_ids(clip, main_id, len(partners)), partners):
        frames = np.flatnonzero(~np.isnan(partner).all(axis=(1, 2)))
        if len(frames):
            bodies[partner_id] = _body(partner_id, partner[frames], frames)
    return SkeletonFile(frame_count=n, bodies=bodies, path=None if path is None else str(path))


def _in_int64(value: int) -> bool:
    return _INT64[0] <= value <= _INT64[1]


def _partner_ids(clip: Clip, main_id: int, count: int) -> list[int]:
    """The partners' body ids: `extra["partner_body_ids"]` when it names `count` distinct integers other than
    `main_id`, else main_id + 1, + 2, ... (main_id - 1, ... at the top of the int64 range)."""
    named = [t for t in clip.extra.get("partner_body_ids", "").split(",") if t]
    if len(named) == count and all(t.lstrip("-").isdigit() and _in_int64(int(t)) for t in named):
        ids = [int(t) for t in named]
        if len(set(ids)) == count and main_id not in ids:
            return ids
    step = 1 if main_id + count <= _INT64[1] else -1
    return [main_id + step * (k + 1) for k in range(count)]


def _body(body_id: int, joints: np.ndarray, frames: np.ndarray) -> SkeletonBody:
    """A body of the writer: (n, 25, 3) joints (NaN: missing, written as 0 with tracking state 0) in `frames`."""
    n = len(frames)
    missing = np.isnan(joints).any(axis=-1)
    body_fields = np.zeros((n, len(BODY_FIELDS)), dtype=np.float64)
    body_fields[:, BODY_FIELDS.index("trackingState")] = TRACKED
    return SkeletonBody(
        body_id=body_id,
        frames=frames,
        joints=np.where(missing[..., None], 0.0, joints.astype(np.float64)),
        joint_fields=np.zeros((n, JOINTS, len(JOINT_FIELDS)), dtype=np.float64),
        tracking=np.where(missing, NOT_TRACKED, TRACKED).astype(np.int8),
        body_fields=body_fields,
    )


_BODY_LINE = "%d" + " %.10G" * len(BODY_FIELDS)
_JOINT_BLOCK = f"{JOINTS}\r\n" + "\r\n".join(["%.10G " * (JOINT_VALUES - 1) + "%d"] * JOINTS)


def format_skeleton(skeleton: SkeletonFile) -> bytes:
    """The `.skeleton` text (CRLF line ends, as in the NTU release); numbers keep 10 significant digits."""
    entries = []  # (frame, order of the body, text of its lines in that frame)
    for order, body in enumerate(skeleton.bodies.values()):
        _check_body(body, skeleton.frame_count)
        joint_rows = np.concatenate(
            [body.joints, body.joint_fields, body.tracking[..., None].astype(np.float64)], axis=-1
        ).reshape(body.num_frames, -1)
        for frame, fields, joints in zip(body.frames.tolist(), body.body_fields.tolist(), joint_rows.tolist()):
            entries.append((frame, order, _BODY_LINE % (body.body_id, *fields) + "\r\n" + _JOINT_BLOCK % tuple(joints)))
    entries.sort(key=lambda e: (e[0], e[1]))
    per_frame = np.bincount([e[0] for e in entries], minlength=skeleton.frame_count)
    out = [str(skeleton.frame_count)]
    k = 0
    for count in per_frame.tolist():
        out.append(str(count))
        out.extend(e[2] for e in entries[k:k + count])
        k += count
    return ("\r\n".join(out) + "\r\n").encode("ascii")


def _check_body(body: SkeletonBody, frame_count: int) -> None:
    n = body.num_frames
    shapes = {
        "joints": (body.joints.shape, (n, JOINTS, 3)),
        "joint_fields": (body.joint_fields.shape, (n, JOINTS, len(JOINT_FIELDS))),
        "tracking": (body.tracking.shape, (n, JOINTS)),
        "body_fields": (body.body_fields.shape, (n, len(BODY_FIELDS))),
    }
    for name, (got, want) in shapes.items():
        if tuple(got) != want:
            raise ValueError(f"body {body.body_id}: {name} has shape {tuple(got)}, expected {want}")
    if n and (body.frames.min() < 0 or body.frames.max() >= frame_count or len(np.unique(body.frames)) != n):
        raise ValueError(f"body {body.body_id}: frame indices must be distinct and within 0..{frame_count - 1}")
    for name in ("joints", "joint_fields", "body_fields"):
        if not np.isfinite(getattr(body, name)).all():
            raise ValueError(f"body {body.body_id}: {name} has non-finite values")


def write_skeleton_file(path: str | Path, data: SkeletonFile | Clip) -> None:
    """Write a `SkeletonFile`, or an ntu25 `Clip` (its person and its partners), atomically."""
    skeleton = data if isinstance(data, SkeletonFile) else skeleton_from_clip(data, path)
    text = format_skeleton(skeleton)
    with atomic_write(path) as tmp:
        tmp.write_bytes(text)
