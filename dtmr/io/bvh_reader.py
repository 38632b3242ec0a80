"""BVH (Biovision Hierarchy) motion capture: parser, forward kinematics and the clip reader.

A BVH file is a joint tree (`HIERARCHY`: `ROOT`, `JOINT`, `End Site`, each with an `OFFSET` from its parent and
`CHANNELS`, any subset of X/Y/Z position/rotation in any order) followed by `MOTION`: `Frames: N`,
`Frame Time: s` and N lines of channel values. `parse_bvh` reads one into a `BvhFile`; `BvhFile.positions` runs
forward kinematics; `read_bvh` returns a clip source. Conventions (docs/io.md, BVH):

* rotation channels are degrees, composed in the order they are listed: ``Zrotation Xrotation Yrotation`` is
  ``Rz @ Rx @ Ry`` acting on column vectors; a joint's world rotation is its parent's times its own;
* a position channel *replaces* that axis of the joint's `OFFSET` (as Blender's importer reads a root with
  position channels, and as Blender writes every joint); a joint's position is its parent's plus the parent's
  world rotation times its offset;
* a file whose joint names are those of a registered topology (our writer's, or a tool's re-export of it) is
  read as that topology, y up, its unit guessed from the rest pose's extent;
* any other humanoid rig is mapped onto NTU-25 (`dtmr.io.bvh_rigs`: by the names of the common rigs, by the
  tree's shape, or by a joint map), its unit chosen to make the body a person's size (`dtmr.io.body_size`) and
  its up axis read from the data with BVH's y up as the prior (`dtmr.io.up_axis`); what was decided is stated in
  the clip's `extra` (`dtmr.io.import_notes`).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import MAX_FPS, MIN_FPS, Clip
from ..errors import InputError
from ..skeleton import get_topology, topology_names
from . import body_size, import_notes, up_axis
from .bounded_read import read_bounded
from .bvh_rigs import RigMapping, RigNode, map_rig
from .clip_source import InMemoryClipSource
from .topology_arg import check_topology_name

BVH_SUFFIX = ".bvh"
#: files larger than this are refused before they are read
MAX_BYTES = 128 * 2**20
#: ROOT, JOINT and End Site entries together
MAX_NODES = 1024
MAX_FRAMES = 1_000_000
MAX_NAME_CHARS = 256
#: metres per file unit
UNITS = body_size.UNITS
#: the writer's zero-offset joint that lets one child of a branching joint turn on its own: `{parent}_to_{child}`
BRANCH_INFIX = "_to_"
#: frames per forward-kinematics batch (bounds the (frames, 3, 3) temporaries)
_FK_BATCH = 8192
_POSITION = ("XPOSITION", "YPOSITION", "ZPOSITION")
_ROTATION = ("XROTATION", "YROTATION", "ZROTATION")
_CHANNEL_NAMES = {n.upper(): n for n in ("Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation")}
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_NOT_FINITE = "forward kinematics gives positions that are not finite (offsets or values too large)"


@dataclass(frozen=True)
class BvhNode:
    name: str
    parent: int  # index into `BvhFile.nodes`, -1 for the root
    offset: tuple[float, float, float]
    channels: tuple[str, ...]  # e.g. ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
    end_site: bool = False


@dataclass(eq=False)
class BvhFile:
    path: str
    nodes: list[BvhNode]  # parents before children, in file order
    frame_time: float
    values: np.ndarray  # (frames, channels) float64, columns in node order

    @property
    def joints(self) -> list[int]:
        """Indices of the ROOT and JOINT entries (not the End Sites)."""
        return [i for i, n in enumerate(self.nodes) if not n.end_site]

    def rest_positions(self) -> np.ndarray:
        """(nodes, 3) the rest pose: offsets only, no channels, End Sites included, in file units."""
        rest = np.zeros((len(self.nodes), 3))
        for i, node in enumerate(self.nodes):
            rest[i] = node.offset if node.parent < 0 else rest[node.parent] + node.offset
        return rest

    def rest_extent(self) -> float:
        """Largest extent along one axis of the rest pose (offsets only, End Sites included), in file units."""
        rest = self.rest_positions()
        return float((rest.max(axis=0) - rest.min(axis=0)).max())

    def positions(self, nodes: list[int] | None = None, scale: float = 1.0, weights: np.ndarray | None = None
                  ) -> np.ndarray:
        """(frames, len(nodes), 3) float64 world positions (times `scale`) by forward kinematics; with `weights`
        (K, all nodes), the (frames, K, 3) combinations `weights @ positions` instead (`RigMapping.weights`)."""
        nodes = list(range(len(self.nodes))) if nodes is None else nodes
        count = len(nodes) if weights is None else len(weights)
        out = np.empty((len(self.values), count, 3), dtype=np.float64)
        for start in range(0, len(self.values), _FK_BATCH):
            batch = self.values[start : start + _FK_BATCH]
            world = self._forward(batch)
            picked = world[:, nodes] if weights is None else np.einsum("kn,fnc->fkc", weights, world)
            out[start : start + len(batch)] = picked * scale
        return out

    def _forward(self, values: np.ndarray) -> np.ndarray:
        frames = len(values)
        position = np.zeros((frames, len(self.nodes), 3))
        rotation = np.zeros((frames, len(self.nodes), 3, 3))
        column = 0
        for i, node in enumerate(self.nodes):
            local_t = np.broadcast_to(np.array(node.offset, dtype=np.float64), (frames, 3)).copy()
            local_r = np.broadcast_to(np.eye(3), (frames, 3, 3))
            for name in node.channels:
                upper = name.upper()
                if upper in _POSITION:
                    local_t[:, _POSITION.index(upper)] = values[:, column]
                else:
                    local_r = local_r @ axis_rotation(_ROTATION.index(upper), np.radians(values[:, column]))
                column += 1
            if node.parent < 0:
                position[:, i] = local_t
                rotation[:, i] = local_r
            else:
                parent_r = rotation[:, node.parent]
                position[:, i] = position[:, node.parent] + np.einsum("fij,fj->fi", parent_r, local_t)
                rotation[:, i] = parent_r @ local_r
        return position


def axis_rotation(axis: int, angle: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotation by `angle` radians about x (0), y (1) or z (2), acting on column vectors."""
    angle = np.asarray(angle, dtype=np.float64)
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros(angle.shape + (3, 3))
    a, b = (axis + 1) % 3, (axis + 2) % 3
    out[..., axis, axis] = 1.0
    out[..., a, a] = c
    out[..., b, b] = c
    out[..., a, b] = -s
    out[..., b, a] = s
    return out


