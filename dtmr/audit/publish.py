"""What of an audit may be published beside results, and the writing of that copy.

An audit folder maps every released clip to its performer (per-clip rows hold the release id and the subject,
as the key does) and holds the trained attackers. The published copy keeps every figure and each clip's risk,
but not who is who, and leaves the attacker files behind; its reports are made again from the copy.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DtmrError
from ..io.atomic import atomic_write
from ..io.outputs import check_output
from .audit_json import AUDIT_FILE, read_audit_json
from .report import write_reports


def publishable(audit: dict) -> dict:
    """`audit` (audit.json's content) without what links a released clip to its performer."""
    shared = {k: v for k, v in audit.items() if k != "attacker_files"}
    shared["clips"] = [{"id": "", "subject": "", "risk": c["risk"], "correct": c["correct"]}
                       for c in audit.get("clips", [])]
    return shared


def publish_audit(audit_dir: str | Path, out_dir: str | Path) -> Path:
    """Write the publishable copy of the audit in `audit_dir` to `out_dir` (audit.json and its reports);
    returns `out_dir`. The audit's own folder is refused (an input of the command), and so is any folder
    holding an audit that is not a published copy."""
    audit_dir, out_dir = Path(audit_dir), Path(out_dir)
    check_output(out_dir, kind="audit", folder=True, inputs=[audit_dir])
    if (out_dir / AUDIT_FILE).is_file() and not _published(out_dir):
        raise DtmrError(f"{out_dir}: holds an audit that is not a published copy; write to another folder")
    shared = publishable(read_audit_json(audit_dir))
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_write(out_dir / AUDIT_FILE) as tmp:
        tmp.write_text(json.dumps(shared, indent=1) + "\n")
    write_reports(shared, out_dir)
    return out_dir


def _published(folder: Path) -> bool:
    """The audit in `folder` is a published copy (no attacker files, no release ids): replacing it loses nothing
    that its audit does not have."""
    try:
        audit = read_audit_json(folder)
    except DtmrError:
        return False
    return "attacker_files" not in audit and not any(c.get("id") for c in audit.get("clips", []))
