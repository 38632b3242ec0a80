"""Bounds on a tree of plain data read from an untrusted file (a pickle, a checkpoint's metadata), checked once
after loading and before any reader walks it.

A file can make a small tree that costs without bound to walk: lists that hold the same list 64 levels deep
(2^64 paths in a few KB), one array referenced by 20,000 entries (each becomes its own clip), an integer of
thousands of digits. So the walk counts a node each time it is reached, not once, and stops at the first bound
passed: depth, nodes, integer size and the bytes of the arrays it reaches. It is iterative and its cost is
bounded by `max_nodes`, whatever the tree."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError


@dataclass(frozen=True)
class TreeBounds:
    #: containers inside containers; PYSKL's annotations are 4 deep, a checkpoint's metadata a few more
    max_depth: int = 32
    #: nodes reached, shared ones counted each time (PYSKL's NTU-120 file: about 1.2 million)
    max_nodes: int = 20_000_000
    #: the largest integer, in bits (labels and counts fit in 64)
    max_int_bits: int = 64
    #: the bytes of all arrays reached, a shared array counted each time; None: no bound
    max_array_bytes: int | None = None


def check_tree(tree, path: str | Path, what: str, bounds: TreeBounds = TreeBounds()) -> None:
    """InputError naming `path` (a `what`) when `tree` passes one of `bounds`."""
    nodes, array_bytes = 0, 0
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > bounds.max_nodes:
            raise InputError(path, f"a {what} of more than {bounds.max_nodes:,} entries (shared ones counted each "
                                   "time they are reached): refused")
        if isinstance(node, (dict, list, tuple, set, frozenset)):
            if depth >= bounds.max_depth:
                raise InputError(path, f"a {what} nested more than {bounds.max_depth} levels deep: refused")
            children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(node, int) and not isinstance(node, bool):
            if node.bit_length() > bounds.max_int_bits:
                raise InputError(path, f"a {what} holding an integer of {node.bit_length()} bits (at most "
                                       f"{bounds.max_int_bits}): refused")
        elif isinstance(node, np.ndarray) and bounds.max_array_bytes is not None:
            array_bytes += node.nbytes
            if array_bytes > bounds.max_array_bytes:
                raise InputError(path, f"a {what} whose arrays, shared ones counted each time they are used, "
                                       f"exceed {bounds.max_array_bytes:,} bytes: refused")


def loads_json(text: str | bytes, path: str | Path, what: str, **options):
    """`json.loads(text, **options)` of an untrusted file, its tree then checked (`check_tree`): a nesting too
    deep for the parser or a number of more digits than Python converts is an InputError naming `path`, not a
    RecursionError or a ValueError; a syntax error stays a `json.JSONDecodeError` for the caller to word."""
    import json

    try:
        data = json.loads(text, **options)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise InputError(path, f"a {what} nested too deeply to read: refused") from None
    except ValueError as exc:
        if "digits" in str(exc):  # Python's advice to raise its limit is not for a user
            raise InputError(path, f"a {what} holding a number of more than {sys.get_int_max_str_digits():,} "
                                   "digits: refused") from None
        raise InputError(path, f"a {what} that cannot be read ({' '.join(str(exc).split())[:120]})") from None
    check_tree(data, path, what)
    return data
