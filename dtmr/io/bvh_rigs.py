"""Humanoid BVH rigs onto NTU-25: by the joint names of the common rigs, by the tree's shape, or by a joint map.

A rig's joints are found three ways, first that applies:

1. `--joint-map FILE.json` (`{"BVH joint": "NTU-25 joint", ...}`), the user's word: the joints it names are taken
   as those NTU joints, the others derived from them.
2. **Names** (`RIG_NAMES`): Mixamo (`mixamorig:LeftUpLeg`, also without the prefix), CMU (`LeftUpLeg`,
   `LowerBack`), MocapBank / Bandai (`LeftHip`, `LeftCollar`, `Chest2`), Blender Rigify (`thigh.L`, `upper_arm.L`,
   `DEF-`/`ORG-` prefixes dropped), Unreal (`thigh_l`, `calf_l`, `ball_l`) and Unity humanoid (`LeftUpperLeg`).
   A name is split into a side (left/right as a word, `.L`/`_l` suffix, `L_` prefix, CMU's `LHipJoint`) and a
   base; the rig whose table knows the most of the file's names and finds every required joint on a consistent
   tree wins. A rig whose limbs are named but whose head is not (Rigify's deform bones: `DEF-spine.006`) gets
   its head as the structure finds it, above the joint both shoulders hang off.
3. **Structure**: the legs are a pair of mirror chains (same depth, at least 3 joints, parent offsets of the
   same length; same-size subtrees first) hanging off one joint, the pelvis, the first in file order that has
   arms above it; the arms the first such pair below the pelvis outside the legs, off the chest; the head the
   deepest other branch of the chest. Along a limb the hip, knee and ankle (shoulder,
   elbow, wrist) are the ends of the two longest consecutive bones; the joint after the ankle is the foot. Left
   and right come from the names when they say it, else from the rest pose: left = up x forward, forward
   being where the toes point (the file's +x without feet: the left side in both usual rest poses, facing +z
   with y up and facing -y with z up).

The required joints are both shoulders, elbows, wrists, hips, knees and ankles and the head; the rest of NTU-25 is
derived, as the mappings of `dtmr.skeleton.mapping` do for other joint sets:

* spine_base: the rig's pelvis (the joint both legs hang off); spine_shoulder: halfway between the shoulders;
  spine_mid: halfway along the spine's joints from the pelvis to the spine_shoulder;
* head: the centre of the head, halfway from the rig's head joint (the base of the skull) to the head's top
  (the end of its chain, an End Site or Mixamo's `HeadTop_End`); neck: halfway from the spine_shoulder to the
  head joint;
* foot: the rig's toe (`ToeBase`, `Toe`, `ball`, `toe.L`), else the next joint or End Site after the ankle;
* hand, hand tip, thumb: along the forearm past the wrist (0.3, 0.6, 0.45 forearms), as for COCO-17: rigs name
  their fingers too differently to be read, and many have none.

The result is a (25, nodes) weight matrix (`RigMapping.weights`): NTU joints = weights @ node positions, so
every derived joint is an affine combination of the rig's own and moves with it. Nothing here is NaN.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..skeleton import NTU25
from .bounded_read import read_bounded

#: the joints a rig must have (by names, structure or joint map); the rest of NTU-25 is derived
REQUIRED = tuple(f"{side}_{part}" for side in ("left", "right")
                 for part in ("shoulder", "elbow", "wrist", "hip", "knee", "ankle")) + ("head",)
#: hand, hand tip and thumb this many forearms past the wrist (as `dtmr.skeleton.mapping` does for COCO-17)
HAND_EXTENSIONS = {"hand": 0.3, "hand_tip": 0.6, "thumb": 0.45}
#: a foot without a toe joint or End Site: this far past the ankle along the shin
FOOT_EXTENSION = 0.15
#: the head joint of a structurally found rig: the last joint of the head's chain this many legs below its top
HEAD_LENGTH_IN_LEGS = 0.1
MAX_JOINT_MAP_BYTES = 2**20
#: leg pairs tried per joint (most mirror-like first): bounds the search on a crafted tree of many pairs
MAX_LEG_PAIRS = 8

_SIDED = ("shoulder", "elbow", "wrist", "hip", "knee", "ankle", "foot")
_LIMB_COMMON = {"arm": "shoulder", "forearm": "elbow", "hand": "wrist", "upleg": "hip", "leg": "knee",
                "foot": "ankle", "toebase": "foot"}
_FINGERS = {f"hand{finger}{k}": None for finger in ("thumb", "index", "middle", "ring", "pinky") for k in range(1, 5)}
#: per rig: base name (lower case, separators dropped, side removed) -> role (None: a joint of the rig not used)
RIG_NAMES: dict[str, dict[str, str | None]] = {
    "mixamo": {"hips": "spine_base", "spine": None, "spine1": None, "spine2": None, "neck": None,
               "head": "head_base", "headtopend": "head_top", "shoulder": None, "toeend": None,
               **_LIMB_COMMON, **_FINGERS},
    "cmu": {"hips": "spine_base", "lowerback": None, "spine": None, "spine1": None, "neck": None, "neck1": None,
            "head": "head_base", "hipjoint": None, "shoulder": None, "fingerbase": None, "handindex1": None,
            "thumb": None, **_LIMB_COMMON},
    "mocapbank": {"hips": "spine_base", "chest": None, "chest2": None, "chest3": None, "chest4": None,
                  "neck": None, "head": "head_base", "collar": None, "shoulder": "shoulder", "elbow": "elbow",
                  "wrist": "wrist", "hip": "hip", "knee": "knee", "ankle": "ankle", "toe": "foot"},
    "rigify": {"pelvis": "spine_base", "spine": None, **{f"spine{k:03d}": None for k in range(1, 7)},
               "chest": None, "neck": None, "head": "head_base", "shoulder": None, "upperarm": "shoulder",
               "forearm": "elbow", "hand": "wrist", "thigh": "hip", "shin": "knee", "foot": "ankle", "toe": "foot"},
    "unreal": {"root": None, "pelvis": "spine_base", **{f"spine0{k}": None for k in range(1, 6)}, "neck01": None,
               "neck02": None, "head": "head_base", "clavicle": None, "upperarm": "shoulder", "lowerarm": "elbow",
               "hand": "wrist", "thigh": "hip", "calf": "knee", "foot": "ankle", "ball": "foot"},
    "unity": {"hips": "spine_base", "spine": None, "chest": None, "upperchest": None, "neck": None,
              "head": "head_base", "shoulder": None, "upperarm": "shoulder", "lowerarm": "elbow", "hand": "wrist",
              "upperleg": "hip", "lowerleg": "knee", "foot": "ankle", "toes": "foot"},
}
STRUCTURE = "structure"
JOINT_MAP = "joint map"

_SEPARATORS = re.compile(r"[\s_.\-]+")
_TOOL_PREFIX = re.compile(r"^(def|org|mch)[-_.]", re.IGNORECASE)
_SIDE_PATTERNS = (
    (re.compile(r"^(left|right)[\s_.\-]*(?=.)", re.IGNORECASE), False),
    (re.compile(r"[\s_.\-]+(left|right|l|r)$", re.IGNORECASE), False),
    (re.compile(r"^(l|r)[\s_.\-]+", re.IGNORECASE), False),
    (re.compile(r"^([LR])(?=[A-Z][a-z])"), True),
    (re.compile(r"(?<=[a-z])(Left|Right)$"), True),
)


@dataclass(frozen=True)
class RigNode:
    """What the mapping needs of a BVH node (a ROOT, JOINT or End Site)."""

    name: str
    parent: int
    end_site: bool


@dataclass(frozen=True)
class RigMapping:
    rig: str  # a key of RIG_NAMES, STRUCTURE or JOINT_MAP
    #: (25, nodes) float64: NTU-25 joints = weights @ node positions
    weights: np.ndarray
    #: the NTU-25 joints read from one rig joint each (the others are derived)
    observed: tuple[str, ...]

    def apply(self, positions: np.ndarray) -> np.ndarray:
        """(frames, nodes, 3) node positions -> (frames, 25, 3) NTU-25 joints."""
        return np.einsum("jn,fnc->fjc", self.weights, positions)


def split_side(name: str) -> tuple[str | None, str]:
    """(\"left\" | \"right\" | None, base): `mixamorig:LeftUpLeg` -> (left, upleg), `thigh.L` -> (left, thigh)."""
    name = re.split(r"[:|]", name)[-1].strip()
    name = _TOOL_PREFIX.sub("", name)
    side = None
    for pattern, _case_sensitive in _SIDE_PATTERNS:
        found = pattern.search(name)
        if found and len(name) > len(found.group(0)):
            side = "left" if found.group(1)[0].lower() == "l" else "right"
            name = name[: found.start()] + name[found.end():]
            break
    return side, _SEPARATORS.sub("", name).lower()


def map_rig(path, nodes: list[RigNode], rest: np.ndarray, joint_map=None) -> RigMapping:
    """The NTU-25 mapping of a BVH tree. `rest`: (nodes, 3) positions of a rest pose, for lengths and sides.

    Raises InputError (naming `path`) when the tree is no humanoid its names, shape or the joint map can read.
    """
    tree = _Tree(nodes, rest)
    if joint_map is not None:
        roles, rig = _roles_from_joint_map(path, tree, joint_map), JOINT_MAP
    else:
        rig, roles = _roles_from_names(tree)
        if roles is None:
            rig, roles = STRUCTURE, _roles_from_structure(path, tree)
    weights, observed = _weights(path, tree, roles)
    return RigMapping(rig, weights, observed)


# -- the tree --------------------------------------------------------------------------------------------------
class _Tree:
    def __init__(self, nodes: list[RigNode], rest: np.ndarray):
        self.nodes = nodes
        self.rest = np.asarray(rest, dtype=np.float64)
        self.children: list[list[int]] = [[] for _ in nodes]
        for i, node in enumerate(nodes):
            if node.parent >= 0:
                self.children[node.parent].append(i)
        #: joints on the longest downward path from each node, itself included (0 for an End Site)
        self.depth = [0] * len(nodes)
        #: nodes in each node's subtree, itself included
        self.size = [1] * len(nodes)
        for i in reversed(range(len(nodes))):
            if not nodes[i].end_site:
                self.depth[i] = 1 + max((self.depth[c] for c in self.children[i]), default=0)
            self.size[i] += sum(self.size[c] for c in self.children[i])

    def ancestors(self, i: int) -> list[int]:
        """i, its parent, ..., the root."""
        out = [i]
        while self.nodes[out[-1]].parent >= 0:
            out.append(self.nodes[out[-1]].parent)
        return out

    def common_ancestor(self, a: int, b: int) -> int:
        above = set(self.ancestors(a))
        return next(n for n in self.ancestors(b) if n in above)

    def is_below(self, node: int, top: int) -> bool:
        """`node` is `top` or one of its descendants: nodes are in file order (depth first), so a subtree is the
        run of `size` nodes from its root."""
        return top <= node < top + self.size[top]

    def chain(self, start: int) -> list[int]:
        """`start`, then the deepest child each step down to a leaf (End Sites included)."""
        out = [start]
        while self.children[out[-1]]:
            kids = self.children[out[-1]]
            out.append(max(kids, key=lambda c: (self.depth[c], not self.nodes[c].end_site, -kids.index(c))))
        return out

    def length(self, a: int, b: int) -> float:
        return float(np.linalg.norm(self.rest[a] - self.rest[b]))


# -- roles from names ------------------------------------------------------------------------------------------
def _roles_from_names(tree: _Tree) -> tuple[str, dict[str, int] | None]:
    """(rig, role -> node) of the rig table that reads the file best; (\"\", None) when none finds every joint."""
    named = [(i, *split_side(node.name)) for i, node in enumerate(tree.nodes) if not node.end_site]
    best: tuple[int, str, dict[str, int]] | None = None
    for rig, table in RIG_NAMES.items():
        roles: dict[str, int] = {}
        known = 0
        for i, side, base in named:
            if base not in table:
                continue
            known += 1
            role = table[base]
            if role is None:
                continue
            if role in _SIDED:
                if side is None:
                    continue
                role = f"{side}_{role}"
            elif side is not None:
                continue
            roles.setdefault(role, i)
        if "head_base" not in roles:
            _head_by_structure(tree, roles)
        if _complete_and_consistent(tree, roles) and (best is None or known > best[0]):
            best = (known, rig, roles)
    if best is None:
        return "", None
    return best[1], best[2]


def _head_by_structure(tree: _Tree, roles: dict[str, int]) -> None:
    """The head of a rig whose limbs have known names but whose head has none (Rigify's `spine.006`): found as
    the structural search finds it, above the joint both shoulders hang off."""
    limbs = [f"{side}_{part}" for side in ("left", "right") for part in ("shoulder", "hip", "knee", "ankle")]
    if any(r not in roles for r in limbs):
        return
    shoulders = roles["left_shoulder"], roles["right_shoulder"]
    chest = tree.common_ancestor(*shoulders)
    leg_length = np.mean([tree.length(roles[f"{side}_hip"], roles[f"{side}_knee"])
                          + tree.length(roles[f"{side}_knee"], roles[f"{side}_ankle"]) for side in ("left", "right")])
    head = _head_joints(tree, chest, shoulders, leg_length)
    if head is not None:
        roles["head_base"], roles["head_top"] = head


def _complete_and_consistent(tree: _Tree, roles: dict[str, int]) -> bool:
    """Every required limb joint and the head joint found, each limb joint below the one before it."""
    needed = [r for r in REQUIRED if r != "head"] + ["head_base"]
    if any(r not in roles for r in needed):
        return False
    for side in ("left", "right"):
        for upper, lower in (("shoulder", "elbow"), ("elbow", "wrist"), ("hip", "knee"), ("knee", "ankle"),
                             ("ankle", "foot")):
            a, b = roles.get(f"{side}_{upper}"), roles.get(f"{side}_{lower}")
            if a is not None and b is not None and (a == b or not tree.is_below(b, a)):
                return False
    return True


# -- roles from a joint map ------------------------------------------------------------------------------------
def _roles_from_joint_map(path, tree: _Tree, joint_map) -> dict[str, int]:
    """role -> node from a JSON object {BVH joint name: NTU-25 joint name}, every name checked."""
    raw = read_bounded(joint_map, MAX_JOINT_MAP_BYTES, "a joint map")
    try:
        table = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InputError(joint_map, f"not a JSON joint map ({str(exc).splitlines()[0][:80]})") from None
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
        raise InputError(joint_map, 'a joint map is one JSON object {"BVH joint": "NTU-25 joint", ...}')
    index = {node.name: i for i, node in enumerate(tree.nodes) if not node.end_site}
    unknown = [k for k in table if k not in index]
    if unknown:
        raise InputError(path, f"the joint map {joint_map} names joints the file does not have: "
                               f"{_listed(unknown)}")
    not_ntu = sorted({v for v in table.values() if v not in NTU25.joint_names})
    if not_ntu:
        raise InputError(joint_map, f"not NTU-25 joints: {_listed(not_ntu)} (NTU-25: {', '.join(NTU25.joint_names)})")
    roles: dict[str, int] = {}
    for name, ntu in table.items():
        if ntu in roles:
            raise InputError(joint_map, f"two joints are mapped to {ntu}: {tree.nodes[roles[ntu]].name}, {name}")
        roles[ntu] = index[name]
    missing = [r for r in REQUIRED if r not in roles]
    if missing:
        raise InputError(joint_map, f"maps no joint to {_listed(missing)} (required: {', '.join(REQUIRED)})")
    return roles


def _listed(names: list[str], most: int = 12) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" ... ({len(names)} in all)" if len(names) > most else "")


