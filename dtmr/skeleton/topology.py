"""The `Topology` type: a named joint set with its kinematic tree, and the registry of known ones.

Conventions shared by every topology (and by the whole library):

* joints are 0-based, the tree is rooted at exactly one joint (parent -1), and each non-root joint
  ``j`` owns exactly one bone ``(parents[j], j)``; bones are listed in joint order, so a skeleton of
  J joints has J - 1 bones;
* coordinates are metres in a right-handed camera space with **y up** (Kinect's convention);
* ``mirror[j]`` is the joint that ``j`` becomes under a left/right flip (itself for centre joints).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

LEFT, CENTRE, RIGHT = -1, 0, 1


@dataclass(frozen=True)
class Topology:
    name: str
    joint_names: tuple[str, ...]
    parents: tuple[int, ...]
    end_effectors: tuple[int, ...]
    #: Joints whose height and speed decide ground contact: per foot, from ankle to toe.
    feet: tuple[tuple[int, ...], ...]
    left_hip: int
    right_hip: int
    description: str = ""
    mirror: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        if len(self.parents) != n:
            raise ValueError(f"topology {self.name}: {n} names but {len(self.parents)} parents")
        roots = [j for j, p in enumerate(self.parents) if p < 0]
        if len(roots) != 1:
            raise ValueError(f"topology {self.name}: needs exactly one root, found {roots}")
        for j, p in enumerate(self.parents):
            if p >= n or p == j:
                raise ValueError(f"topology {self.name}: joint {j} has invalid parent {p}")
        self.order  # raises on cycles
        if not self.mirror:
            object.__setattr__(self, "mirror", _mirror_from_names(self.joint_names))
        if sorted(self.mirror) != list(range(n)):
            raise ValueError(f"topology {self.name}: mirror map is not a permutation")
        for j in (*self.end_effectors, *self.contact_joints, self.left_hip, self.right_hip):
            if not 0 <= j < n:
                raise ValueError(f"topology {self.name}: joint index {j} out of range")

    @property
    def num_joints(self) -> int:
        return len(self.joint_names)

    @property
    def num_bones(self) -> int:
        return len(self.joint_names) - 1

    @property
    def root(self) -> int:
        return self.parents.index(-1)

    @cached_property
    def bones(self) -> tuple[tuple[int, int], ...]:
        """(parent, child) for every non-root joint, in joint order."""
        return tuple((p, j) for j, p in enumerate(self.parents) if p >= 0)

    @cached_property
    def bone_children(self) -> np.ndarray:
        return np.array([c for _, c in self.bones], dtype=np.int64)

    @cached_property
    def bone_parents(self) -> np.ndarray:
        return np.array([p for p, _ in self.bones], dtype=np.int64)

    @cached_property
    def order(self) -> tuple[int, ...]:
        """Joints in an order where every parent comes before its children (root first)."""
        out: list[int] = []
        placed: set[int] = set()
        remaining = list(range(len(self.parents)))
        while remaining:
            progressed = False
            for j in list(remaining):
                p = self.parents[j]
                if p < 0 or p in placed:
                    out.append(j)
                    placed.add(j)
                    remaining.remove(j)
                    progressed = True
            if not progressed:
                raise ValueError(f"topology {self.name}: parent tree has a cycle through {remaining}")
        return tuple(out)

    @cached_property
    def contact_joints(self) -> tuple[int, ...]:
        return tuple(j for foot in self.feet for j in foot)

    @cached_property
    def sides(self) -> tuple[int, ...]:
        """LEFT, CENTRE or RIGHT for each joint, read from its name."""
        return tuple(_side(n) for n in self.joint_names)

    @cached_property
    def adjacency(self) -> np.ndarray:
        """Symmetric (J, J) 0/1 matrix of the bones (no self loops)."""
        a = np.zeros((self.num_joints, self.num_joints), dtype=np.float32)
        for p, c in self.bones:
            a[p, c] = a[c, p] = 1.0
        return a

    def index(self, joint_name: str) -> int:
        return self.joint_names.index(joint_name)


def _side(name: str) -> int:
    lower = name.lower()
    if lower.startswith("left") or "_left" in lower or lower.startswith("l_"):
        return LEFT
    if lower.startswith("right") or "_right" in lower or lower.startswith("r_"):
        return RIGHT
    return CENTRE


def _mirror_from_names(names: tuple[str, ...]) -> tuple[int, ...]:
    lookup = {n: i for i, n in enumerate(names)}
    out = []
    for n in names:
        if "left" in n:
            out.append(lookup.get(n.replace("left", "right"), lookup[n]))
        elif "right" in n:
            out.append(lookup.get(n.replace("right", "left"), lookup[n]))
        else:
            out.append(lookup[n])
    return tuple(out)


_REGISTRY: dict[str, Topology] = {}


def register_topology(topology: Topology) -> Topology:
    if topology.name in _REGISTRY and _REGISTRY[topology.name] != topology:
        raise ValueError(f"a different topology named {topology.name!r} is already registered")
    _REGISTRY[topology.name] = topology
    return topology


def get_topology(name: str | Topology) -> Topology:
    """The registered topology called `name` (a `Topology` passes through unchanged)."""
    if isinstance(name, Topology):
        return name
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"unknown topology {name!r} (known: {known})") from None


def topology_names() -> list[str]:
    return sorted(_REGISTRY)


def topology_for_joint_count(num_joints: int) -> Topology | None:
    """The only registered topology with this many joints, or None when there is none or several."""
    found = [t for t in _REGISTRY.values() if t.num_joints == num_joints]
    return found[0] if len(found) == 1 else None
