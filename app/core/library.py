"""Opening a clip source (every kind `dtmr.io.sources.open_clip_source` reads) for the Studio.

A file of 2-D keypoints (COCO JSON, COCO dataset files, OpenPose, 2-D PYSKL pickles) is lifted to 3-D by the
bundled lifter, as `dtmr data import --lift` does; the import note says so. A release (`dtmr anonymize`
output, `dtmr.release.is_release`) opens with its key when one is given or lies beside it
(`released.key.json`): the clips then carry their source subjects (`KeyedRelease`). Its audit is read from
the audit's default folder (`released.audit/audit.json`) when there is one; a broken audit does not stop the
release from opening (`audit_error` says why it was not used).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dtmr.data.label_set import action_name_map
from dtmr.io.clip_source import ClipSource
from dtmr.io.import_options import ImportOptions
from dtmr.io.sources import OPEN_PATTERNS

from .audit_file import AuditInfo, default_audit_path, read_audit
from .cancel import CancelToken, ProgressFn
from .release_source import KeyedRelease

if TYPE_CHECKING:  # dtmr.release is loaded when a library is opened, not at start-up
    from dtmr.release.key import ReleaseKey

#: what the File menu's open dialog offers
OPEN_FILTER = f"Skeleton clips ({' '.join(OPEN_PATTERNS)});;All files (*)"


@dataclass(frozen=True)
class OpenRequest:
    path: Path
    #: a release key to open the release with (None: the one beside the release, if any)
    key: Path | None = None
    #: the up axis, unit or joint map of a BVH file or pose array (File > Open with options…)
    options: ImportOptions | None = None


@dataclass(frozen=True)
class OpenedLibrary:
    path: Path
    source: ClipSource  # a `KeyedRelease` for a release opened with its key
    #: `source.metadata_table()`, read once (for an HDF5 library it is the only eager read)
    table: dict[str, np.ndarray]
    #: written by `dtmr anonymize` (opaque ids, no subjects of its own)
    release: bool = False
    key: ReleaseKey | None = None
    audit: AuditInfo | None = None
    #: why the audit beside the release could not be used ("" when none was there or it was read)
    audit_error: str = ""
    #: what the importer decided (a BVH rig, a unit, an up axis) and what it warns of (a body lying down)
    import_notes: tuple[str, ...] = ()
    import_warnings: tuple[str, ...] = ()

    @cached_property
    def risk(self) -> np.ndarray:
        """(N,) float64 each clip's risk from the audit, NaN where it gives none (all NaN without an audit)."""
        ids = self.table.get("sample_name", np.full(len(self.source), "", dtype=object))
        if self.audit is None:
            return np.full(len(ids), np.nan)
        return self.audit.risk_column(ids)

    @cached_property
    def action_names(self) -> dict[int, str]:
        """Action label -> name; the rule of `dtmr.io.sources.action_name_map`, shared with `dtmr export`."""
        return action_name_map(self.source.action_names, self.table.get("action", np.zeros(0)))

    def action_name(self, action: int) -> str:
        """The action's name when known, else "action N" ("" for an unknown action)."""
        if action < 0:
            return ""
        return self.action_names.get(action, f"action {action}")


def open_library(request: OpenRequest | str | Path, token: CancelToken, progress: ProgressFn) -> OpenedLibrary:
    """The library job: open a path (or an `OpenRequest`) and read its metadata table (errors name the file)."""
    from dtmr.errors import DtmrError, NeedsLiftingError
    from dtmr.io.import_notes import source_notes
    from dtmr.io.library import ClipLibrary
    from dtmr.io.sources import open_clip_source
    from dtmr.release.release import is_release, open_release

    if not isinstance(request, OpenRequest):
        request = OpenRequest(Path(request))
    path = Path(request.path)
    progress(0, 2, f"opening {path.name}")
    try:
        source = open_clip_source(path, options=request.options)
    except NeedsLiftingError:  # 2-D keypoints: shown as the bundled lifter's 3-D guess, which the notes say
        from dtmr.lift.sources import open_lifted

        progress(0, 2, f"lifting the 2-D keypoints of {path.name} to 3-D")
        source = open_lifted(path)
    notes, warnings = source_notes(source)
    release = isinstance(source, ClipLibrary) and is_release(source)
    key = None
    if request.key is not None and not release:
        source.close()
        raise DtmrError(f"{path} is not a release (written by dtmr anonymize): {request.key} cannot open it")
    if release:
        source.close()
        source, key = open_release(path, request.key)
        if key is not None:
            source = KeyedRelease(source, key)
    token.check()
    progress(1, 2, "reading clip metadata")
    table = {k: np.asarray(v) for k, v in source.metadata_table().items()}
    audit, audit_error = None, ""
    if release and default_audit_path(path).is_file():
        try:
            audit = read_audit(default_audit_path(path))
        except DtmrError as exc:
            audit_error = str(exc)
    progress(2, 2, f"{len(source)} clips")
    return OpenedLibrary(path, source, table, release, key, audit, audit_error, tuple(notes), tuple(warnings))