def is_bvh(path) -> bool:
    """True for a file whose first bytes are the keyword HIERARCHY, whatever its name (the output guard asks
    it: a `notes.bvh` that is not BVH must not be taken for one and replaced). Never raises."""
    try:
        path = Path(path)
        if not path.is_file():
            return False
        with open(path, "rb") as fh:
            head = fh.read(4096)
        return head.lstrip(b"\xef\xbb\xbf \t\r\n").upper().startswith(b"HIERARCHY")
    except (OSError, ValueError, TypeError):
        return False


def read_bvh(path: str | Path, topology: str | None = None, unit: str | None = None, up: str | None = None,
             scale: float | None = None, joint_map: str | Path | None = None):
    """One clip from a BVH file. Returns an `InMemoryClipSource`.

    Joints named as a registered topology's are read as that topology (`topology` must then agree); any other
    humanoid rig is mapped onto ntu25 (`joint_map`: a JSON file {BVH joint: NTU-25 joint} decides instead).
    `unit` ("m", "cm", "mm", "in") or `scale` (metres per unit) override the unit's guess; `up` ("+x" ... "-z",
    "x" = "+x") names the file's up axis instead of BVH's y (our names) or the one the data shows (other rigs).
    The writer's branch joints (`{parent}_to_{child}`) are dropped.
    """
    path = str(path)
    check_topology_name(topology, path)
    if unit is not None and unit not in UNITS:
        raise InputError(path, f"unknown unit {unit!r} (known: {', '.join(UNITS)})")
    if scale is not None and not (np.isfinite(scale) and scale > 0):
        raise InputError(path, f"the scale must be a positive number of metres per unit, got {scale!r}")
    try:
        up = up_axis.normalize_up(up)
    except ValueError as exc:
        raise InputError(path, str(exc)) from None
    bvh = parse_bvh(path)
    kept, parents = _topology_joints(bvh)
    topo = None if joint_map is not None else _match_topology(bvh, kept, parents, topology)
    if topo is None:
        return _read_rig(bvh, unit, up, scale, joint_map)
    order = [kept[name] for name in topo.joint_names]
    metres = scale if scale is not None else UNITS[unit or guess_unit(bvh.rest_extent())]
    joints = _finite(bvh, lambda: bvh.positions(order, metres))
    if up is not None:
        joints = up_axis.turn_upright(joints, up)
    clip = Clip(joints=joints, topology=topo.name, fps=fps_of(bvh.frame_time), sample_name=Path(path).stem,
                source_file=path)
    return InMemoryClipSource(path, "bvh", topo.name, [clip])


