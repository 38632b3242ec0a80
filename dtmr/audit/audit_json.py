"""Where an audit's `audit.json` lives and how it is read back: one home for the CLI, the scripts and the Studio."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..io.bounded_tree import loads_json

AUDIT_FORMAT = "dtmr-audit"
AUDIT_VERSION = 1
AUDIT_FILE = "audit.json"
#: the utility entry of each form of the action recognizer (`utility.<entry>` in audit.json)
UTILITY_ENTRIES = {"raw-trained": "action_recognition", "retrained": "action_recognition_retrained"}


def attacker_file_key(name: str, form: str) -> str:
    """The key of an attacker's saved file in audit.json's `attacker_files` ("tcn/adaptive")."""
    return f"{name}/{form}"


def utility_entry(audit: dict, form: str = "raw-trained") -> dict | None:
    """The action recognizer's entry of `form` in an audit.json's content; None when the audit has none (no
    action labels, or made before the form existed)."""
    return (audit.get("utility") or {}).get(UTILITY_ENTRIES[form])


def default_out(release: str | Path) -> Path:
    """The audit folder of a release: `released.h5` -> `released.audit/`."""
    release = Path(release)
    return release.with_name(release.stem + ".audit")


def read_audit_json(path: str | Path) -> dict:
    """The content of an `audit.json` (or of the one in folder `path`); `InputError` naming the file when it
    is missing, unreadable or not an audit."""
    path = Path(path)
    if path.is_dir() or path.suffix != ".json":  # an audit folder (named so even when it is missing)
        path = path / AUDIT_FILE
    try:
        data = loads_json(path.read_text(encoding="utf-8"), path, "audit")
    except FileNotFoundError:
        raise InputError(path, "no such audit file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(path, f"cannot read the audit ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict) or data.get("format") != AUDIT_FORMAT:
        raise InputError(path, f"not a {AUDIT_FORMAT} file (no 'format' saying so)")
    return data
