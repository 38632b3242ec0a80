"""Issue 43: a FIFO, a socket or a device given as a clip file, or inside a folder of clips, or as an output, is
refused with one line naming it before it is opened (opening a FIFO blocks until a writer comes; /dev/zero
never ends). Each case runs under the suite's per-test timeout, so a hang fails it."""

from __future__ import annotations

import os
import socket

import pytest

from dtmr.cli import main
from dtmr.errors import InputError
from dtmr.io.outputs import check_output
from dtmr.io.sources import open_clip_source

SUFFIXES = (".json", ".bvh", ".npy", ".npz", ".pkl", ".pickle", ".skeleton", ".h5")


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_fifo_named_as_a_clip_file_is_refused_before_it_is_opened(tmp_path, suffix, capsys):
    fifo = tmp_path / f"clips{suffix}"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="named pipe"):
        open_clip_source(fifo)
    assert main(["data", "info", str(fifo)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(fifo) in err and "named pipe" in err


def test_a_fifo_inside_a_folder_of_skeleton_files_is_not_opened(tmp_path):
    os.mkfifo(tmp_path / "S001C001P001R001A001.skeleton")  # only regular files are a folder's clips
    with pytest.raises(InputError, match="no .skeleton files in this folder"):
        open_clip_source(tmp_path)


def test_a_device_and_a_socket_are_refused(tmp_path):
    device = tmp_path / "zeros.skeleton"
    device.symlink_to("/dev/zero")
    with pytest.raises(InputError, match="a device"):
        open_clip_source(device)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "s.json"))
        with pytest.raises(InputError, match="a socket"):
            open_clip_source(tmp_path / "s.json")
    finally:
        server.close()


def test_a_fifo_as_an_output_is_refused(tmp_path):
    fifo = tmp_path / "out.h5"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="named pipe"):
        check_output(fifo, kind="clip-library", overwrite=True)


def test_a_huge_sparse_skeleton_file_is_refused_before_it_is_read(tmp_path):
    from dtmr.io.ntu_skeleton import MAX_SKELETON_BYTES

    huge = tmp_path / "S001C001P001R001A001.skeleton"
    with open(huge, "wb") as fh:
        fh.truncate(MAX_SKELETON_BYTES + 1)  # sparse: nothing is written to disk
    with pytest.raises(InputError, match="over the 268435456-byte limit for a .skeleton file"):
        open_clip_source(huge)
