"""Argument types of the command line, torch-free and outside `dtmr.cli` so that the benchmarks and the Studio
parse the same values without importing the CLI."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """A number above 0 (NaN and infinity refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def attacker_epochs(text: str) -> int | dict[str, int]:
    """`--epochs`: `N` for every neural attacker, or `sgn=5,tcn=30` per attacker."""
    from .attacker_names import ATTACKER_NAMES, UNTRAINED

    if "=" not in text:
        return positive_int(text)
    epochs = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in ATTACKER_NAMES or name in UNTRAINED:
            raise argparse.ArgumentTypeError(f"no epochs for {name!r} (neural attackers: "
                                             f"{', '.join(n for n in ATTACKER_NAMES if n not in UNTRAINED)})")
        epochs[name] = positive_int(value.strip())
    return epochs


def parse_loss_weight(text: str) -> tuple[str, float]:
    """One `--loss-weight TERM=W` (also read by the Studio's Trainer tab)."""
    term, sep, value = text.partition("=")
    try:
        if sep and term:
            return term, float(value)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"expected TERM=WEIGHT (a number), got {text!r}")
