"""A topology a user names for a file (`--topology`, `topology=`): registered, and with the file's joint count.
One place for the check every reader makes, so they all say the same thing."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..skeleton import get_topology, topology_names


def check_topology_name(name: str | None, path: str | Path) -> str | None:
    """`name` as a registered topology name (None passes), else an InputError about `path`."""
    if name is None:
        return None
    try:
        return get_topology(name).name
    except KeyError:
        raise InputError(path, f"unknown topology {name!r} (known: {', '.join(topology_names())})") from None


def topology_with_joints(name: str, num_joints: int, path: str | Path, holder: str = "the file") -> str:
    """The registered topology `name`, which must have `num_joints` joints (what `holder` holds); else an
    InputError about `path`."""
    topo = get_topology(check_topology_name(name, path))
    if topo.num_joints != num_joints:
        raise InputError(path, f"topology {topo.name} has {topo.num_joints} joints, {holder} has {num_joints}")
    return topo.name
