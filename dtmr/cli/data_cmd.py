"""`dtmr data info|import|export|synth`: inspect clip files, build HDF5 clip libraries, export single clips.

Paths: any clip source `dtmr.io.sources.open_clip_source` reads (NTU `.skeleton` files and folders, `.npz` data
sets, `.h5` libraries and the formats of other tools: PYSKL pickles, SGN arrays, pose arrays, COCO / MMPose /
OpenPose JSON, BVH, C3D; docs/io.md, "Every format at a glance").
"""

from __future__ import annotations

import json
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..argtypes import positive_int
from ..errors import DtmrError, InputError
from ..skeleton import topology_names
from ..terminal import Progress

if TYPE_CHECKING:
    from ..io.clip_source import ClipSource


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "data", help="inspect, import, export and synthesize clip data",
        description="Inspect clip data of any format dtmr reads, build HDF5 clip libraries and export clips.",
    )
    actions = parser.add_subparsers(dest="data_command", metavar="ACTION", required=True)

    info = actions.add_parser(
        "info", help="summarize a clip file or folder of any format dtmr reads (docs/io.md)"
    )
    info.add_argument("path", metavar="PATH")
    info.add_argument("--json", action="store_true", help="print a JSON object instead of a summary")
    _add_import_options(info)
    info.set_defaults(func=run_info)

    imp = actions.add_parser(
        "import", help="build an .h5 clip library from clip files and folders of any format dtmr reads (docs/io.md)"
    )
    imp.add_argument("paths", nargs="+", metavar="PATH")
    imp.add_argument("-o", "--output", required=True, metavar="OUT.h5")
    imp.add_argument("--overwrite", action="store_true",
                     help="replace OUT.h5 even if it is a library, a model, a key or another file a user keeps")
    imp.add_argument("--topology", choices=topology_names(),
                     help="joint set of inputs whose own cannot be told (.npz data sets, pose arrays, PYSKL "
                          "pickles of 17 joints, MMPose 3-D JSON); for other formats it must agree with the file's")
    imp.add_argument("--lift", action="store_true",
                     help="the inputs are 2-D COCO-17 keypoints (MMPose / OpenPose JSON, 2-D PYSKL pickles): lift "
                          "them to 3-D with the bundled lifter (docs/models.md, Lifter)")
    _add_import_options(imp)
    imp.set_defaults(func=run_import)

    exp = actions.add_parser(
        "export", help="write a library (or one clip of it) to .npz, a PYSKL .pkl or a folder of .skeleton files",
        description="Without --clip, every clip: OUT.npz, OUT.pkl (PYSKL/MMAction2 annotations) or OUT_folder/ "
                    "(NTU .skeleton files). A release exports with its opaque ids only. With --clip, one clip "
                    "to OUT.skeleton, OUT.npz, OUT.bvh (motion capture; Blender) or OUT.json (COCO-17 2-D "
                    "keypoints through the front camera).",
    )
    exp.add_argument("library", metavar="LIB.h5")
    exp.add_argument("--clip", metavar="ID", help="export only this clip: index (0-based) or sample name")
    exp.add_argument("--split", metavar="NAME", help="(.pkl) the PYSKL splits NAME_train / NAME_val from this "
                     "named split (dtmr.data.splits); default: one split 'all'")
    exp.add_argument("-o", "--output", required=True,
                     metavar="OUT.npz|OUT.pkl|OUT_folder/|OUT.skeleton|OUT.bvh|OUT.json")
    exp.add_argument("--overwrite", action="store_true",
                     help="replace the output even if it is a file of another kind")
    exp.set_defaults(func=run_export)

    synth = actions.add_parser("synth", help="write a library of synthetic ntu25 clips")
    synth.add_argument("-o", "--output", required=True, metavar="OUT.h5")
    synth.add_argument("--overwrite", action="store_true",
                       help="replace OUT.h5 even if it is a library, a model, a key or another file a user keeps")
    for name in ("subjects", "actions", "repetitions", "views"):
        synth.add_argument(f"--{name}", type=positive_int, metavar="N", help="default: the generator's")
    synth.add_argument("--seed", type=int, metavar="S", help="default: the generator's")
    synth.add_argument("--noise", type=float, metavar="X", help="scale of the Kinect-like noise (0 = clean; "
                       "default: the generator's 1.0)")
    synth.set_defaults(func=run_synth)



