"""Body parts of a joint set: arms, legs and the torso with the head, for showing or hiding them together.

The rule, for every registered topology, from the joint names (the parent tree cannot say it: COCO's root is a
hip): a joint of a body side (left or right by name) whose name has a leg word (hip, knee, ankle, foot, heel, toe,
leg) is in the legs; another one of a body side is in the arms, face joints (eye, ear, mouth) excepted; the torso
and head are the rest (the spine, the pelvis centre, the neck, the head and the face). A bone belongs to its child
joint's part.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from .topology import CENTRE, Topology, get_topology

#: words (between underscores) of leg joints' names
LEG = frozenset({"hip", "knee", "ankle", "foot", "heel", "toe", "toes", "leg"})
#: words of face joints' names, which have a side but belong to the head
FACE = frozenset({"eye", "ear", "mouth", "nose"})


class BodyPart(str, Enum):
    ARMS = "arms"
    LEGS = "legs"
    TORSO = "torso"

    @property
    def title(self) -> str:
        return {"arms": "Arms", "legs": "Legs", "torso": "Torso and head"}[self.value]


def body_parts(topology: str | Topology) -> tuple[BodyPart, ...]:
    """The part of each joint of `topology`."""
    topo = get_topology(topology) if isinstance(topology, str) else topology
    parts = []
    for name, side in zip(topo.joint_names, topo.sides):
        words = set(name.lower().split("_"))
        if side == CENTRE or words & FACE:
            parts.append(BodyPart.TORSO)
        else:
            parts.append(BodyPart.LEGS if words & LEG else BodyPart.ARMS)
    return tuple(parts)


def joints_of(topology: str | Topology, parts) -> np.ndarray:
    """(J,) bool: the joints that belong to any of `parts`."""
    wanted = set(parts)
    return np.array([part in wanted for part in body_parts(topology)], dtype=bool)
