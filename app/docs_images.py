"""`python -m app.docs_images OUT_DIR`: the two documentation images, from the bundled models and demo library.

* `OUT_DIR/studio.png`: the main window on the demo library, through the self-test (`app.self_test`), so
  the picture passes its checks: every view shows a skeleton and the predictions are filled in.
* `OUT_DIR/comparison.gif`: `dtmr export` of the same clip with the bundled β = 0.2 checkpoint and the
  bundled recognizers, run as the command itself (`python -m dtmr export`), i.e. exactly what it writes.

Both use the bundled resources (`DTMR_RESOURCES` moves them), so re-running it after the models are
retrained refreshes the images. It needs a display: run it under `xvfb-run` on a headless machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from dtmr.resources import DEMO_LIBRARY, MODELS_DIR, resource_path

#: the clip shown: subject 1 waving (a large, easy to read motion)
DEFAULT_CLIP = "S001A002R00V01"
#: the GIF's whole frame: three 320x320 panels keep it under ~1.5 MB
GIF_SIZE = "960x320"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.docs_images", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, metavar="OUT_DIR", help="folder for studio.png and comparison.gif")
    parser.add_argument("--library", type=Path, default=None, help="clips to show (default: the demo library)")
    parser.add_argument("--clip", default=DEFAULT_CLIP, help=f"clip index or sample name (default {DEFAULT_CLIP})")
    return parser


def shortest_path(path: Path) -> Path:
    """`path` relative to the working folder when it lies inside it (the window shows the path given)."""
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


def clip_index(library: Path, clip: str) -> int:
    from dtmr.io.clip_source import resolve_clip
    from dtmr.io.sources import open_clip_source

    source = open_clip_source(library)
    try:
        return resolve_clip(source, clip)
    finally:
        source.close()


def released_checkpoint(models_dir: Path) -> Path:
    """The bundled checkpoint the Studio selects first (β = 0.2); `DtmrError` when there is none."""
    from dtmr.errors import DtmrError

    from .core.checkpoints import build_catalog

    model = build_catalog([models_dir], []).recommended()
    if model is None:
        raise DtmrError(f"no retargeting checkpoint in {models_dir}: the images show the bundled model")
    return model.path


def main(argv: list[str] | None = None) -> int:
    from dtmr.errors import DtmrError

    from .main import application
    from .self_test import run_self_test
    from .ui.gl_check import probe_opengl

    args = build_parser().parse_args(argv)
    library = args.library or shortest_path(resource_path(*DEMO_LIBRARY))
    try:
        index = clip_index(library, args.clip)
        checkpoint = released_checkpoint(resource_path(*MODELS_DIR))
    except (DtmrError, OSError) as exc:
        print(f"python -m app.docs_images: {exc}", file=sys.stderr)
        return 1
    args.out_dir.mkdir(parents=True, exist_ok=True)
    app = application()
    report = probe_opengl()
    if not report.ok:
        print(f"python -m app.docs_images: {report.message}", file=sys.stderr)
        return 1
    gl_line = f"OpenGL {'.'.join(map(str, report.version or ()))} ({report.renderer})"
    status = run_self_test(app, library, args.out_dir / "studio.png", gl_line, clip=index)
    if status != 0:
        return status
    gif = args.out_dir / "comparison.gif"
    done = subprocess.run([sys.executable, "-m", "dtmr", "export", str(library), "--model", str(checkpoint),
                           "--clip", str(index), "--size", GIF_SIZE, "-o", str(gif)],
                          capture_output=True, text=True, check=False)
    print(done.stdout, end="")
    print(done.stderr, end="", file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