def _read_rig(bvh: BvhFile, unit: str | None, up: str | None, scale: float | None, joint_map) -> InMemoryClipSource:
    """A rig that is no registered topology, mapped onto ntu25, sized and turned upright."""
    mapping = _rig_mapping(bvh, joint_map)
    joints = _finite(bvh, lambda: bvh.positions(weights=mapping.weights))
    height = body_size.body_height(joints, "ntu25")
    metres, unit_note = body_size.metres_per_unit(bvh.path, height, unit, scale)
    joints = joints * metres
    size_warning = body_size.check_height(bvh.path, height * metres, given=unit is not None or scale is not None)
    choice = up_axis.choose_up(joints, "ntu25", prior="+y", given=up)
    joints = up_axis.turn_upright(joints, choice.axis)
    if np.abs(joints).max() > _FLOAT32_MAX:
        raise InputError(bvh.path, _NOT_FINITE)
    extra = import_notes.notes(f"BVH rig: {mapping.rig}; {unit_note}; height {height * metres:.2f} m; "
                               f"{choice.note()}", choice.warning(), size_warning)
    clip = Clip(joints=joints, topology="ntu25", fps=fps_of(bvh.frame_time), sample_name=Path(bvh.path).stem,
                source_file=bvh.path, extra=extra)
    return InMemoryClipSource(bvh.path, "bvh", "ntu25", [clip])


def _rig_mapping(bvh: BvhFile, joint_map) -> RigMapping:
    nodes = [RigNode(n.name, n.parent, n.end_site) for n in bvh.nodes]
    with np.errstate(over="ignore", invalid="ignore"):
        rest = bvh.rest_positions()
    if not np.isfinite(rest).all():
        raise InputError(bvh.path, _NOT_FINITE)
    if not np.ptp(rest, axis=0).max() > 0:  # every offset zero: the pose is in the channels (first frame's)
        first = BvhFile(bvh.path, bvh.nodes, bvh.frame_time, bvh.values[:1])
        rest = _finite(first, first.positions)[0]
    return map_rig(bvh.path, nodes, rest, joint_map)


def _finite(bvh: BvhFile, compute) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        joints = compute()
    if not np.isfinite(joints).all() or np.abs(joints).max() > _FLOAT32_MAX:
        raise InputError(bvh.path, _NOT_FINITE)
    return joints


def guess_unit(extent: float) -> str:
    """The unit of a rest pose `extent` units across: metres for 0.3-3, millimetres for 300-3000, else centimetres
    (the usual unit of motion-capture BVH files, and what `write_bvh` writes)."""
    if 0.3 <= extent < 3.0:
        return "m"
    if 300.0 <= extent < 3000.0:
        return "mm"
    return "cm"


def fps_of(frame_time: float) -> float:
    """1 / Frame Time, rounded to the nearest integer when within 0.01 % of it (files write 0.033333 for 30 Hz)."""
    fps = 1.0 / frame_time
    nearest = round(fps)
    return float(nearest) if nearest > 0 and abs(fps - nearest) <= 1e-4 * fps else fps


