"""The Qt-free playback clock: wall-time frames, speed, loop modes, every-frame mode, stepping."""

import pytest

from app.state.playback import LoopMode, PlaybackClock, fold, format_speed


class FakeTime:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.fixture
def clock():
    now = FakeTime()
    c = PlaybackClock(now=now)
    c.set_length(10, fps=10.0)
    c.now = now
    return c


def test_frames_follow_wall_time_times_speed(clock):
    seen = []
    clock.frame_changed.connect(seen.append)
    clock.play()
    clock.now.t += 0.35  # 3.5 frames at 10 fps
    clock.tick()
    assert clock.frame == 3
    clock.set_speed(2.0)
    clock.now.t += 0.2  # 4 more frames at 2x
    clock.tick()
    assert clock.frame == 7
    assert seen == [3, 7]  # a slow UI skips frames instead of drifting


def test_ui_load_does_not_change_timing(clock):
    clock.play()
    for _ in range(7):  # many ticks or one: the same frame at the same time
        clock.now.t += 0.05
        clock.tick()
    assert clock.frame == 3


def test_loop_modes_fold_the_position():
    assert [fold(p, 4, LoopMode.LOOP) for p in range(9)] == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    assert [fold(p, 4, LoopMode.BOUNCE) for p in range(9)] == [0, 1, 2, 3, 2, 1, 0, 1, 2]
    assert [fold(p, 4, LoopMode.ONCE) for p in range(6)] == [0, 1, 2, 3, 3, 3]
    assert fold(5, 1, LoopMode.BOUNCE) == 0


def test_once_stops_on_the_last_frame_and_replays_from_start(clock):
    clock.set_loop_mode(LoopMode.ONCE)
    states = []
    clock.playing_changed.connect(states.append)
    clock.play()
    clock.now.t += 5.0
    clock.tick()
    assert clock.frame == 9 and not clock.playing
    clock.play()
    assert clock.frame == 0 and clock.playing
    assert states == [True, False, True]


def test_bounce_plays_back(clock):
    clock.set_loop_mode(LoopMode.BOUNCE)
    clock.play()
    clock.now.t += 1.2  # position 12 -> 18 - 12 = 6
    clock.tick()
    assert clock.frame == 6


def test_play_every_frame_never_skips(clock):
    clock.set_play_every_frame(True)
    clock.play()
    clock.now.t += 0.5  # 5 frames due, but each tick shows the next frame only
    clock.tick()
    assert clock.frame == 1
    clock.tick()  # no time passed since the last frame: not due
    assert clock.frame == 1
    clock.now.t += 0.1
    clock.tick()
    assert clock.frame == 2


def test_step_seek_home_end_clamp_and_pause(clock):
    clock.play()
    clock.step(1)
    assert not clock.playing and clock.frame == 1
    clock.step(10)
    assert clock.frame == 9
    clock.step(-3)
    assert clock.frame == 6
    clock.home()
    assert clock.frame == 0
    clock.end()
    assert clock.frame == 9
    clock.seek(-5)
    assert clock.frame == 0


def test_speed_steps_clamp_and_format(clock):
    clock.set_speed(1.0)
    clock.faster()
    assert clock.speed == 1.25
    clock.set_speed(100)
    assert clock.speed == 8.0
    clock.faster()
    assert clock.speed == 8.0
    clock.set_speed(0.1)
    clock.slower()
    assert clock.speed == 0.1
    assert format_speed(1.5) == "1.5×" and format_speed(1.0) == "1×"


def test_new_length_keeps_frame_when_it_fits(clock):
    clock.seek(8)
    lengths = []
    clock.length_changed.connect(lengths.append)
    clock.set_length(5, fps=25)
    assert clock.frame == 4 and lengths == [5] and clock.fps == 25