def _add_import_options(parser) -> None:
    """--up, --units, --scale, --joint-map: for BVH files and 3-D pose arrays (docs/io.md); others ignore them."""
    from ..io.body_size import UNITS
    from ..io.up_axis import UP_CHOICES

    group = parser.add_argument_group("BVH and 3-D pose arrays")
    group.add_argument("--up", choices=UP_CHOICES, default="auto", metavar="AXIS",
                       help="the file's up axis: x, y, z, -x, -y, -z (default auto: the format's convention unless "
                            "the body stands along another axis)")
    group.add_argument("--units", choices=tuple(UNITS), help="the file's unit (default: the one that makes the body "
                       "0.8-2.5 m tall)")
    group.add_argument("--scale", type=float, metavar="METRES_PER_UNIT", help="the file's unit in metres, "
                       "instead of --units")
    group.add_argument("--joint-map", metavar="FILE.json", help='BVH: {"BVH joint": "NTU-25 joint", ...} for a '
                       "rig whose joints are not found by name or shape")


def _import_options(args):
    from ..io.import_options import ImportOptions

    return ImportOptions(up=args.up, units=args.units, scale=args.scale, joint_map=args.joint_map)


def _report_notes(source) -> None:
    """The importer's decisions (rig, unit, up axis) and warnings, one line each on stderr."""
    from ..io.import_notes import source_notes

    notes, warnings = source_notes(source)
    for note in notes:
        print(f"{source.path}: {note}", file=sys.stderr)
    for warning in warnings:
        print(f"dtmr: warning: {source.path}: {warning}", file=sys.stderr)


# -- info -----------------------------------------------------------------------------------------------
def describe(path: str | Path, options=None) -> dict:
    """What `dtmr data info --json` prints: format, clips, topology, label sets, frames per clip, ..."""
    from ..io.clip_source import InMemoryClipSource
    from ..io.ntu_skeleton import read_skeleton_file
    from ..io.sources import open_clip_source

    path = Path(path)
    skeleton = None
    if path.is_file() and path.suffix.lower() == ".skeleton":
        skeleton = read_skeleton_file(path)
        source = InMemoryClipSource(str(path), "ntu-skeleton", "ntu25", [skeleton.to_clip()])
    else:
        with Progress(f"reading {path}") as progress:
            source = open_clip_source(path, progress=progress, options=options)
        _report_notes(source)
    with closing(source):
        table = source.metadata_table()
        summary = {
            "path": str(path),
            "format": source.format,
            "clips": len(source),
            "topology": source.topology,
            "subjects": _known(table["subject"]),
            "actions": _known(table["action"]),
            "views": _known(table["view"]),
            "repetitions": _known(table["repetition"]),
            "frames": table["num_frames"].tolist(),
            "action_names": source.action_names,
        }
    if skeleton is not None:
        summary["bodies"] = skeleton.body_ids
        summary["main_body"] = skeleton.main_body_id
        summary["file_frames"] = skeleton.frame_count
    return summary


def _known(labels) -> list[int]:
    return sorted({int(v) for v in labels.tolist() if v >= 0})


def _ranges(values: list[int]) -> str:
    """[1, 2, 3, 7] -> "1-3, 7"."""
    if not values:
        return "unknown"
    parts = []
    start = prev = values[0]
    for value in values[1:] + [None]:
        if value is None or value != prev + 1:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = value
        prev = value
    return ", ".join(parts)