def _topology_joints(bvh: BvhFile) -> tuple[dict[str, int], dict[str, str | None]]:
    """Name -> node index of the joints that count (not End Sites, not branch joints) and each one's parent name
    among them (None for the root)."""
    nodes = bvh.nodes
    children: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for i, node in enumerate(nodes):
        if node.parent >= 0:
            children[node.parent].append(i)

    def is_branch(i: int) -> bool:
        node = nodes[i]
        kids = [k for k in children[i] if not nodes[k].end_site]
        # position channels are allowed: Blender's export writes them on every joint (at the offset, 0 here)
        return (node.parent >= 0 and len(kids) == 1 and node.offset == (0.0, 0.0, 0.0)
                and node.name == f"{nodes[node.parent].name}{BRANCH_INFIX}{nodes[kids[0]].name}")

    kept: dict[str, int] = {}
    parents: dict[str, str | None] = {}
    for i in bvh.joints:
        if is_branch(i):
            continue
        p = nodes[i].parent
        while p >= 0 and is_branch(p):
            p = nodes[p].parent
        kept[nodes[i].name] = i
        parents[nodes[i].name] = None if p < 0 else nodes[p].name
    return kept, parents


def _match_topology(bvh: BvhFile, kept: dict[str, int], parents: dict[str, str | None], requested: str | None):
    """The registered topology whose joint names the file has (on the same tree), None when none has them and
    the file may be read as a rig onto ntu25."""
    names = set(kept)
    candidates = [get_topology(requested)] if requested else [get_topology(n) for n in topology_names()]
    for topo in candidates:
        if set(topo.joint_names) != names:
            continue
        for j, name in enumerate(topo.joint_names):
            expected = None if topo.parents[j] < 0 else topo.joint_names[topo.parents[j]]
            if parents[name] != expected:
                raise InputError(bvh.path, f"joint names are those of {topo.name} but {name} hangs off "
                                           f"{parents[name] or 'nothing'}, not {expected or 'nothing'}")
        return topo
    if requested not in (None, "ntu25"):
        found = list(kept)
        shown = ", ".join(found[:40]) + (f" ... ({len(found)} in all)" if len(found) > 40 else "")
        raise InputError(bvh.path, f"its joints ({shown}) are not those of {requested} (another rig is read as "
                                   "ntu25)")
    return None


# -- parsing -----------------------------------------------------------------------------------------------------
_FRAMES = re.compile(r"FRAMES:\s*(\S+)", re.IGNORECASE)
_FRAME_TIME = re.compile(r"FRAME\s+TIME:\s*(\S+)", re.IGNORECASE)
_WHITESPACE = np.frombuffer(b" \t\r\n\x0b\x0c", dtype=np.uint8)


def parse_bvh(path: str | Path) -> BvhFile:
    """Parse a BVH file; anything malformed, truncated, too large or not finite raises InputError naming it."""
    path = str(path)
    raw = read_bounded(path, MAX_BYTES, "a BVH file")
    if b"\x00" in raw:
        raise InputError(path, "not a text file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text (byte {exc.start})") from None
    lines = text.split("\n")
    motion_line = next((i for i, line in enumerate(lines) if line.strip().upper() == "MOTION"), None)
    nodes = _parse_hierarchy(lines[:motion_line], path)  # all lines when there is no MOTION: its errors first
    if motion_line is None:
        raise InputError(path, "no MOTION section after the hierarchy", line=len(lines))
    channel_count = sum(len(n.channels) for n in nodes)
    if channel_count == 0:
        raise InputError(path, "the hierarchy has no channels, so there is no motion to read")
    header, line_no = [], motion_line + 1
    while len(header) < 2 and line_no < len(lines):
        if lines[line_no].strip():
            header.append((line_no, lines[line_no]))
        line_no += 1
    if len(header) < 2:
        raise InputError(path, "file ends before 'Frames:' and 'Frame Time:'", line=len(lines))
    frames = _header_number(header[0], _FRAMES, "Frames:", path)
    frame_time = _header_number(header[1], _FRAME_TIME, "Frame Time:", path)
    if not (np.isfinite(frames) and frames == int(frames) and 1 <= frames <= MAX_FRAMES):
        raise InputError(path, f"Frames must be a whole number from 1 to {MAX_FRAMES}, got {frames:g}",
                         line=header[0][0] + 1)
    if not 1.0 / MAX_FPS <= frame_time <= 1.0 / MIN_FPS:  # also NaN
        raise InputError(path, f"Frame Time must be from {1.0 / MAX_FPS:g} to {1.0 / MIN_FPS:g} s, got "
                               f"{frame_time:g}", line=header[1][0] + 1)
    body_start = sum(len(line) + 1 for line in lines[:line_no])
    values = _parse_values(text[body_start:], int(frames), channel_count, line_no, path)
    return BvhFile(path=path, nodes=nodes, frame_time=frame_time, values=values)


