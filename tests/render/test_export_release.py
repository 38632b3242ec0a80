"""`dtmr export` of a release: the released clip alone, or after its source through the key; the video never
names the performer or the source clip."""

import imageio.v3 as iio
import pytest

from dtmr.cli import main
from dtmr.io.library import ClipLibrary
from dtmr.release.key import key_path_for
from dtmr.release.release import open_release
from dtmr.render.comparison import release_panels
from render_fakes import swaying_clip


@pytest.fixture
def release(tmp_path, monkeypatch):
    monkeypatch.setenv("DTMR_RESOURCES", str(tmp_path / "no_resources"))  # no bundled recognizers
    clips = [swaying_clip(frames=6, subject=1).replace(sample_name="S001C001P001R001A001"),
             swaying_clip(frames=5, subject=2, action=1, scale=0.8).replace(sample_name="S001C001P002R001A002")]
    raw = tmp_path / "raw.h5"
    ClipLibrary.create(raw, clips, action_names=["sway", "wave"]).close()
    out = tmp_path / "released.h5"
    assert main(["anonymize", str(raw), "--method", "raw", "-o", str(out)]) == 0
    return raw, out


def test_release_panels_name_the_release_id_and_action_only(release):
    raw, out = release
    library, key = open_release(out)
    with library, ClipLibrary(raw) as source:
        released = library.read(0)
        original = source.read(key.entries[0].source_index)
    alone = release_panels(released, action_names={0: "sway", 1: "wave"})
    paired = release_panels(released, original, action_names={0: "sway", 1: "wave"})
    assert [p.title for p in alone] == [f"released {released.name} · {'sway' if released.action == 0 else 'wave'}"]
    assert len(paired) == 2 and paired[0].title.startswith("source")
    for panel in paired:
        assert "subject" not in panel.title and "P00" not in panel.title and "S001" not in panel.title


def test_export_of_a_release_with_and_without_its_key(release, tmp_path, capsys):
    raw, out = release
    alone, paired = tmp_path / "alone.gif", tmp_path / "paired.gif"
    assert main(["export", str(out), "--clip", "R000001", "-o", str(alone), "--size", "120x60"]) == 0
    assert main(["export", str(out), "--clip", "R000001", "--key", str(key_path_for(out)), "--raw", str(raw),
                 "-o", str(paired), "--size", "120x60"]) == 0
    assert iio.imread(alone, index=None).shape[1:3] == (60, 120)
    assert iio.imread(paired, index=None).shape[1:3] == (60, 120)
    capsys.readouterr()
    assert main(["export", str(out), "--model", "x.pt", "-o", str(tmp_path / "m.gif")]) == 2
    assert "is a release" in capsys.readouterr().err
    assert main(["export", str(out), "--key", str(key_path_for(out)), "-o", str(tmp_path / "k.gif")]) == 2
    assert "--key and --raw go together" in capsys.readouterr().err
    assert main(["export", str(raw), "-o", str(tmp_path / "r.gif")]) == 2
    assert "--model is needed" in capsys.readouterr().err
