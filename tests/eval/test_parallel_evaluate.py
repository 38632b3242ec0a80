"""`dtmr evaluate --workers 2` writes the results.json of a one-process run, and a failing cell is a one-line
error naming it."""

from __future__ import annotations

import json

import pytest
import torch

from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.errors import DtmrError
from dtmr.eval.cells import cells
from dtmr.eval.methods import EvalMethod
from dtmr.eval.protocol import EvalSettings
from dtmr.io.library import ClipLibrary
from dtmr.parallel import run_cells


@pytest.fixture
def one_thread():
    """The one-process run with the workers' thread count: float sums must be taken in the same order."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _evaluate(library, out, *extra):
    return main(["evaluate", "--data", str(library), "--split", "synthetic", "--baselines", "raw,noise,naive",
                 "--seeds", "2", "--out", str(out), "--recognizer-epochs", "2", "--retrain-epochs", "1",
                 "--retrain-per-seed", "--device", "cpu", *extra])


def test_two_workers_write_the_results_of_one_process(tmp_path, one_thread):
    library = tmp_path / "synthetic.h5"
    ClipLibrary.create(library, generate_clips(subjects=3, actions=2, repetitions=2, seed=7))
    assert _evaluate(library, tmp_path / "one") == 0
    # evaluators from the first run: the workers load them, as every worker does in a run that trains them
    assert _evaluate(library, tmp_path / "two", "--workers", "2",
                     "--recognizers", str(tmp_path / "one" / "recognizers")) == 0
    one = json.loads((tmp_path / "one" / "results.json").read_text())
    two = json.loads((tmp_path / "two" / "results.json").read_text())
    assert [r["method"] for r in two] == ["raw", "noise", "naive"] and len(two[0]["seeds"]) == 2
    assert two == one
    run = json.loads((tmp_path / "two" / "run.json").read_text())
    assert "--workers 2 --threads-per-worker 1" in run["command"]


def test_cells_are_a_method_and_the_seeds_sharing_its_retrained_models():
    methods = [EvalMethod("raw"), EvalMethod("naive")]
    assert cells(methods, EvalSettings(seeds=2)) == [(0, (0, 1)), (1, (0, 1))]
    per_seed = [(0, (0,)), (0, (1,)), (1, (0,)), (1, (1,))]
    assert cells(methods, EvalSettings(seeds=2, retrain_per_seed=True)) == per_seed
    assert cells(methods, EvalSettings(seeds=2, retrain=False)) == per_seed


def _context(value, device):
    return value


def _cell(context, key, log):
    """Cell 2 fails; cell 3 kills its worker outright."""
    log(f"cell {key} of {context}")
    if key == 2:
        raise ValueError("this cell cannot be computed")
    if key == 3:
        import os

        os._exit(7)
    return key * context


def test_a_failing_cell_or_a_dying_worker_is_one_line_naming_the_cell():
    lines: list[str] = []
    done = run_cells([0, 1], _cell, _context, (10,), workers=2, devices=["cpu", "cpu"],
                     describe=lambda k: f"cell {k}", log=lines.append)
    assert done == {0: 0, 1: 10} and "  cell 1 of 10" in lines
    with pytest.raises(DtmrError, match=r"^cell 2: ValueError: this cell cannot be computed$"):
        run_cells([2], _cell, _context, (10,), workers=1, devices=["cpu"], describe=lambda k: f"cell {k}")
    with pytest.raises(DtmrError, match=r"^cell 3: its worker process died \(exit code 7\)$"):
        run_cells([3], _cell, _context, (10,), workers=1, devices=["cpu"], describe=lambda k: f"cell {k}")
