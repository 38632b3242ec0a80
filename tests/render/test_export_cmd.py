"""`dtmr export`: argument parsing helpers and the command end to end (naive retargeter, untrained recognizers)."""

from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from render_fakes import FakeAnonymizer, swaying_clip

from dtmr.cli import main
from dtmr.cli.export_cmd import CAMERA_PRESETS, frame_range
from dtmr.errors import DtmrError, InputError
from dtmr.io.clip_source import resolve_clip
from dtmr.render.camera import DEFAULT_PRESET, PRESETS


class TableSource:
    path = "clips.npz"

    def __init__(self, names):
        self.names = names

    def __len__(self):
        return len(self.names)

    def metadata_table(self):
        return {"sample_name": np.array(self.names, dtype=object)}


def test_clip_ids_are_indices_or_sample_names():
    source = TableSource(["S001A001", "S002A001", "S003A002"])
    assert resolve_clip(source, "1") == 1
    assert resolve_clip(source, "-1") == 2
    assert resolve_clip(source, "S003A002") == 2
    with pytest.raises(InputError, match="clips.npz: clip index 3 is out of range"):
        resolve_clip(source, "3")
    with pytest.raises(InputError, match="no clip named 'S009'"):
        resolve_clip(source, "S009")


def test_camera_choices_are_the_renderer_presets():
    assert set(CAMERA_PRESETS) == set(PRESETS) and CAMERA_PRESETS[0] == DEFAULT_PRESET


def test_frames_follow_slice_rules():
    assert frame_range(None, 10) == range(10)
    assert frame_range("2:5", 10) == range(2, 5)
    assert frame_range(":3", 10) == range(3)
    assert frame_range("7:", 10) == range(7, 10)
    assert frame_range("-3:", 10) == range(7, 10)
    for bad in ("5", "a:b", "8:2"):
        with pytest.raises(DtmrError, match="--frames"):
            frame_range(bad, 10)


@pytest.fixture
def exported_inputs(tmp_path, monkeypatch):
    from dtmr.io.npz_dataset import write_npz_dataset
    from dtmr.models.baselines import NaiveRetargeter
    from dtmr.models.checkpoints.checkpoint import save_checkpoint

    monkeypatch.setenv("DTMR_RESOURCES", str(tmp_path / "no_resources"))  # no bundled recognizers
    clips = [swaying_clip(frames=6, subject=1), swaying_clip(frames=5, subject=1, action=1),
             swaying_clip(frames=4, subject=2, scale=0.8)]
    source = tmp_path / "clips.npz"
    write_npz_dataset(source, clips, action_names=["sway", "wave"])
    model = save_checkpoint(tmp_path / "naive.pt", NaiveRetargeter("ntu25"), data={}, metrics={})
    return source, model


def test_export_writes_the_comparison(tmp_path, exported_inputs, capsys):
    source, model = exported_inputs
    out = tmp_path / "out" / "cmp.gif"
    code = main(["export", str(source), "--model", str(model), "-o", str(out), "--size", "150x50",
                 "--frames", "1:5", "--fps", "12"])
    assert code == 0
    frames = iio.imread(out, index=None)
    assert frames.shape[:3] == (4, 50, 150)
    assert "wrote" in capsys.readouterr().out


def test_export_shows_recognizer_predictions(tmp_path, exported_inputs, monkeypatch):
    import dtmr.render
    from dtmr.models.recognizers import Recognizer

    source, model = exported_inputs
    folder = tmp_path / "recognizers"
    folder.mkdir()
    Recognizer.create("action", [0, 1], ["sway", "wave"]).save(folder / "action.pt")
    Recognizer.create("subject", [1, 2]).save(folder / "subject.pt")
    exported = {}
    monkeypatch.setattr(dtmr.render, "export_video", lambda path, panels, **kw: exported.update(panels=panels, **kw))
    assert main(["export", str(source), "--model", str(model), "--clip", "s1a1", "--reference", f"{source}::2",
                 "--recognizers", str(folder), "-o", str(tmp_path / "x.mp4"), "--frames", "2:"]) == 0
    panels = exported["panels"]
    assert [p.title for p in panels] == [
        "source · subject 1 · wave", "retargeted (β = 1) · body of subject 2", "released (β = 1) · naive"]
    for panel in panels:
        assert panel.num_frames == 5
        assert [line.split(":")[0] for line in panel.predictions[4]] == ["action", "identity"]
    assert exported["frames"] == range(2, 5)
    assert exported["fps"] == 30.0