def format_summary(summary: dict) -> str:
    frames = summary["frames"]
    from ..io.sources import FORMAT_LABELS

    kind = FORMAT_LABELS.get(summary["format"], summary["format"])
    lines = [f"{summary['path']}: {kind}, {summary['clips']} clip(s), topology {summary['topology']}"]
    if frames:
        lines.append(f"  frames: {sum(frames)} in all, {min(frames)}-{max(frames)} per clip "
                     f"(mean {sum(frames) / len(frames):.1f})")
    if "bodies" in summary:
        lines.append(f"  bodies: {len(summary['bodies'])} ({', '.join(map(str, summary['bodies']))}); "
                     f"main actor {summary['main_body']}; {summary['file_frames']} frames in the file")
    for key in ("subjects", "actions", "views", "repetitions"):
        lines.append(f"  {key}: {len(summary[key])} ({_ranges(summary[key])})")
    if summary["action_names"]:
        named = [f"{label} {name}" for label, name in enumerate(summary["action_names"]) if name]
        lines.append(f"  action names: {', '.join(named)}")
    return "\n".join(lines)


def run_info(args) -> int:
    summary = describe(args.path, _import_options(args))
    print(json.dumps(summary, indent=1) if args.json else format_summary(summary))
    return 0


# -- import ---------------------------------------------------------------------------------------------
@dataclass
class _Input:
    """One import input: `.skeleton` files (read one at a time) or an open clip source."""

    path: Path
    topology: str
    files: list[Path] | None = None
    source: ClipSource | None = None

    def __len__(self) -> int:
        return len(self.files) if self.files is not None else len(self.source)


def _open_input(name: str, topology: str | None, lift: bool = False, options=None) -> _Input:
    from ..io.sources import open_clip_source, skeleton_files

    path = Path(name)
    if lift:
        from ..lift.sources import open_lifted

        if topology not in (None, "coco17"):
            raise InputError(path, f"lifted clips are coco17, not {topology}")
        source = open_lifted(path)
        _report_notes(source)
        return _Input(path, source.topology, source=source)
    if path.is_dir() or (path.is_file() and path.suffix.lower() == ".skeleton"):
        files = skeleton_files(path) if path.is_dir() else [path]
        if not files:
            raise InputError(path, "no .skeleton files in this folder")
        if topology not in (None, "ntu25"):
            raise InputError(path, f".skeleton files hold ntu25 joints, not {topology}")
        return _Input(path, "ntu25", files=files)
    source = open_clip_source(path, topology, options=options)
    _report_notes(source)
    return _Input(path, source.topology, source=source)


def _common_action_names(inputs: list[_Input]) -> list[str] | None:
    """Checks that the inputs share one joint set and agree on action names; returns the names."""
    first, names = inputs[0], None
    for item in inputs:
        if item.topology != first.topology:
            raise InputError(item.path, f"holds {item.topology} clips but {first.path} holds {first.topology}: "
                                        "joint sets cannot be mixed")
        found = item.source.action_names if item.source is not None else None
        if found is not None:
            if names is not None and found != names:
                raise InputError(item.path, "its action names differ from those of an earlier input")
            names = found
    return names


def run_import(args) -> int:
    from ..io.library import ClipLibrary
    from ..io.ntu_skeleton import read_ntu_clip
    from ..io.outputs import check_output

    check_output(args.output, kind="clip-library", inputs=args.paths, overwrite=args.overwrite)
    options = _import_options(args)

    inputs: list[_Input] = []
    progress = Progress(f"importing into {args.output}")

    def clips():
        done, total = 0, sum(len(item) for item in inputs)
        for item in inputs:
            for i in range(len(item)):
                yield read_ntu_clip(item.files[i]) if item.files is not None else item.source.read(i)
                done += 1
                progress(done, total)

    try:
        for name in args.paths:
            inputs.append(_open_input(name, args.topology, args.lift, options))
        action_names = _common_action_names(inputs)
        library = ClipLibrary.create(args.output, clips(), topology=args.topology, action_names=action_names)
    finally:
        progress.close()
        for item in inputs:
            if item.source is not None:
                item.source.close()
    with library:
        print(f"wrote {args.output}: {len(library)} clips, topology {library.topology}")
    return 0


# -- export ---------------------------------------------------------------------------------------------
#: `dtmr data export --clip`: output suffix -> its kind for the output guard (`dtmr.io.outputs`)
CLIP_EXPORT_KINDS = {".skeleton": "skeleton", ".npz": "npz", ".bvh": "bvh", ".json": "keypoint-json"}


