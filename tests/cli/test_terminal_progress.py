"""The one progress line of every `dtmr` command (`dtmr.terminal`), and a closed stdout pipe ending quietly."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dtmr.cli import EXIT_BROKEN_PIPE
from dtmr.terminal import Progress, TerminalLine, bar

REPO = Path(__file__).resolve().parents[2]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_bar_fills_in_proportion():
    assert bar(3, 10) == "[######..............] 3/10"
    assert bar(0, 0) == "[....................] 0/0"
    assert bar(12, 10, cells=4) == "[####] 12/10"


def test_counter_redraws_in_place_at_most_every_fifth_of_a_second_and_always_the_last_step():
    term, clock = Terminal(), Clock()
    with Progress("importing into lib.h5", stream=term, clock=clock) as progress:
        progress.line._columns = 61
        for done in range(1, 5):
            progress(done, 4)
            clock.now += 0.1
    draws = term.getvalue().split("\r")[1:]
    assert draws[0] == "importing into lib.h5 | [#####...............] 1/4".ljust(60)
    assert [d.strip()[-3:] for d in draws[:-2]] == ["1/4", "3/4", "4/4"]  # 2/4 came too soon after 1/4
    assert draws[-2:] == [" " * 60, ""]  # erased when the work ends


def test_a_long_label_loses_its_beginning_and_nothing_wraps():
    progress = Progress("reading /a/very/long/folder/name/library.h5", stream=Terminal())
    text = progress.text(1, 2, width=50)
    assert len(text) == 50 and text.startswith("...") and text.endswith("library.h5 | [##########..........] 1/2")
    assert progress.text(1, 2, width=20) == bar(1, 2)


def test_counter_is_quiet_off_a_terminal_and_for_a_single_step():
    log = io.StringIO()
    with Progress("rendering", stream=log) as progress:
        progress(1, 2)
    single = Terminal()
    with Progress("rendering", stream=single) as progress:
        progress(1, 1)
    assert log.getvalue() == "" and single.getvalue() == ""


def test_a_line_written_under_a_redrawn_line_blanks_it_first():
    term = Terminal()
    line = TerminalLine(term, width=11)
    line.redraw("a much longer text than ten")
    line.write_line("done")
    line.clear()  # nothing is shown any more: writes nothing
    assert term.getvalue() == "\ra much lon\r" + " " * 10 + "\rdone\n"
    log = io.StringIO()
    plain = TerminalLine(log, width=11)
    plain.redraw("dropped")
    plain.write_line("kept")
    assert log.getvalue() == "kept\n"


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("args", [["--help"], ["data", "info", "resources/demo/demo_library.h5", "--json"]])
def test_a_closed_stdout_pipe_ends_the_command_quietly(args, unbuffered):
    """As in `dtmr data info X --json | head -c 10`, with the reader gone before anything is written."""
    if args[0] == "data" and not (REPO / args[2]).is_file():
        pytest.skip("the demo library is not built")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    child = subprocess.Popen([sys.executable, "-m", "dtmr", *args], cwd=REPO, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()
    err = child.stderr.read()
    code = child.wait(timeout=120)
    assert err == b""
    # argparse itself swallows a failed write of --help when stdout is unbuffered, and exits 0
    assert code == (0 if unbuffered and args == ["--help"] else EXIT_BROKEN_PIPE)