# -- roles from the tree's shape -------------------------------------------------------------------------------
def _mirror_pairs(tree: _Tree, node: int) -> list[tuple[int, int]]:
    """Pairs of `node`'s joint children that look like a left and a right limb, most mirror-like first: subtrees
    of the same size before others, then the farthest apart for their offsets' lengths."""
    kids = [c for c in tree.children[node] if tree.depth[c] >= 3]
    pairs = []
    for i, a in enumerate(kids):
        for b in kids[i + 1:]:
            la, lb = tree.length(node, a), tree.length(node, b)
            if tree.depth[a] != tree.depth[b] or abs(la - lb) > 0.2 * max(la, lb) + 1e-9:
                continue
            apart = tree.length(a, b) / (la + lb) if la + lb > 0 else 0.0
            pairs.append((tree.size[a] == tree.size[b], apart, a, b))
    return [(a, b) for *_, a, b in sorted(pairs, key=lambda p: (-p[0], -p[1]))]


def _roles_from_structure(path, tree: _Tree) -> dict[str, int]:
    names = [n.name for n in tree.nodes if not n.end_site]
    problem = "no two legs (two mirror chains of 3 or more joints off one joint)"
    pairs = {n: _mirror_pairs(tree, n) for n in range(len(tree.nodes))}
    for pelvis in range(len(tree.nodes)):
        chests = [c for c in range(pelvis + 1, pelvis + tree.size[pelvis]) if pairs[c]]
        for legs in pairs[pelvis][:MAX_LEG_PAIRS]:
            chest = next((c for c in chests if not any(tree.is_below(c, leg) for leg in legs)), None)
            if chest is None:
                pair = ", ".join(tree.nodes[n].name for n in legs)
                problem = f"one pair of limbs ({pair}), not two legs and two arms above them"
                continue
            return _limb_roles(path, tree, pelvis, legs, (chest, pairs[chest][0]))
    raise InputError(path, f"its joints ({_listed(names)}) are neither those of a registered topology nor of a "
                           f"rig with known names, and the tree has {problem}: name them with --joint-map FILE.json")


