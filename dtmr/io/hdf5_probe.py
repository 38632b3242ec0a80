"""The child side of `hdf5_watchdog`: read every part of an HDF5 file that a reader could touch.

The watchdog runs this file as a script (as `-m dtmr.io.hdf5_probe` in a frozen build). It prints
"ready", then for each request line (JSON `{"path": ..., "deadline": seconds}`) reads the file and prints
"done". Whether the file is valid does not matter here (the readers report that themselves, with their own
messages); only that reading it *finishes*: some damage makes libhdf5 loop forever inside C, where nothing
in the reading process can stop it. The parent kills this process when "done" does not come in time. It
imports only h5py and NumPy.

What it reads: every attribute of every object reachable by hard links (the readers never follow other
links), each dataset's creation properties and its whole chunk index, and the data of every dataset whose
storage covers its extent when the data uses the global heap (variable-length strings, where the known
hangs are) or is at most `READ_WHOLE_BYTES`. Larger numeric datasets (a big library's `joints_flat`) are
not decompressed: their chunks are found through the index walked here, and decompressing a chunk of at most
16 MiB is bounded work.
"""

from __future__ import annotations

import json
import math
import signal
import sys

import h5py

#: numeric datasets up to this size are read whole (a library's offsets, columns, small joint arrays)
READ_WHOLE_BYTES = 4 << 20
#: rows are read in blocks of about this many bytes, so a long column never needs one big buffer
_BLOCK_BYTES = 4 << 20
#: chunks larger than this are refused by the library reader, so they are not decompressed here either
_MAX_CHUNK_BYTES = 1 << 24
#: seconds past the parent's deadline after which this process ends itself (SIGALRM's default action),
#: so a hang outlives neither the parent's deadline nor a parent that died meanwhile
_GRACE_S = 10


def probe(path: str) -> None:
    """Read `path` as described in the module docstring; raises whatever h5py raises on a bad file."""
    with h5py.File(path, "r") as h5:
        _attributes(h5)
        h5.visititems(_visit)


def _visit(_name: str, obj: h5py.HLObject) -> None:
    _attributes(obj)
    if isinstance(obj, h5py.Dataset):
        _dataset(obj)


def _attributes(obj: h5py.HLObject) -> None:
    for name in obj.attrs:
        obj.attrs[name]  # reading the value is the point: variable-length values live in the global heap


def _dataset(ds: h5py.Dataset) -> None:
    plist = ds.id.get_create_plist()
    if ds.shape is None or ds.is_virtual or plist.get_external_count():
        return  # no data (a null dataspace), or data the library reader refuses before reading it
    itemsize = ds.id.get_type().get_size()
    layout = plist.get_layout()
    if layout == h5py.h5d.CHUNKED:
        if math.prod(ds.chunks) * itemsize > _MAX_CHUNK_BYTES:
            return
        needed = math.prod(-(-n // c) for n, c in zip(ds.shape, ds.chunks))
        if not needed or ds.id.get_num_chunks() < needed:  # walks the whole chunk index
            return
    elif layout == h5py.h5d.CONTIGUOUS and ds.id.get_storage_size() < ds.size * itemsize:
        return
    if ds.dtype.kind == "O" or ds.dtype.hasobject or ds.size * itemsize <= READ_WHOLE_BYTES:
        _read_in_blocks(ds, itemsize)


def _read_in_blocks(ds: h5py.Dataset, itemsize: int) -> None:
    if ds.ndim == 0:
        ds[()]
        return
    row_bytes = max(1, math.prod(ds.shape[1:]) * itemsize)
    step = max(1, _BLOCK_BYTES // row_bytes)
    for start in range(0, ds.shape[0], step):
        ds[start:start + step]


def main() -> None:
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if hasattr(signal, "alarm"):
            signal.alarm(math.ceil(request["deadline"]) + _GRACE_S)
        try:
            probe(request["path"])
        except Exception:  # noqa: BLE001 - a failed read is an answer too; the reader reports the error itself
            pass
        if hasattr(signal, "alarm"):
            signal.alarm(0)
        print("done", flush=True)


if __name__ == "__main__":
    main()
