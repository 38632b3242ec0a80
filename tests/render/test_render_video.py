import imageio.v3 as iio
import numpy as np
import pytest

from dtmr.errors import InputError
from dtmr.render import ComparisonRenderer, ExportCancelled, Panel, export_video
from render_fakes import swaying_clip


@pytest.fixture
def panels():
    return [Panel.from_clip(swaying_clip(frames=6), "source"), Panel.from_clip(swaying_clip(frames=4, scale=0.9), "released")]


def read_mp4(path):
    return np.stack(list(iio.imiter(path, plugin="FFMPEG")))


def test_mp4_has_the_frames_and_even_size(tmp_path, panels):
    out = export_video(tmp_path / "cmp.mp4", panels, frames=range(1, 6), fps=15, size=(161, 91))
    video = read_mp4(out)
    assert video.shape == (5, 92, 162, 3)  # odd dimensions rounded up for yuv420p
    expected = ComparisonRenderer(panels, size=(162, 92)).render(3)
    assert np.abs(video[2].astype(int) - expected).mean() < 4  # lossy, but the same picture
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cmp.mp4"]


def test_gif_has_the_frames_size_and_a_faithful_palette(tmp_path, panels):
    calls = []
    out = export_video(tmp_path / "cmp.gif", panels, size=(120, 60), fps=10, progress=lambda d, t: calls.append((d, t)))
    frames = iio.imread(out, index=None)
    assert frames.shape[:3] == (6, 60, 120)
    expected = ComparisonRenderer(panels, size=(120, 60)).render(5)
    assert np.abs(frames[5][..., :3].astype(int) - expected).mean() < 2
    assert calls == [(i, 12) for i in range(1, 13)]  # two passes over 6 frames


def test_cancel_leaves_no_file_and_keeps_an_existing_one(tmp_path, panels):
    for name in ("new.mp4", "new.gif"):
        seen = []
        with pytest.raises(ExportCancelled):
            export_video(tmp_path / name, panels, size=(96, 48), progress=lambda d, t: seen.append(d),
                         cancel=lambda: len(seen) >= 2)
        assert seen == [1, 2]
    assert list(tmp_path.iterdir()) == []
    old = tmp_path / "old.gif"
    old.write_bytes(b"previous export")
    with pytest.raises(ExportCancelled):
        export_video(old, panels, size=(96, 48), cancel=lambda: True)
    assert old.read_bytes() == b"previous export"
    assert list(tmp_path.iterdir()) == [old]


def test_bad_requests_are_refused_before_writing(tmp_path, panels):
    with pytest.raises(InputError, match="out.avi"):
        export_video(tmp_path / "out.avi", panels)
    with pytest.raises(ValueError, match="outside"):
        export_video(tmp_path / "out.mp4", panels, frames=[0, 6], size=(96, 48))
    with pytest.raises(ValueError, match="no frames"):
        export_video(tmp_path / "out.mp4", panels, frames=[], size=(96, 48))
    assert list(tmp_path.iterdir()) == []


def test_ffmpeg_failure_is_reported_with_its_reason(tmp_path):
    from dtmr.render.ffmpeg import FfmpegError, FfmpegPipe

    pipe = FfmpegPipe(tmp_path / "x.mp4", (16, 16), 10, ["-c:v", "no_such_encoder"])
    with pytest.raises(FfmpegError, match="ffmpeg failed: .*[Ee]ncoder"):
        for _ in range(50):
            pipe.write(bytes(16 * 16 * 3))
        pipe.close()


def gif_delays_ms(path):
    from PIL import Image

    with Image.open(path) as image:
        delays = []
        for index in range(image.n_frames):
            image.seek(index)
            delays.append(image.info["duration"])
    return delays


@pytest.mark.parametrize("fps, allowed", [(30, {30, 40}), (24, {40, 50}), (25, {40}), (50, {20})])
def test_gif_frame_delays_add_up_to_the_clip_duration(tmp_path, fps, allowed):
    """GIF delays are whole centiseconds: they alternate so that the GIF lasts as long as the clip."""
    panels = [Panel.from_clip(swaying_clip(frames=30), "source")]
    out = export_video(tmp_path / "cmp.gif", panels, size=(64, 48), fps=fps)
    delays = gif_delays_ms(out)
    assert len(delays) == 30 and set(delays) <= allowed
    assert abs(sum(delays) - 30 / fps * 1000) <= 10  # to the nearest centisecond
    for count in (3, 6, 9):  # no drift along the way either
        assert abs(sum(delays[:count]) - count / fps * 1000) <= 10


def test_gif_faster_than_players_show_is_refused_before_writing(tmp_path, panels):
    with pytest.raises(InputError, match="fast.gif.*at most 50"):
        export_video(tmp_path / "fast.gif", panels, size=(64, 48), fps=60)
    assert list(tmp_path.iterdir()) == []
    export_video(tmp_path / "fast.mp4", panels, size=(64, 48), fps=60)  # MP4 has no such limit