def _limb_roles(path, tree: _Tree, pelvis: int, legs: tuple[int, int], arms_found) -> dict[str, int]:
    chest, arms = arms_found
    roles: dict[str, int] = {"spine_base": pelvis}
    leg_joints = [_long_bones(tree, tree.chain(leg)) for leg in legs]
    arm_joints = [_long_bones(tree, tree.chain(arm)) for arm in arms]
    leg_length = np.mean([tree.length(j[0], j[1]) + tree.length(j[1], j[2]) for j in leg_joints])
    head = _head_joints(tree, chest, arms, leg_length)
    if head is None:
        raise InputError(path, "the tree has two legs and two arms but no head above the arms: name its joints "
                               "with --joint-map FILE.json")
    roles["head_base"], roles["head_top"] = head
    left_leg = _left_first(tree, leg_joints, roles)
    lateral = tree.rest[leg_joints[left_leg][0]] - tree.rest[leg_joints[1 - left_leg][0]]
    left_arm = _left_first(tree, arm_joints, roles, lateral)
    for joints, left, parts in ((leg_joints, left_leg, ("hip", "knee", "ankle", "foot")),
                                (arm_joints, left_arm, ("shoulder", "elbow", "wrist"))):
        for k, side in ((left, "left"), (1 - left, "right")):
            for part, node in zip(parts, joints[k]):
                roles[f"{side}_{part}"] = node
    return roles


