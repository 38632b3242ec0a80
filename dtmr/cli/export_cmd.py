"""`dtmr export`: render source / retargeted / released side by side to an MP4 or GIF, without a display."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..argtypes import positive_float
from ..errors import CheckpointError, DtmrError, InputError
from ..io.clip_source import resolve_clip
from ..terminal import Progress

REFERENCE_SEPARATOR = "::"
#: `dtmr.render.camera.PRESETS` (listed here so that building the parser does not import the renderer)
CAMERA_PRESETS = ("oblique", "front", "side", "top")


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must be WIDTHxHEIGHT, e.g. 1920x480, got {text!r}") from None
    if width < 1 or height < 1:
        raise argparse.ArgumentTypeError(f"size must be positive, got {text!r}")
    return width, height


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="render source / retargeted / released side by side to MP4 or GIF",
        description="Anonymize one clip with a checkpoint and write the side-by-side comparison of the source, "
        "the full retarget and the released (beta-blended) clip as an MP4 or GIF. Needs no display. "
        "SOURCE may be a release (dtmr anonymize): then no model is needed, and the released clip is shown "
        "alone, or after its source with --key and --raw (the video names neither the performer nor the "
        "source clip).",
    )
    parser.add_argument("source", metavar="SOURCE", help=".skeleton file, folder of them, .npz data set or .h5 library")
    parser.add_argument("--model", metavar="CKPT", help="anonymizer checkpoint (not with a release)")
    parser.add_argument(
        "--full-model", metavar="CKPT",
        help="the beta = 1 checkpoint whose full decoder output is the retargeted panel (default: the beta = 1 "
        "checkpoint of the model's method and topology next to --model or among the bundled models, as in the "
        "Studio; without one, the model's own decoder output, and the panel title says so)",
    )
    parser.add_argument("--key", metavar="KEY", help="a release's key: show the released clip after its source")
    parser.add_argument("--raw", metavar="RAW", help="with --key: the raw clips the release was made from")
    parser.add_argument("--clip", default="0", metavar="ID", help="clip index or sample name in SOURCE (default 0)")
    parser.add_argument(
        "--reference", metavar="REF",
        help="reference clip: PATH (its first clip) or PATH::ID; default: a seeded random clip of SOURCE "
        "whose subject differs",
    )
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="output file, .mp4 or .gif")
    parser.add_argument("--overwrite", action="store_true", help="replace OUT even if it is not a video")
    parser.add_argument("--size", type=_size, metavar="WxH", help="whole frame size (default 640x480 per panel)")
    parser.add_argument("--fps", type=positive_float, metavar="N", help="frames per second (default: the clip's)")
    parser.add_argument("--frames", metavar="A:B", help="comparison frames A (inclusive) to B (exclusive), as a slice")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random reference (default 0)")
    parser.add_argument(
        "--recognizers", metavar="DIR",
        help="folder with action.pt / subject.pt recognizers whose top-1 predictions are shown "
        "(default: the bundled models folder when it holds them)",
    )
    parser.add_argument("--camera", choices=CAMERA_PRESETS, default=CAMERA_PRESETS[0],
                        help="view direction (default: %(default)s)")
    parser.set_defaults(func=run)


def frame_range(text: str | None, length: int) -> range:
    """The comparison frames selected by `A:B` (Python slice rules; either end may be left out)."""
    if text is None:
        return range(length)
    start, sep, stop = text.partition(":")
    try:
        if not sep:
            raise ValueError
        bounds = slice(int(start) if start.strip() else None, int(stop) if stop.strip() else None)
    except ValueError:
        raise DtmrError(f"--frames must be A:B, got {text!r}") from None
    frames = range(*bounds.indices(length))
    if len(frames) == 0:
        raise DtmrError(f"--frames {text} selects no frame of the {length}-frame comparison")
    return frames


def _split_reference(text: str) -> tuple[str, str]:
    path, sep, ident = text.rpartition(REFERENCE_SEPARATOR)
    return (path, ident) if sep else (text, "0")


def _read_reference(args, source, index: int, open_clip_source):
    from ..render.comparison import pick_reference

    if args.reference is not None:
        path, ident = _split_reference(args.reference)
        if Path(path).resolve() == Path(source.path).resolve():
            return source.read(resolve_clip(source, ident))
        ref_source = open_clip_source(path)
        try:
            return ref_source.read(resolve_clip(ref_source, ident))
        finally:
            ref_source.close()
    picked = pick_reference(source.metadata_table()["subject"], index, args.seed)
    if picked is None:
        raise InputError(source.path, "no clip of another subject to use as reference; pass --reference")
    return source.read(picked)


def _recognizers(args):
    from ..render.comparison import default_recognizers_dir, load_recognizers

    if args.recognizers is None:
        return load_recognizers(default_recognizers_dir())
    folder = Path(args.recognizers)
    if not folder.is_dir():
        raise InputError(folder, "not a folder")
    loaded = load_recognizers(folder)
    if loaded is None:
        raise InputError(folder, "holds neither action.pt nor subject.pt")
    return loaded


def run(args) -> int:
    from ..io.outputs import check_output
    from ..render import FORMATS, comparison_length, export_video
    from ..render.limits import check_frame_size

    output = Path(args.output)
    if output.suffix.lower() not in FORMATS:
        raise InputError(output, f"unsupported video format {output.suffix or '(none)'!r}: use .gif or .mp4")
    if args.size is not None:
        check_frame_size(args.size)
    inputs = [p for p in (args.source, args.model, args.full_model, args.key, args.raw) if p is not None]
    inputs += [_split_reference(args.reference)[0]] if args.reference else []
    check_output(output, kind="video", inputs=inputs, overwrite=args.overwrite)
    if _is_release_file(args.source):
        panels, fps = _release_panels(args)
    else:
        panels, fps = _comparison_panels(args)
    frames = frame_range(args.frames, comparison_length(p.num_frames for p in panels))
    fps = args.fps or fps
    with Progress("rendering") as progress:
        export_video(output, panels, frames=frames, fps=fps, size=args.size, preset=args.camera, progress=progress)
    print(f"wrote {output} ({len(frames)} frames at {fps:g} fps)")
    return 0


def _is_release_file(path: str) -> bool:
    from ..release.release import RELEASE_FORMAT, release_attributes

    return Path(path).suffix.lower() in (".h5", ".hdf5") and Path(path).is_file() and \
        release_attributes(path).get("release_format") == RELEASE_FORMAT


def _release_panels(args):
    """Panels of one released clip (and its source, through the key); the release's fps."""
    from ..data.label_set import LabelSet
    from ..io.library import ClipLibrary
    from ..io.sources import open_clip_source
    from ..release.release import open_release
    from ..render.comparison import release_panels

    if args.model is not None or args.full_model is not None or args.reference is not None:
        raise DtmrError(f"{args.source} is a release: it is already anonymized (no --model, --full-model or "
                        "--reference)")
    if (args.key is None) != (args.raw is None):
        raise DtmrError("--key and --raw go together: the key says which raw clip each released clip came from")
    # without --key the release is shown alone, even when its key lies beside it
    library, key = open_release(args.source, args.key) if args.key else (ClipLibrary(args.source), None)
    try:
        index = resolve_clip(library, args.clip)
        released = library.read(index)
        labels = LabelSet.of_source(library)
    finally:
        library.close()
    source = None
    if key is not None:
        raw = open_clip_source(args.raw)
        try:
            source = raw.read(int(key.source_indices()[index]))
        finally:
            raw.close()
    recognizers = _recognizers(args)
    _print_notes(recognizers, released.replace(subject=None), labels)
    return release_panels(released, source, recognizers, labels=labels), released.fps


