"""Give damaged files of every format to the readers and count what happens (issues 20 and 21).

    python scripts/fuzz_readers.py [--variants 240] [--junk-2056 192] [--hostile 24] [--seed 20] [--limit 60]
                                   [--hdf5-deadline 5] [--formats skeleton,npz,h5,bvh,json,pkl,sgn,npy,c3d,FAMILY...]

For each format a small valid file is written (4 synthetic ntu25 clips), then `--variants` damaged copies of
it, seeded: truncation, 1-3 flipped bytes, a block of zeros, 1-16 junk bytes at a random offset, and crafted
files (wrong shapes and dtypes, NaN and huge values, huge declared sizes, missing or wrong attributes,
checksums fixed up; for text formats a token replaced, a line deleted or repeated; for PYSKL pickles,
malicious pickles that would create a marker file if they ran; for C3D (joint centres, through ezc3d) absurd
units, rates, values and labels); for `.h5` also `--junk-2056` copies with
1-16 junk bytes at offset 2056, the global heap holding the library's string attributes. Then `--hostile`
variants of each hostile family of scripts/fuzz_hostile.py (issue 43: self-sharing pickles, shared keypoint
arrays, huge shapes and labels, deep JSON and sidecars, non-finite BVH headers, FIFOs, devices, uint64 labels,
MMPose files of empty frames), which must all be refused with one line. Variants are written into a
temporary folder only.

Each variant goes through `dtmr data info FILE --json` (`dtmr.cli.main`, in a child process that serves
one variant after another), then, when accepted, `load_clips(FILE)`, with `--limit` seconds per variant.
Classes: `error` (exit 2 and one line on stderr), `same` (accepted, the clips read are the original
ones), `other` (accepted, other clips: a crafted file, or a text file whose numbers were changed; for a
hostile family, accepted at all),
`unclear` (another exit, or more than one line), `traceback`, `hang` (the child is killed and replaced).
`--hdf5-deadline` is the library watchdog's deadline in the child (default 30 s in dtmr), shortened so
that the run stays short. Prints a table; exits 1 on any traceback, unclear outcome, hang, damaged (not
crafted) `.h5` bytes read as other clips (silent wrong data), a hostile variant accepted, or a pickle that
ran code.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
from fuzz_hostile import FAMILIES, remove

CLASSES = ("error", "same", "other", "unclear", "traceback", "hang")
FAILURES = ("unclear", "traceback", "hang")
SUFFIX = {"skeleton": ".skeleton", "npz": ".npz", "h5": ".h5", "h5@2056": ".h5", "bvh": ".bvh", "json": ".json",
          "pkl": ".pkl", "sgn": ".npz", "npy": ".npy", "c3d": ".c3d"}
#: a marker file a malicious pickle variant would create if the reader ran its code
MARKER = "PICKLE-RAN-CODE"


# -- the valid files ------------------------------------------------------------------------------------
def base_clips(seed: int):
    """4 ntu25 clips of 8-39 frames: synthetic people (readers that check a body's size accept them)."""
    from dtmr.data.clip import Clip
    from dtmr.data.synthetic import generate_clips

    rng = np.random.default_rng(seed)
    bodies = generate_clips(subjects=4, actions=1, repetitions=1, seed=seed)
    return [
        Clip(joints=np.ascontiguousarray(bodies[i].joints[:int(rng.integers(8, 40))], dtype=np.float32),
             topology="ntu25", subject=i + 1, action=i % 2 + 1, view=i % 3, repetition=1,
             sample_name=f"S001C00{i % 3 + 1}P00{i + 1}R001A00{i % 2 + 1}", extra={"k": str(i)} if i % 2 else {})
        for i in range(4)
    ]


def write_base(fmt: str, folder: Path, seed: int) -> Path:
    from dtmr.io.library import ClipLibrary
    from dtmr.io.npz_dataset import write_npz_dataset
    from dtmr.io.ntu_skeleton import write_skeleton_file

    clips = base_clips(seed)
    path = folder / f"base{SUFFIX[fmt]}"
    if fmt == "skeleton":
        write_skeleton_file(path, clips[0])
    elif fmt == "npz":
        write_npz_dataset(path, clips, action_names=["", "a", "b"])
    elif fmt == "bvh":
        from dtmr.io.bvh_writer import write_bvh

        write_bvh(path, clips[0])
    elif fmt == "json":  # 2-D keypoints: accepted only as `read_coco_json_2d`; opening them is an error
        from dtmr.render.coco_keypoints import write_coco_json

        write_coco_json(path, clips[0])
    elif fmt == "pkl":
        from dtmr.io.pyskl_pickle import pyskl_annotation, write_pyskl_pickle

        annotations = [pyskl_annotation(c.sample_name, c.action - 1, c.joints[None]) for c in clips]
        write_pyskl_pickle(path, annotations, {"all": [c.sample_name for c in clips]})
    elif fmt == "sgn":
        x = np.zeros((len(clips), 40, 150), np.float32)
        for i, c in enumerate(clips):
            x[i, :c.num_frames, :75] = c.joints.reshape(c.num_frames, 75)
        np.savez(path, x_train=x, y_train=np.eye(2, dtype=np.float32)[[c.action - 1 for c in clips]],
                 x_test=x[:1], y_test=np.eye(2, dtype=np.float32)[[0]])
    elif fmt == "npy":
        np.save(path, clips[0].joints)
    elif fmt == "c3d":
        write_c3d(path, c3d_joint_centres(clips[0]))
    else:
        ClipLibrary.create(path, clips, action_names=["", "a", "b"]).close()
    return path


#: C3D joint-centre labels (Plug-in Gait's model outputs) -> the NTU-25 joint they are
C3D_CENTRES = {f"{s}{code}": f"{side}_{part}" for side, s in (("left", "L"), ("right", "R"))
               for code, part in (("HJC", "hip"), ("KJC", "knee"), ("AJC", "ankle"), ("SJC", "shoulder"),
                                  ("EJC", "elbow"), ("WJC", "wrist"))}


def c3d_joint_centres(clip) -> dict[str, np.ndarray]:
    """(T, 3) metres per C3D label: the joint centres of an ntu25 clip, and its head as `HEDO`."""
    from dtmr.skeleton import NTU25

    names = {**C3D_CENTRES, "HEDO": "head"}
    return {label: clip.joints[:, NTU25.joint_names.index(joint)].astype(np.float64) for label, joint in names.items()}


def write_c3d(path: Path, points: dict[str, np.ndarray], units: str = "m", rate: float = 30.0) -> None:
    """A C3D file (through ezc3d) of `points`, y up, in `units` (metres written as they are)."""
    import ezc3d

    labels = list(points)
    frames = len(next(iter(points.values())))
    data = np.ones((4, len(labels), frames))
    for k, label in enumerate(labels):
        data[:3, k] = points[label].T
    c3d = ezc3d.c3d()
    c3d["parameters"]["POINT"]["RATE"]["value"] = [rate]
    c3d["parameters"]["POINT"]["LABELS"]["value"] = tuple(labels)
    c3d["parameters"]["POINT"]["UNITS"]["value"] = [units]
    c3d["data"]["points"] = data
    c3d.write(str(path))


def craft_c3d(base: Path, out: Path, rng: random.Random) -> str:
    """A well-formed C3D file with absurd content: units, rate, values or labels no capture writes."""
    clip = base_clips(0)[0]
    points = c3d_joint_centres(clip)
    kind = rng.choice(["unknown units", "rate nan", "rate 1e9", "nan points", "huge points", "no joint labels",
                       "one frame", "labels repeated"])
    units, rate = "m", 30.0
    if kind == "unknown units":
        units = rng.choice(["furlong", "", "\x00"])
    elif kind.startswith("rate"):
        rate = float("nan") if kind == "rate nan" else 1e9  # ezc3d itself aborts on writing a rate of 0
    elif kind == "nan points":
        points = {k: np.full_like(v, np.nan) for k, v in points.items()}
    elif kind == "huge points":
        points = {k: v * 1e30 for k, v in points.items()}
    elif kind == "no joint labels":
        points = {f"M{i:02d}": v for i, v in enumerate(points.values())}
    elif kind == "one frame":
        points = {k: v[:1] for k, v in points.items()}
    else:
        points = {f"{k[:1]}HJC" if i % 2 else k: v for i, (k, v) in enumerate(points.items())}
    write_c3d(out, points, units, rate)
    return kind


# -- damage -----------------------------------------------------------------------------------------------
def damage_bytes(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    kind = rng.choice(["truncate", "flip", "zeros", "junk"])
    b = bytearray(data)
    if kind == "truncate":
        return kind, bytes(b[:rng.randrange(len(b))])
    if kind == "flip":
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] ^= rng.randint(1, 255)
    elif kind == "zeros":
        at, size = rng.randrange(len(b)), rng.choice([512, rng.randint(16, 4096)])
        b[at:at + size] = bytes(len(b[at:at + size]))
    else:
        at = rng.randrange(len(b))
        b[at:at + 16] = rng.randbytes(rng.randint(1, 16))[:len(b) - at]
    return kind, bytes(b[:len(data)])


TOKENS = ["0", "-1", "25", "x", "nan", "-inf", "1e999", "1e39", "9" * 40, "999999999999", "2.5.1", "\x00", "-"]


def _edit_lines(base: Path, out: Path, rng: random.Random, newline: str, words_of) -> str:
    """A token replaced, a line deleted or repeated, in a text file."""
    lines = base.read_bytes().decode().split(newline)
    i = rng.randrange(len(lines))
    kind = rng.choice(["token", "delete line", "repeat line"])
    if kind == "token":
        words = words_of(lines[i]) or [""]
        words[rng.randrange(len(words))] = rng.choice(TOKENS)
        lines[i] = " ".join(words)
    elif kind == "delete line":
        del lines[i]
    else:
        lines.insert(i, lines[i])
    out.write_bytes(newline.join(lines).encode("utf-8", "surrogateescape"))
    return kind


def craft_skeleton(base: Path, out: Path, rng: random.Random) -> str:
    return _edit_lines(base, out, rng, "\r\n", str.split)


def _npz_edits(arrays: dict, rng: random.Random) -> str:
    flat, offsets = arrays["joints_flat"], arrays["offsets"]
    n = len(offsets) - 1
    edits = {
        "nan joint": lambda: flat.__setitem__((rng.randrange(len(flat)), rng.randrange(25), 0), np.nan),
        "1e300 joints": lambda: arrays.__setitem__("joints_flat", flat.astype(np.float64) * 1e300),
        "2-D joints": lambda: arrays.__setitem__("joints_flat", flat[:, :, 0]),
        "22 joints": lambda: arrays.__setitem__("joints_flat", flat[:, :22]),
        "string joints": lambda: arrays.__setitem__("joints_flat", flat.astype(str)),
        "complex joints": lambda: arrays.__setitem__("joints_flat", flat.astype(np.complex64)),
        "offsets decreasing": lambda: arrays.__setitem__("offsets", offsets[::-1].copy()),
        "offsets float": lambda: arrays.__setitem__("offsets", offsets.astype(float)),
        "offsets huge": lambda: offsets.__setitem__(-1, 2**62),
        "no offsets": lambda: arrays.pop("offsets"),
        "padded T=0": lambda: _padded_without_frames(arrays, n),
        "subject strings": lambda: arrays.__setitem__("subject", np.array([f"s{i}" for i in range(n)])),
        "subject uint64": lambda: arrays.__setitem__("subject", np.full(n, 2**64 - 1, np.uint64)),
        "subject short": lambda: arrays.__setitem__("subject", arrays["subject"][:-1]),
        "fps nan": lambda: arrays.__setitem__("fps", np.float64("nan")),
        "topology unknown": lambda: arrays.__setitem__("topology", np.array("octopus")),
        "object column": lambda: arrays.__setitem__("extra_col", np.array([{}] * n, dtype=object)),
    }
    kind = rng.choice(sorted(edits))
    edits[kind]()
    return kind


def _padded_without_frames(arrays: dict, n: int) -> None:
    for name in ("joints_flat", "offsets", "lengths"):
        del arrays[name]
    arrays["joints"] = np.zeros((n, 0, 25, 3), np.float32)


def craft_npz(base: Path, out: Path, rng: random.Random) -> str:
    if rng.random() < 0.15:  # a member whose header declares a huge array
        header = io.BytesIO()
        shape = (rng.choice([10**9, 2**40, 10**15]), 25, 3)
        np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": shape})
        shutil.copyfile(base, out)
        with zipfile_append(out) as archive:
            archive.writestr("joints_flat.npy", header.getvalue() + bytes(64))
        return "huge declared shape"
    with np.load(base) as archive:
        arrays = {name: archive[name] for name in archive.files}
    kind = _npz_edits(arrays, rng)
    np.savez(out, **arrays)  # an object array is pickled into the archive
    return kind


def zipfile_append(path: Path):
    import warnings
    import zipfile

    warnings.filterwarnings("ignore", message="Duplicate name")  # the later member is the one NumPy reads
    return zipfile.ZipFile(path, "a")


def _fix_crc(ds) -> None:
    values = ds.asstr()[()] if ds.dtype.kind == "O" else ds[()]
    raw = "\0".join(values.tolist()).encode() if ds.dtype.kind == "O" else np.ascontiguousarray(values).tobytes()
    ds.attrs["crc32"] = zlib.crc32(raw)


def _replace(group, name: str, values: np.ndarray, fix: bool = True) -> None:
    import h5py

    del group[name]
    ds = group.create_dataset(name, data=values, dtype=h5py.string_dtype() if values.dtype.kind in "OU" else None)
    if fix:
        _fix_crc(ds)


def craft_h5(base: Path, out: Path, rng: random.Random) -> str:
    import h5py

    shutil.copyfile(base, out)
    with h5py.File(out, "r+") as f:
        clips, n = f["clips"], len(f["offsets"]) - 1
        edits = {
            "no version": lambda: f.attrs.__delitem__("version"),
            "version 0": lambda: f.attrs.__setitem__("version", 0),
            "version text": lambda: f.attrs.__setitem__("version", "1"),
            "no format": lambda: f.attrs.__delitem__("format"),
            "topology unknown": lambda: f.attrs.__setitem__("topology", "octopus"),
            "subject strings": lambda: _replace(clips, "subject", np.array([f"x{i}" for i in range(n)], object)),
            "subject floats": lambda: _replace(clips, "subject", np.arange(n, dtype=float)),
            "subject 2-D": lambda: _replace(clips, "subject", np.zeros((n, 2), np.int64)),
            "subject short": lambda: _replace(clips, "subject", np.arange(n - 1)),
            "fps text": lambda: _replace(clips, "fps", np.array(["30"] * n, object)),
            "no crc": lambda: clips["action"].attrs.__delitem__("crc32"),
            "no column": lambda: clips.__delitem__("view"),
            "no joints": lambda: f.__delitem__("joints_flat"),
            "offsets huge": lambda: f["offsets"].resize((10**12,)),
            "joints huge": lambda: f["joints_flat"].resize((10**8, 25, 3)),
            "nan joint, crc fixed": lambda: _nan_joint(f, rng),
            "external link": lambda: (clips.__delitem__("subject"),
                                      clips.__setitem__("subject", h5py.ExternalLink("/etc/passwd", "/x"))),
            "sample names changed, crc fixed": lambda: (clips["sample_name"].__setitem__(0, "other"),
                                                        _fix_crc(clips["sample_name"])),
        }
        kind = rng.choice(sorted(edits))
        edits[kind]()
    return kind


def _nan_joint(f, rng: random.Random) -> None:
    flat = f["joints_flat"]
    flat[rng.randrange(flat.shape[0]), rng.randrange(25), 0] = np.nan
    offsets = f["offsets"][()]
    crc = f["clips/joints_crc32"]
    crc[...] = [zlib.crc32(np.ascontiguousarray(flat[a:b])) for a, b in zip(offsets[:-1], offsets[1:])]
    _fix_crc(crc)


def craft_text(base: Path, out: Path, rng: random.Random) -> str:
    """BVH and JSON text: commas count as words, so a JSON number can be replaced too."""
    return _edit_lines(base, out, rng, "\n", lambda line: line.replace(",", " , ").split())


class _RunsCode:
    """Pickled, it asks the unpickler to call a function with an argument: what a malicious pickle does."""

    def __init__(self, function, argument):
        self.function, self.argument = function, argument

    def __reduce__(self):
        return self.function, (self.argument,)


def craft_pickle(base: Path, out: Path, rng: random.Random) -> str:
    """A pickle that would run code (create the marker file) if it were loaded with `pickle.load`."""
    import builtins
    import os
    import pickle

    marker = out.parent / MARKER
    function, argument = rng.choice([(os.system, f"touch {marker}"), (builtins.exec, f"open({str(marker)!r}, 'w')"),
                                     (builtins.eval, f"open({str(marker)!r}, 'w')")])
    payload = {"split": {"all": ["x"]}, "annotations": [{"frame_dir": _RunsCode(function, argument)}]}
    out.write_bytes(pickle.dumps(payload, protocol=rng.choice([2, 4, 5])))
    return f"malicious pickle ({function.__name__})"


CRAFT = {"skeleton": craft_skeleton, "npz": craft_npz, "h5": craft_h5, "bvh": craft_text, "json": craft_text,
         "pkl": craft_pickle, "c3d": craft_c3d}
#: formats damaged byte by byte only
BYTES_ONLY = ("sgn", "npy")
DEFAULT_FORMATS = (*CRAFT, *BYTES_ONLY, *FAMILIES)


def make_variant(fmt: str, base: Path, out: Path, rng: random.Random) -> tuple[str, bool]:
    """Write one damaged copy of `base` to `out`: (what was done, whether it was crafted)."""
    if fmt == "h5@2056":
        junk = rng.randbytes(rng.randint(1, 16))
        data = bytearray(base.read_bytes())
        data[2056:2056 + len(junk)] = junk
        out.write_bytes(bytes(data))
        return f"{len(junk)} junk bytes at 2056", False
    if fmt in CRAFT and rng.random() < 1 / 3:
        return CRAFT[fmt](base, out, rng), True
    kind, data = damage_bytes(base.read_bytes(), rng)
    out.write_bytes(data)
    return kind, False


# -- the child: one variant after another ------------------------------------------------------------------
def digest(path: str) -> str:
    from dtmr.io.sources import load_clips

    h = hashlib.sha256()
    for clip in load_clips(path):
        h.update(np.ascontiguousarray(clip.joints, dtype=np.float32).tobytes())
        meta = {k: v for k, v in clip.metadata().items() if k != "source_file"}
        h.update(json.dumps(meta, sort_keys=True, default=str).encode())
    return h.hexdigest()


def classify(path: str, expected: str | None, command: list[str] | None = None) -> tuple[str, str]:
    """`dtmr data info PATH --json` (or `command`, `{path}` replaced), then (when accepted) every clip read:
    (class, detail). Another command that succeeds is `other`."""
    from dtmr.cli import main
    from dtmr.errors import DtmrError

    out, err = io.StringIO(), io.StringIO()
    argv = [path if word == "{path}" else word for word in command or ["data", "info", "{path}", "--json"]]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
            if code == 0 and command is not None:
                return "other", "accepted"
            if code == 0:
                try:
                    return ("same" if digest(path) == expected else "other"), ""
                except DtmrError as exc:  # the joints, read only now, are refused: a clear error too
                    return ("error" if "\n" not in str(exc) else "unclear"), str(exc)
    except BaseException:  # noqa: BLE001 - what the fuzzer is looking for
        return "traceback", traceback.format_exc(limit=-3).strip().splitlines()[-1]
    lines = err.getvalue().strip().splitlines()
    if code == 2 and len(lines) == 1:
        return "error", lines[0]
    return "unclear", f"exit {code}: {' | '.join(lines)[:300]}"


def serve(deadline: float) -> None:
    """Child: read `{"path", "expected"}` lines, answer `{"class", "detail"}` lines."""
    from dtmr.io import hdf5_watchdog

    hdf5_watchdog.DEADLINE_S = deadline
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            outcome = classify(request["path"], request["expected"], request.get("command"))
        except BaseException:  # noqa: BLE001 - e.g. the original's digest failing
            outcome = ("traceback", traceback.format_exc(limit=-3).strip().splitlines()[-1])
        print(json.dumps({"class": outcome[0], "detail": outcome[1]}), flush=True)


class Child:
    def __init__(self, deadline: float):
        self.process = subprocess.Popen([sys.executable, __file__, "--serve", "--hdf5-deadline", str(deadline)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                                        start_new_session=True)  # its own group: stop() ends its children
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        threading.Thread(target=self._forward, daemon=True).start()
        self.lines.get(timeout=300)

    def _forward(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def run(self, path: Path, expected: str | None, limit: float,
            command: list[str] | None = None) -> tuple[str, str] | None:
        """(class, detail), or None when no answer came within `limit` seconds (or the child died)."""
        request = {"path": str(path), "expected": expected, "command": command}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        try:
            line = self.lines.get(timeout=limit)
        except queue.Empty:
            return None
        if line is None:
            return None
        answer = json.loads(line)
        return answer["class"], answer["detail"]

    def stop(self) -> None:
        """Kill the child and what it started (the library watchdog's checking process)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


# -- the run ----------------------------------------------------------------------------------------------
def fuzz(formats: list[str], variants: int, junk_2056: int, seed: int, limit: float, deadline: float,
         folder: Path, hostile: int = 24) -> tuple[dict[str, Counter], list[str]]:
    counts: dict[str, Counter] = {}
    problems: list[str] = []
    child = Child(deadline)
    try:
        for fmt in formats:
            if fmt in FAMILIES:
                child = fuzz_family(fmt, hostile, seed, limit, deadline, folder, child, counts, problems)
                continue
            base = write_base(fmt.split("@")[0], folder, seed)
            expected = None if fmt == "json" else digest(str(base))  # 2-D keypoints: never clips
            rng = random.Random(f"{seed}-{fmt}")
            counts[fmt] = Counter()
            for i in range(junk_2056 if fmt == "h5@2056" else variants):
                path = folder / f"{fmt.replace('@', '_')}-{i:04d}{SUFFIX[fmt]}"
                what, crafted = make_variant(fmt, base, path, rng)
                result = child.run(path, expected, limit)
                if result is None:
                    child.stop()
                    child = Child(deadline)
                    result = ("hang", f"no answer within {limit:g} s")
                kind, detail = result
                counts[fmt][kind] += 1
                counts[fmt]["watchdog"] += kind == "error" and "damaged library (reading" in detail
                wrong_data = kind == "other" and fmt.startswith("h5") and not crafted
                if kind in FAILURES or wrong_data:
                    problems.append(f"{fmt} #{i} ({what}): {'silent wrong data' if wrong_data else kind} {detail}")
                if (folder / MARKER).exists():
                    problems.append(f"{fmt} #{i} ({what}): the file ran code (it created {MARKER})")
                    (folder / MARKER).unlink()
                path.unlink()
    finally:
        child.stop()
    return counts, problems


def fuzz_family(name: str, variants: int, seed: int, limit: float, deadline: float, folder: Path, child: Child,
                counts: dict[str, Counter], problems: list[str]) -> Child:
    """`variants` hostile files of one family (scripts/fuzz_hostile.py), each of which must be refused with
    one line; returns the child (a new one after a hang)."""
    family, clip = FAMILIES[name], base_clips(seed)[0]
    rng = random.Random(f"{seed}-{name}")
    counts[name] = Counter()
    for i in range(variants):
        path, what = family.build(folder, i, rng, clip)
        try:
            result = child.run(path, None, limit, list(family.command))
            if result is None:
                child.stop()
                child = Child(deadline)
                result = ("hang", f"no answer within {limit:g} s")
        finally:
            remove(path)
        kind, detail = result
        counts[name][kind] += 1
        if kind != "error":
            problems.append(f"{name} #{i} ({what}): {'accepted' if kind in ('same', 'other') else kind} {detail}")
    return child


def table(counts: dict[str, Counter]) -> str:
    """Counts per class; `watchdog`: the errors that were the library watchdog's (reading did not finish)."""
    rows = ["| format | variants | " + " | ".join(CLASSES) + " | watchdog |", "|---" * (len(CLASSES) + 3) + "|"]
    for fmt, c in counts.items():
        rows.append(f"| `{fmt}` | {sum(c[k] for k in CLASSES)} | " + " | ".join(str(c[k]) for k in CLASSES)
                    + f" | {c['watchdog']} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variants", type=int, default=240, help="damaged copies per format (default 240)")
    parser.add_argument("--junk-2056", type=int, default=192, help="h5 copies with junk at offset 2056")
    parser.add_argument("--hostile", type=int, default=24, help="variants per hostile family (default 24)")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per variant before it is a hang")
    parser.add_argument("--hdf5-deadline", type=float, default=5.0, help="the library watchdog's deadline")
    parser.add_argument("--formats", default=",".join(DEFAULT_FORMATS),
                        help=f"comma-separated, of: {', '.join(DEFAULT_FORMATS)}")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.hdf5_deadline)
        return 0
    formats = [f for f in args.formats.split(",") if f]
    if unknown := set(formats) - set(DEFAULT_FORMATS):
        parser.error(f"unknown formats {sorted(unknown)}")
    if "h5" in formats and args.junk_2056:
        first_family = next((k for k, f in enumerate(formats) if f in FAMILIES), len(formats))
        formats.insert(first_family, "h5@2056")  # the damaged formats' rows first, then the hostile families
    with tempfile.TemporaryDirectory(prefix="dtmr-fuzz-") as tmp:
        counts, problems = fuzz(formats, args.variants, args.junk_2056, args.seed, args.limit,
                                args.hdf5_deadline, Path(tmp), args.hostile)
    print(table(counts))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
