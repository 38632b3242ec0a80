"""The provenance of a clip on screen (`dtmr.data.provenance`), as the views' captions and the exports read it."""

from __future__ import annotations

from dtmr.data.clip import Clip
from dtmr.data.provenance import Provenance
from dtmr.errors import InputError


def shown_provenance(clip: Clip) -> Provenance | None:
    """The provenance of a clip on screen; None when it has none or a damaged one (a clip of a library opened
    in the Studio may carry anything in `extra`: its export then names no method rather than failing)."""
    try:
        return Provenance.from_clip(clip)
    except InputError:
        return None