def _comparison_panels(args):
    """Source, retargeted and released panels of one clip anonymized with --model; the source's fps."""
    from ..data.label_set import LabelSet
    from ..io.sources import open_clip_source
    from ..models.anonymizer import Anonymizer
    from ..render import build_comparison

    if args.model is None:
        raise DtmrError("--model is needed (SOURCE is not a release)")
    if args.key is not None or args.raw is not None:
        raise DtmrError("--key and --raw are for a release as SOURCE")
    source = open_clip_source(args.source)
    try:
        index = resolve_clip(source, args.clip)
        clip = source.read(index)
        reference = _read_reference(args, source, index, open_clip_source)
        labels = LabelSet.of_source(source)
        library_action_names = source.action_names
    finally:
        source.close()
    anonymizer = Anonymizer.from_checkpoint(args.model)
    full_path = retargeting_model(args.model, args.full_model)
    full_model = None if full_path is None or _same_file(full_path, args.model) else \
        Anonymizer.from_checkpoint(full_path)
    print(f"retargeted panel: {_retargeted_by(args.model, full_path, anonymizer.beta)}")
    recognizers = _recognizers(args)
    _print_notes(recognizers, clip, labels)
    panels = build_comparison(clip, reference, anonymizer, recognizers, full_model=full_model, labels=labels,
                              library_action_names=library_action_names)
    return panels, clip.fps


def _print_notes(recognizers, truth, labels) -> None:
    """Say why the predictions of the video mark no true label (the recognizers' classes are not the data's)."""
    from ..render.comparison import prediction_notes

    for note in prediction_notes(recognizers, truth, labels):
        print(f"predictions: {note}")


def retargeting_model(model: str | Path, full_model: str | Path | None = None) -> Path | None:
    """The checkpoint whose decoder makes the retargeted panel of `model`: `full_model` (--full-model: a β = 1
    retargeter of the model's topology), else the β = 1 partner `dtmr.models.pairing.full_model_for` finds
    (the rule of the Studio's catalogue); None: the model's own decoder."""
    from ..models.checkpoints.header import read_checkpoint_header
    from ..models.pairing import full_model_for, is_full

    if full_model is None:
        found = full_model_for(model)
        return None if found is None else found.path
    full = read_checkpoint_header(full_model)
    own = read_checkpoint_header(model)
    if not is_full(full):
        raise CheckpointError(full.path, f"--full-model must be a beta = 1 retargeter; this is {full.label}")
    if full.topology != own.topology:
        raise CheckpointError(full.path, f"--full-model has topology {full.topology}, the model {own.topology}")
    return full.path


def _same_file(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def _retargeted_by(model: str, full: Path | None, beta: float) -> str:
    """Which model made the retargeted panel, for the command's output."""
    if full is not None:
        return f"{model} (beta = 1)" if _same_file(full, model) else f"{full} (the beta = 1 model of {model})"
    return (f"the decoder of {model} (beta = {beta:g}): no beta = 1 checkpoint of its method and topology next "
            "to it or among the bundled models (--full-model names one)")