def _clip_index(source, clip_id: str) -> int:
    """An integer is an index (negative counts from the end); anything else is a sample name."""
    try:
        index = int(clip_id)
    except ValueError:
        matches = [i for i, name in enumerate(source.metadata_table()["sample_name"].tolist()) if name == clip_id]
        if not matches:
            raise InputError(source.path, f"no clip named {clip_id!r}") from None
        if len(matches) > 1:
            raise InputError(source.path, f"{len(matches)} clips are named {clip_id!r} (indices {matches[:5]}): "
                                          "use an index") from None
        return matches[0]
    if not -len(source) <= index < len(source):
        raise InputError(source.path, f"clip index {index} out of range: the library has {len(source)} clips")
    return index % len(source)


def run_library_export(args) -> int:
    from ..release.export import export_library

    result = export_library(args.library, args.output, split=args.split, overwrite=args.overwrite)
    what = {"npz": ".npz data set", "pyskl": "PYSKL annotation pickle", "skeleton": ".skeleton files"}[result.format]
    splits = "; splits " + ", ".join(f"{k} ({n})" for k, n in result.splits.items()) if result.splits else ""
    ids = ", release ids only" if result.release else ""
    print(f"wrote {args.output}: {result.clips} clips as {what}{ids}{splits}")
    if result.provenance_included:
        print(f"dtmr: warning: {args.library} was built with --with-provenance: the export identifies subjects "
              "and sources; do not publish it", file=sys.stderr)
    return 0


def run_export(args) -> int:
    if args.clip is None:
        return run_library_export(args)
    if args.split is not None:
        raise DtmrError("--split applies to whole-library exports (without --clip)")
    from ..io.npz_dataset import write_npz_dataset
    from ..io.ntu_skeleton import write_skeleton_file
    from ..io.outputs import check_output
    from ..io.sources import open_clip_source

    suffix = Path(args.output).suffix.lower()
    if suffix not in CLIP_EXPORT_KINDS:
        *others, last = CLIP_EXPORT_KINDS
        raise InputError(args.output, f"unknown export format: name the output {', '.join(others)} or {last}")
    check_output(args.output, kind=CLIP_EXPORT_KINDS[suffix], inputs=[args.library], overwrite=args.overwrite)
    with closing(open_clip_source(args.library)) as source:
        index = _clip_index(source, args.clip)
        clip = source.read(index)
        action_names = source.action_names
    if suffix == ".skeleton":
        write_skeleton_file(args.output, clip)
    elif suffix == ".bvh":
        from ..io.bvh_writer import write_bvh

        write_bvh(args.output, clip)
    elif suffix == ".json":
        from ..render.coco_keypoints import write_coco_json

        write_coco_json(args.output, clip)
    else:
        write_npz_dataset(args.output, [clip], action_names=action_names)
    print(f"wrote {args.output}: clip {index} ({clip.name}), {clip.num_frames} frames, topology {clip.topology}")
    return 0


# -- synth ----------------------------------------------------------------------------------------------
def run_synth(args) -> int:
    from ..data.synthetic import SYNTHETIC_ACTION_NAMES, generate_clips
    from ..io.library import ClipLibrary

    from ..io.outputs import check_output

    if args.noise is not None and args.noise < 0:
        raise DtmrError("--noise cannot be negative")
    check_output(args.output, kind="clip-library", overwrite=args.overwrite)
    options = {name: getattr(args, name) for name in ("subjects", "actions", "repetitions", "views", "seed", "noise")}
    clips = generate_clips(**{name: value for name, value in options.items() if value is not None})
    # synthetic action labels are 1-based like NTU's; action_names is indexed by the label itself
    action_names = ["", *SYNTHETIC_ACTION_NAMES]
    with ClipLibrary.create(args.output, clips, action_names=action_names) as library:
        print(f"wrote {args.output}: {len(library)} synthetic clips, topology {library.topology}")
    return 0