def _head_joints(tree: _Tree, chest: int, arms, leg_length: float) -> tuple[int, int] | None:
    """(head joint, head top) on the deepest branch of the chest that holds no arm: the top is the end of its
    chain, the head joint the last point of the chain a tenth of a leg or more below it. None without one."""
    others = [c for c in tree.children[chest]
              if not tree.nodes[c].end_site and not any(tree.is_below(arm, c) for arm in arms)]
    if not others:
        return None
    chain = tree.chain(max(others, key=lambda c: tree.depth[c]))
    top = chain[-1]
    base = next((n for n in reversed(chain) if tree.length(n, top) >= HEAD_LENGTH_IN_LEGS * leg_length), chain[0])
    return base, top


def _long_bones(tree: _Tree, chain: list[int]) -> list[int]:
    """[upper, middle, lower (, the point after)] of a limb chain: the ends of its two longest consecutive bones."""
    bones = [tree.length(a, b) for a, b in zip(chain, chain[1:])]
    k = max(range(len(bones) - 1), key=lambda i: bones[i] + bones[i + 1])
    return chain[k : k + 4]


def _left_first(tree: _Tree, limbs: list[list[int]], roles: dict[str, int], lateral: np.ndarray | None = None) -> int:
    """Which of two limbs (0 or 1) is the left one: by its names, else by the side of the body it is on."""
    sides = [{split_side(tree.nodes[n].name)[0] for n in limb} - {None} for limb in limbs]
    if sides[0] != sides[1] and len(sides[0]) == len(sides[1]) == 1:
        return 0 if sides[0] == {"left"} else 1
    across = tree.rest[limbs[0][0]] - tree.rest[limbs[1][0]]
    if lateral is None:
        up = tree.rest[roles["head_top"]] - tree.rest[roles["spine_base"]]
        toes = [tree.rest[limb[3]] - tree.rest[limb[2]] for limb in limbs if len(limb) > 3]
        forward = np.mean(toes, axis=0) if toes else np.zeros(3)
        forward = forward - up * (forward @ up) / max(up @ up, 1e-12)
        lateral = np.cross(up, forward) if np.linalg.norm(forward) > 1e-9 * (1 + np.linalg.norm(up)) else None
        if lateral is None:
            lateral = np.array([1.0, 0.0, 0.0])
    return 0 if across @ lateral >= 0 else 1


