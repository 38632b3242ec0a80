"""What a release leaves in (`ReleaseOptions`: kept columns, frame count, placement, missing joints,
provenance) and the parsing of the `dtmr anonymize` arguments that set them."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import DtmrError
from .channels import RELEASE_FRAMES
from .runner import AUTO

#: the identifying columns `keep` may leave in a release
KEEPABLE = ("view", "repetition")
#: the longest `length` accepted: 10^4 frames of 25 joints are 3 MB a clip
MAX_LENGTH = 10_000


@dataclass(frozen=True)
class ReleaseOptions:
    """What the release leaves in: `keep` (of KEEPABLE), `length` (every clip's frame count; None keeps each
    clip's own), the source's placement in the room and its missing-joint pattern (both removed unless kept,
    dtmr/release/channels.py), provenance."""

    keep: tuple[str, ...] = ()
    length: int | None = RELEASE_FRAMES
    with_provenance: bool = False
    keep_placement: bool = False
    keep_missing: bool = False

    @property
    def channels_kept(self) -> tuple[str, ...]:
        """The source channels this release opts into keeping (the audit fails each)."""
        return tuple(name for name, kept in (("placement", self.keep_placement), ("length", self.length is None),
                                             ("missing joints", self.keep_missing)) if kept)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.keep) - set(KEEPABLE))
        if unknown:
            raise DtmrError(f"--keep: cannot keep {', '.join(unknown)} (only {', '.join(KEEPABLE)})")
        object.__setattr__(self, "keep", tuple(sorted(set(self.keep))))
        if self.length is not None and not (isinstance(self.length, int) and 2 <= self.length <= MAX_LENGTH):
            raise DtmrError(f"--length must be 'keep' or a frame count from 2 to {MAX_LENGTH}, got {self.length!r}")


def parse_length(text: str | None) -> int | None:
    """`--length`: None (not given) -> RELEASE_FRAMES, "keep" -> None, else the frame count."""
    if text is None:
        return RELEASE_FRAMES
    if text.strip().lower() == "keep":
        return None
    try:
        return int(text)
    except ValueError:
        raise DtmrError(f"--length must be 'keep' or a frame count, got {text!r}") from None


def parse_keep(text: str) -> tuple[str, ...]:
    """`--keep view,repetition` -> ("repetition", "view")."""
    return tuple(sorted({part.strip() for part in text.split(",") if part.strip()}))


def parse_batch(text: str) -> int | str:
    """`--batch`: "auto" or a clip count of at least 1."""
    if text.strip().lower() == AUTO:
        return AUTO
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise DtmrError(f"--batch must be 'auto' or a clip count of at least 1, got {text!r}")
    return value
