"""Saved evaluators that do not fit the data are one DtmrError naming the file and saying what differs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dtmr.cli import main
from dtmr.errors import DtmrError
from dtmr.eval.protocol import ensure_evaluators
from dtmr.resources import resource_path


def data_like(subjects, actions=range(1, 13), topology="ntu25"):
    return SimpleNamespace(action_labels=list(actions), subject_labels=list(subjects), topology=topology,
                           path="demo.h5", split="synthetic")


@pytest.fixture(scope="module")
def models():
    return resource_path("models")


def test_fewer_subjects_than_the_recognizer_knows(models):
    with pytest.raises(DtmrError) as caught:
        ensure_evaluators(data_like(range(1, 11)), models, 1, lambda _: None)
    message = str(caught.value)
    assert message.startswith(f"{models / 'subject.pt'}: this subject recognizer does not match demo.h5")
    assert "it knows 40 subjects, the data has 10" in message and "\n" not in message


def test_unknown_subjects_and_another_skeleton_are_named(models):
    with pytest.raises(DtmrError, match="the data's 41, 42 unknown to it"):
        ensure_evaluators(data_like([*range(1, 41), 41, 42]), models, 1, lambda _: None)
    with pytest.raises(DtmrError, match="action.pt: .*it reads ntu25 skeletons, the data is kinect_v1_20"):
        ensure_evaluators(data_like(range(1, 41), topology="kinect_v1_20"), models, 1, lambda _: None)


@pytest.mark.slow
def test_the_cli_prints_one_line_and_exits_2(models, tmp_path, capsys):
    demo = resource_path("demo") / "demo_library.h5"
    code = main(["evaluate", "--data", str(demo), "--split", "synthetic", "--recognizers", str(models),
                 "--baselines", "raw", "--seeds", "1", "--no-retrain", "--out", str(tmp_path / "X")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("dtmr: error: ") and "does not match" in err[-1]
    assert "Traceback" not in "\n".join(err)
