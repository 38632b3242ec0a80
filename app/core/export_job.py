"""The export job: the comparison on screen to a GIF or MP4, through the same code as `dtmr export`.

Panels come from `dtmr.render.build_comparison` and frames from `dtmr.render.export_video`, exactly as in
the CLI. The only difference is where the model outputs come from: the Studio passes the clips it
already shows (`ShownOutputs`), so the video is what the user inspected, and no model runs twice. Both
take the retargeted view from the same model, the β = 1 partner `dtmr.models.pairing.find_full_model`
picks (the model's own decoder when there is none, and the panel title says so), so with the same
checkpoint, clip and seed `dtmr export` computes the same clips and writes the same frames.
Before any work the output is checked as `dtmr export` checks it (`dtmr.io.outputs.check_output`: never one
of the inputs, never a folder, never a file of another kind unless `overwrite`) and so are the frame size
and the rate (a GIF plays at most 50 fps).

The dialog proposes a folder of the user's, never the installation's (`default_export_folder`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dtmr.data.label_set import match_classes

from .cancel import CancelToken, ProgressFn
from .checkpoints import CheckpointInfo
from .provenance import shown_provenance

if TYPE_CHECKING:
    from dtmr.data.clip import Clip
    from dtmr.data.label_set import LabelSet


@dataclass(frozen=True)
class ShownOutputs:
    """Stands in for the `Anonymizer` that `build_comparison` expects: returns the clips on screen."""

    retargeted: Clip
    released: Clip
    beta: float
    method: str

    def retarget_pair(self, source: Clip, reference: Clip, action_names=None) -> tuple[Clip, Clip]:
        """The clips on screen (made with the library's action names already, `RetargetRequest`)."""
        return self.retargeted, self.released

    def full_model(self) -> ShownOutputs:
        """Stands in for the model that made the retargeted view: the β it records in its provenance
        (`dtmr.data.provenance`), which titles the retargeted panel."""
        made = shown_provenance(self.retargeted)
        beta = self.beta if made is None or made.beta is None else made.beta
        method = self.method if made is None else made.method
        return ShownOutputs(self.retargeted, self.retargeted, beta, method)



@dataclass(frozen=True)
class ExportRequest:
    path: Path
    source: Clip
    reference: Clip
    outputs: ShownOutputs
    frames: range
    fps: float
    size: tuple[int, int]
    preset: str
    foot_sliding: bool = True
    #: recognizers whose top-1 predictions are printed under the titles (empty: none)
    recognizers: Mapping[str, CheckpointInfo] | None = None
    action_names: Mapping[int, str] | None = None
    #: the open library's labels: predictions are marked against them by name (`dtmr.data.label_set`)
    labels: LabelSet | None = None
    device: str | None = None
    #: the files the comparison was read from (library, checkpoint): the output may not be one of them
    inputs: tuple[Path, ...] = ()
    #: replace an existing file that is not a video
    overwrite: bool = False


def withheld_predictions(recognizers: Mapping[str, CheckpointInfo] | None, labels: LabelSet | None) -> list[str]:
    """The one-line reasons why the video prints no prediction of a recognizer (its classes are not the
    library's labels: `dtmr.data.label_set.ClassMatch.withheld`); its frames say "no prediction"."""
    matches = (match_classes(info.classes, labels) for _, info in sorted((recognizers or {}).items()) if info.classes)
    return [match.withheld for match in matches if match.withheld]


def default_export_folder(library_folder: str | Path | None, home: Path | None = None) -> Path:
    """Where an export goes unless the user says otherwise: the library's folder when it is writable and not
    part of the installation (the bundled demo library lies in `resources/demo/`), else ~/Videos when it
    exists, else the home folder."""
    from dtmr.resources import resources_dir

    home = Path.home() if home is None else home
    if library_folder:
        folder = Path(library_folder).resolve()
        installed = resources_dir().resolve()
        if folder.is_dir() and os.access(folder, os.W_OK) and not folder.is_relative_to(installed):
            return folder
    videos = home / "Videos"
    return videos if videos.is_dir() else home


def check_request(request: ExportRequest) -> None:
    """Raise `DtmrError` (naming the file or the size) when the request would destroy a file or could not
    be rendered; nothing is read or written."""
    from dtmr.io.outputs import check_output
    from dtmr.render.limits import check_frame_size
    from dtmr.render.video import check_video_rate

    check_frame_size(request.size, "frame size")
    check_video_rate(request.path, request.fps)
    recognizers = [info.path for info in (request.recognizers or {}).values()]
    check_output(request.path, kind="video", inputs=[*request.inputs, *recognizers], overwrite=request.overwrite)


def export_comparison(request: ExportRequest, token: CancelToken, progress: ProgressFn) -> Path:
    from dtmr.render import Recognizers, build_comparison, export_video

    check_request(request)
    recognizers = None
    if request.recognizers:
        from dtmr.models.recognizers import Recognizer

        progress(0, 1, "loading the recognizers")
        loaded = {task: Recognizer.from_checkpoint(info.path, device=request.device)
                  for task, info in request.recognizers.items() if task in ("action", "subject")}
        recognizers = Recognizers(**loaded)
        token.check()
    progress(0, 1, "building the panels")
    # titles name actions by the library's names, never the recognizer's (its classes need not be these)
    panels = build_comparison(request.source, request.reference, request.outputs, recognizers,
                              action_names=dict(request.action_names or {}), foot_sliding=request.foot_sliding,
                              full_model=request.outputs.full_model(), labels=request.labels)
    token.check()
    return export_video(
        request.path, panels, frames=request.frames, fps=request.fps, size=request.size, preset=request.preset,
        progress=lambda done, total: progress(done, total, f"frame {done}/{total}"),
        cancel=lambda: token.cancelled,
    )