def _header_number(entry: tuple[int, str], pattern: re.Pattern, what: str, path: str) -> float:
    line_no, line = entry
    found = pattern.fullmatch(line.strip())
    if not found:
        raise InputError(path, f"expected '{what}' after MOTION", line=line_no + 1)
    try:
        return float(found.group(1))
    except ValueError:
        raise InputError(path, f"{what} needs a number, got {found.group(1)[:40]!r}", line=line_no + 1) from None


def _parse_values(body: str, frames: int, channels: int, first_line: int, path: str) -> np.ndarray:
    """(frames, channels) from the MOTION lines: each non-blank line one frame of exactly `channels` numbers."""
    data = body.encode("utf-8")
    bytes_ = np.frombuffer(data, dtype=np.uint8)
    space = np.isin(bytes_, _WHITESPACE)
    starts = np.flatnonzero(~space & np.concatenate(([True], space[:-1])))
    line_of_token = np.searchsorted(np.flatnonzero(bytes_ == ord("\n")), starts)
    counts = np.bincount(line_of_token)
    data_lines = np.flatnonzero(counts)
    if len(data_lines) < frames:
        last = first_line + body.count("\n") + 1
        raise InputError(path, f"file ends after {len(data_lines)} of {frames} frames", line=last)
    if len(data_lines) > frames:
        raise InputError(path, f"more lines of values than the {frames} frames declared",
                         line=first_line + int(data_lines[frames]) + 1)
    wrong = np.flatnonzero(counts[data_lines] != channels)
    if wrong.size:
        line = int(data_lines[wrong[0]])
        raise InputError(path, f"frame {wrong[0] + 1} has {int(counts[line])} values, the hierarchy declares "
                               f"{channels} channels", line=first_line + line + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            values = np.fromstring(body, dtype=np.float64, sep=" ")
        except (ValueError, DeprecationWarning):
            values = np.empty(0)
    if values.size != frames * channels:
        _raise_bad_number(body, first_line, path)
    values = values.reshape(frames, channels)
    bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
    if bad.size:
        raise InputError(path, f"frame {bad[0] + 1} has a value that is not finite",
                         line=first_line + int(data_lines[bad[0]]) + 1)
    return values


def _raise_bad_number(body: str, first_line: int, path: str) -> None:
    for i, line in enumerate(body.split("\n")):
        for token in line.split():
            try:
                float(token)
            except ValueError:
                raise InputError(path, f"not a number: {token[:40]!r}", line=first_line + i + 1) from None
    raise InputError(path, "the frame values cannot be read as numbers", line=first_line + 1)


def _hierarchy_tokens(lines: list[str], path: str) -> list[tuple[str, int]]:
    """(token, 1-based line) pairs; the name after ROOT/JOINT is the rest of its line (names may hold spaces)."""
    tokens: list[tuple[str, int]] = []
    for n, line in enumerate(lines, 1):
        words = line.split()
        if words and words[0].upper() in ("ROOT", "JOINT"):
            brace = words[-1] == "{" and len(words) > 2
            name = " ".join(words[1 : len(words) - brace])
            if len(name) > MAX_NAME_CHARS:
                raise InputError(path, f"joint name longer than {MAX_NAME_CHARS} characters", line=n)
            tokens += [(words[0].upper(), n), (name, n)] + ([("{", n)] if brace else [])
        else:
            tokens += [(w, n) for w in words]
    return tokens


def _parse_hierarchy(lines: list[str], path: str) -> list[BvhNode]:
    tokens = _hierarchy_tokens(lines, path)
    pos = 0

    def take(what: str) -> tuple[str, int]:
        nonlocal pos
        if pos >= len(tokens):
            raise InputError(path, f"hierarchy ends where {what} was expected", line=len(lines) + 1)
        pos += 1
        return tokens[pos - 1]

    def numbers(count: int, what: str) -> list[float]:
        out = []
        for _ in range(count):
            token, n = take(what)
            try:
                value = float(token)
            except ValueError:
                raise InputError(path, f"{what} needs numbers, got {token[:40]!r}", line=n) from None
            if not np.isfinite(value):
                raise InputError(path, f"{what} value is not finite", line=n)
            out.append(value)
        return out

    token, n = take("HIERARCHY")
    if token.upper() != "HIERARCHY":
        raise InputError(path, f"expected HIERARCHY, got {token[:40]!r}: not a BVH file", line=n)
    fields: list[dict] = []  # per node: name, parent, offset, channels, end_site
    stack: list[int] = []
    names: set[str] = set()
    while True:
        token, n = take("ROOT" if not fields else "'}'")
        upper = token.upper()
        if upper in ("ROOT", "JOINT", "END"):
            if upper == "ROOT" and (fields or stack):
                raise InputError(path, "a second ROOT: only files with one skeleton are read", line=n)
            if upper != "ROOT" and not stack:
                raise InputError(path, f"{token} outside the ROOT", line=n)
            if stack and fields[stack[-1]]["end_site"]:
                raise InputError(path, "an End Site cannot have children", line=n)
            if len(fields) >= MAX_NODES:
                raise InputError(path, f"more than {MAX_NODES} joints and End Sites", line=n)
            if upper == "END":
                if take("Site")[0].upper() != "SITE":
                    raise InputError(path, "expected 'End Site'", line=n)
                name = f"{fields[stack[-1]]['name']} End Site"
            else:
                name, _ = take("a joint name")
                if name in names:
                    raise InputError(path, f"joint name {name!r} appears twice", line=n)
                names.add(name)
            if take("'{'")[0] != "{":
                raise InputError(path, f"expected '{{' after {name!r}", line=n)
            fields.append({"name": name, "parent": stack[-1] if stack else -1, "offset": None, "channels": None,
                           "end_site": upper == "END", "line": n})
            stack.append(len(fields) - 1)
        elif upper == "OFFSET" and stack:
            if fields[stack[-1]]["offset"] is not None:
                raise InputError(path, "a second OFFSET for one joint", line=n)
            fields[stack[-1]]["offset"] = tuple(numbers(3, "OFFSET"))
        elif upper == "CHANNELS" and stack:
            fields[stack[-1]]["channels"] = _channels(take, fields[stack[-1]], n, path)
        elif token == "}" and stack:
            node = fields[stack.pop()]
            if node["offset"] is None:
                raise InputError(path, f"{node['name']!r} has no OFFSET", line=node["line"])
            if node["channels"] is None and not node["end_site"]:
                raise InputError(path, f"{node['name']!r} has no CHANNELS", line=node["line"])
            if not stack:
                break
        else:
            raise InputError(path, f"unexpected {token[:40]!r} in the hierarchy", line=n)
    if pos < len(tokens) and tokens[pos][0] == "ROOT":
        raise InputError(path, "a second ROOT: only files with one skeleton are read", line=tokens[pos][1])
    if pos < len(tokens):
        raise InputError(path, f"unexpected {tokens[pos][0][:40]!r} after the hierarchy", line=tokens[pos][1])
    return [BvhNode(f["name"], f["parent"], f["offset"], f["channels"] or (), f["end_site"]) for f in fields]


def _channels(take, node: dict, n: int, path: str) -> tuple[str, ...]:
    if node["end_site"]:
        raise InputError(path, "an End Site has no CHANNELS", line=n)
    if node["channels"] is not None:
        raise InputError(path, "a second CHANNELS for one joint", line=n)
    count_token, _ = take("a channel count")
    if count_token not in {str(k) for k in range(7)}:
        raise InputError(path, f"CHANNELS needs a count from 0 to 6, got {count_token[:40]!r}", line=n)
    channels = []
    for _ in range(int(count_token)):
        token, line = take("a channel name")
        if token.upper() not in _CHANNEL_NAMES:
            raise InputError(path, f"unknown channel {token[:40]!r} (expected X/Y/Z position/rotation)", line=line)
        if _CHANNEL_NAMES[token.upper()] in channels:
            raise InputError(path, f"channel {token} appears twice for one joint", line=line)
        channels.append(_CHANNEL_NAMES[token.upper()])
    return tuple(channels)
