"""The "Fit k-same on this library" job: a fitted motion model (k-same, re-timing) of the open library, written
into the user's models folder under a new name.

The fitting is `dtmr.train.motion_fit.fit_motion_checkpoint`, the code of `dtmr fit-motion-model`. The split
is the one `dtmr.data.split_choice.choose_split` proposes for the library's layout (N-UCLA: `nwucla`, the
demo: `synthetic`), so the clips of its test half are not in the pool that releases them. **Decision:** when
no split fits the library (no known layout and a single repetition, or the proposed split cannot be used on
these clips) the model is fitted on every clip, and the result says so: a library the user only wants to
look at needs no held-out half, and there is no held-out half to offer. k-same uses the project's
recommended k (`dtmr.methods.KSAME.recommended`). An existing file is never replaced: the name takes the
next free number (`new_model_path`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from dtmr.methods import KSAME, display_name

from .cancel import CancelToken, ProgressFn

#: the folder under the user's data folder (`dtmr.review.location.user_data_dir`) that fitted models go into
MODELS_FOLDER = "models"


def user_models_dir() -> Path:
    """Where the Studio writes the models it fits: `<user data folder>/models` (never the installation)."""
    from dtmr.review.location import user_data_dir

    return user_data_dir() / MODELS_FOLDER


def new_model_path(folder: Path, library: Path, method: str) -> Path:
    """`folder/<method>_<library>.pt`, or `..._2.pt`, `..._3.pt`: the first name no file has."""
    from dtmr.io.outputs import unused_path

    return unused_path(folder, f"{method}_{library.stem}", ".pt")


@dataclass(frozen=True)
class FitRequest:
    library: Path
    method: str
    folder: Path


@dataclass(frozen=True)
class FitResult:
    path: Path
    #: one short line for the Studio: what was fitted on which clips, in how many seconds, into which file
    text: str
    seconds: float
    #: the fit's summary (`MotionFit.summary`: settings, templates, pool, accuracy on the test half)
    details: str = ""


class MotionFitJob:
    """The job a worker runs (`JobThread`, or a `ProcessJob` child): ``job(request, token, progress)``."""

    def __call__(self, request: FitRequest, token: CancelToken, progress: ProgressFn) -> FitResult:
        from dtmr.data.split_choice import choose_split
        from dtmr.io.sources import open_clip_source
        from dtmr.train.motion_fit import MotionFitSettings, fit_motion_checkpoint

        started = time.perf_counter()
        progress(0, 3, f"reading {request.library.name}")
        source = open_clip_source(request.library)
        try:
            choice = choose_split(source.metadata_table())
        finally:
            source.close()
        split = choice.split if choice.split and not choice.problem else None
        token.check()
        request.folder.mkdir(parents=True, exist_ok=True)
        out = new_model_path(request.folder, request.library, request.method)
        settings = MotionFitSettings(request.method, **({"k": KSAME.recommended["k"]} if request.method == KSAME.name
                                                       else {}))
        progress(1, 3, f"fitting {request.method} on {'the training half of ' + split if split else 'every clip'}")
        fit = fit_motion_checkpoint(request.library, split, settings, out, check=token.check)
        seconds = time.perf_counter() - started
        progress(3, 3, "written")
        on = f"the training half of {split} ({fit.train_clips:,} clips)" if split else \
            f"every clip ({fit.train_clips:,}; no split fits this library)"
        text = f"Fitted {display_name(request.method)} on {on} in {seconds:.1f} s: {fit.path.name}"
        return FitResult(fit.path, text, seconds, fit.summary)