# -- the weight matrix -----------------------------------------------------------------------------------------
def _weights(path, tree: _Tree, roles: dict[str, int]) -> tuple[np.ndarray, tuple[str, ...]]:
    rows: dict[str, dict[int, float]] = {name: {node: 1.0} for name, node in roles.items()
                                         if name in NTU25.joint_names}
    observed = tuple(n for n in NTU25.joint_names if n in rows)
    if "head" not in rows:
        base = roles.get("head_base")
        if base is None:
            raise InputError(path, "no head joint found")
        top = roles.get("head_top", tree.chain(base)[-1])
        rows["head"] = _mix({base: 1.0}, {top: 1.0}, 0.5)
    if "spine_base" not in rows:
        rows["spine_base"] = {tree.common_ancestor(roles["left_hip"], roles["right_hip"]): 1.0}
    rows.setdefault("spine_shoulder", _mix({roles["left_shoulder"]: 1.0}, {roles["right_shoulder"]: 1.0}, 0.5))
    head_base = {roles["head_base"]: 1.0} if "head_base" in roles else rows["head"]
    rows.setdefault("neck", _mix(rows["spine_shoulder"], head_base, 0.5))
    if "spine_mid" not in rows:
        rows["spine_mid"] = _spine_mid(tree, roles, rows)
    for side in ("left", "right"):
        wrist, elbow = roles[f"{side}_wrist"], roles[f"{side}_elbow"]
        for part, k in HAND_EXTENSIONS.items():
            rows.setdefault(f"{side}_{part}", {wrist: 1.0 + k, elbow: -k})
        if f"{side}_foot" not in rows:
            ankle, knee = roles[f"{side}_ankle"], roles[f"{side}_knee"]
            after = tree.chain(ankle)
            rows[f"{side}_foot"] = ({after[1]: 1.0} if len(after) > 1
                                    else {ankle: 1.0 + FOOT_EXTENSION, knee: -FOOT_EXTENSION})
    weights = np.zeros((NTU25.num_joints, len(tree.nodes)))
    for name, row in rows.items():
        for node, w in row.items():
            weights[NTU25.index(name), node] += w
    return weights, observed