def test_export_errors_are_one_line_naming_the_file(tmp_path, exported_inputs, capsys):
    source, model = exported_inputs
    assert main(["export", str(source), "--model", str(model), "-o", str(tmp_path / "x.avi")]) == 2
    assert "x.avi: unsupported video format '.avi'" in capsys.readouterr().err
    assert main(["export", str(source), "--model", str(model), "--clip", "nope", "-o", str(tmp_path / "x.gif")]) == 2
    assert "clips.npz: no clip named 'nope'" in capsys.readouterr().err
    assert main(["export", str(source), "--model", str(model), "--clip", "2", "--recognizers", str(tmp_path),
                 "-o", str(tmp_path / "x.gif")]) == 2
    assert "holds neither action.pt nor subject.pt" in capsys.readouterr().err
    assert not list(tmp_path.glob("x.*"))
    with pytest.raises(SystemExit):
        main(["export", str(source), "--model", str(model), "-o", str(tmp_path / "x.gif"), "--size", "big"])


def header_only_checkpoint(path, beta, topology="ntu25"):
    """A DisentangledTMR checkpoint's metadata with one weight: enough for the pairing, which reads headers."""
    import torch

    torch.save({"format": "dtmr-checkpoint", "version": 1, "method": "dtmr", "config": {"preset_name": "small"},
                "topology": topology, "beta": beta, "data": {}, "metrics": {}, "state_dict": {"w": torch.zeros(1)}},
               path)
    return path


@pytest.fixture
def paired_export(tmp_path, exported_inputs, monkeypatch):
    """`dtmr export` with header-only checkpoints: each "model" is a FakeAnonymizer of the file's β, and the
    loaded files and the exported panels are recorded."""
    import dtmr.render
    from dtmr.models.anonymizer import Anonymizer
    from dtmr.models.checkpoints.checkpoint import read_checkpoint_header

    resources = tmp_path / "resources"
    (resources / "models").mkdir(parents=True)
    monkeypatch.setenv("DTMR_RESOURCES", str(resources))  # bundled models: an empty folder unless a test adds one
    loaded, exported = [], {}

    def load(path, device=None):
        loaded.append(Path(path).name)
        return FakeAnonymizer(beta=read_checkpoint_header(path).beta)

    monkeypatch.setattr(Anonymizer, "from_checkpoint", staticmethod(load))
    monkeypatch.setattr(dtmr.render, "export_video", lambda path, panels, **kw: exported.update(panels=panels))
    runs = tmp_path / "runs"
    runs.mkdir()
    model = header_only_checkpoint(runs / "b02.pt", 0.2)

    def export(*extra):
        loaded.clear()
        code = main(["export", str(exported_inputs[0]), "--model", str(model), "--reference",
                     f"{exported_inputs[0]}::2", "-o", str(tmp_path / "x.gif"), *map(str, extra)])
        titles = [p.title for p in exported.get("panels", [])]
        return code, loaded[:], titles[1:2]

    return export, model, resources / "models"


def test_export_takes_the_retargeted_panel_from_the_beta_one_partner(tmp_path, paired_export, capsys):
    export, model, bundled = paired_export
    assert export() == (0, ["b02.pt"], ["retargeted (decoder of the β = 0.2 model) · body of subject 2"])
    assert "retargeted panel: the decoder of" in capsys.readouterr().out
    header_only_checkpoint(bundled / "dtmr_b1.pt", 1.0)
    assert export() == (0, ["b02.pt", "dtmr_b1.pt"], ["retargeted (β = 1) · body of subject 2"])
    assert f"retargeted panel: {bundled / 'dtmr_b1.pt'} (the beta = 1 model of {model})" in capsys.readouterr().out
    header_only_checkpoint(model.parent / "b1.pt", 1.0)
    assert export()[1] == ["b02.pt", "b1.pt"]  # next to the model comes first
    explicit = header_only_checkpoint(tmp_path / "mine_b1.pt", 1.0)
    assert export("--full-model", explicit)[1] == ["b02.pt", "mine_b1.pt"]
    assert f"retargeted panel: {explicit}" in capsys.readouterr().out


def test_full_model_must_be_a_beta_one_model_of_the_same_topology(tmp_path, paired_export, capsys):
    export, _, _ = paired_export
    for path, message in ((header_only_checkpoint(tmp_path / "b05.pt", 0.5), "must be a beta = 1 retargeter"),
                          (header_only_checkpoint(tmp_path / "k1.pt", 1.0, topology="kinect_v1_20"),
                           "has topology kinect_v1_20, the model ntu25"),
                          (tmp_path / "gone.pt", "no such checkpoint file")):
        assert export("--full-model", path)[0] == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dtmr: error: {path}: ") and message in err and err.count("\n") == 1