def _mix(a: dict[int, float], b: dict[int, float], t: float) -> dict[int, float]:
    """(1 - t) a + t b of two rows."""
    out = {n: (1.0 - t) * w for n, w in a.items()}
    for n, w in b.items():
        out[n] = out.get(n, 0.0) + t * w
    return out


def _spine_mid(tree: _Tree, roles: dict[str, int], rows: dict[str, dict[int, float]]) -> dict[int, float]:
    """Halfway along the spine's joints from the pelvis up to the spine_shoulder (rest-pose lengths)."""
    (pelvis,) = rows["spine_base"]
    chest = tree.common_ancestor(roles["left_shoulder"], roles["right_shoulder"])
    path = tree.ancestors(chest)
    path = path[: path.index(pelvis) + 1][::-1] if pelvis in path else [pelvis]
    points = [{n: 1.0} for n in path] + [rows["spine_shoulder"]]
    where = [sum(w * tree.rest[n] for n, w in p.items()) for p in points]
    lengths = [float(np.linalg.norm(b - a)) for a, b in zip(where, where[1:])]
    half, walked = sum(lengths) / 2.0, 0.0
    for k, length in enumerate(lengths):
        if walked + length >= half and length > 0:
            return _mix(points[k], points[k + 1], (half - walked) / length)
        walked += length
    return _mix(rows["spine_base"], rows["spine_shoulder"], 0.5)
