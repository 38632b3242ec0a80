"""Progress events: JSON lines round trip, tolerant readers, writer, ETA, and the terminal renderer."""

from __future__ import annotations

import io
import json
import math

import pytest

from dtmr.train.progress import (
    EtaEstimator,
    EventStreamParser,
    EventWriter,
    ProgressBar,
    ProgressEvent,
    format_duration,
    format_event,
    parse_event_line,
    read_events,
)


def sample_events() -> list[ProgressEvent]:
    return [
        ProgressEvent("start", message="training small on synthetic", time=100.0),
        ProgressEvent("stage", stage=1, epochs=4, message="disentangle", time=100.5),
        ProgressEvent("step", stage=1, epoch=1, epochs=4, step=3, steps=10,
                      losses={"total": 2.5, "action_ce": 1.25}, samples_per_s=120.5, eta_s=33.0, time=101.0),
        ProgressEvent("epoch", stage=1, epoch=1, epochs=4, losses={"total": 2.0}, time=102.0),
        ProgressEvent("checkpoint", stage=1, epoch=1, message="runs/a/last.pt", time=102.5),
        ProgressEvent("done", message="finished", time=110.0),
    ]


def test_round_trip_through_json_lines():
    events = sample_events()
    lines = [e.to_json() for e in events]
    assert all("\n" not in line for line in lines)
    assert [parse_event_line(line) for line in lines] == events
    assert json.loads(lines[2])["losses"] == {"total": 2.5, "action_ce": 1.25}


def test_non_finite_losses_become_null_and_read_back_as_nan():
    event = ProgressEvent("step", losses={"total": float("nan"), "mse": float("inf")}, eta_s=float("inf"))
    line = event.to_json()
    record = json.loads(line, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert record["losses"] == {"total": None, "mse": None} and record["eta_s"] is None
    back = parse_event_line(line)
    assert math.isnan(back.losses["total"]) and math.isnan(back.losses["mse"]) and back.eta_s is None


def test_unknown_kind_is_rejected_and_unknown_fields_ignored():
    with pytest.raises(ValueError, match="kind"):
        ProgressEvent("finished")
    assert parse_event_line('{"kind": "finished"}') is None
    event = parse_event_line('{"kind": "done", "gpu": "H200", "time": 5}')
    assert event == ProgressEvent("done", time=5.0)


def test_read_events_skips_foreign_and_partial_lines():
    events = sample_events()
    text = "".join(e.to_json() + "\n" for e in events[:3])
    text += "Warning: some library printed this\n\n"
    text += events[3].to_json() + "\n"
    text += events[4].to_json()[:25]  # the writer crashed mid-line
    assert read_events(io.StringIO(text)) == events[:4]


def test_stream_parser_handles_arbitrary_chunks():
    events = sample_events()
    text = "noise\n" + "".join(e.to_json() + "\n" for e in events[:-1]) + events[-1].to_json()
    parser = EventStreamParser()
    got = []
    for start in range(0, len(text), 7):  # 7-character chunks cut lines anywhere
        got += parser.feed(text[start : start + 7])
    assert got == events[:-1]  # the last line has no newline yet
    assert parser.finish() == events[-1:]
    assert parser.finish() == []


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


def test_writer_flushes_every_line_and_emit_stamps_time():
    stream = CountingStream()
    writer = EventWriter(stream)
    for event in sample_events():
        writer.write(event)
    assert stream.flushes == len(sample_events())
    emitted = writer.emit("error", message="out of memory")
    assert emitted.time > 1e9  # wall-clock seconds
    writer.close()
    assert not stream.closed  # a stream the caller passed in stays open
    assert read_events(io.StringIO(stream.getvalue())) == sample_events() + [emitted]


def test_writer_appends_to_a_file(tmp_path):
    path = tmp_path / "events.jsonl"
    with EventWriter(path) as writer:
        writer.write(sample_events()[0])
    with EventWriter(str(path)) as writer:
        writer.write(sample_events()[1])
    assert read_events(path.read_text().splitlines()) == sample_events()[:2]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_from_a_steady_rate():
    clock = FakeClock()
    eta = EtaEstimator(total=100, clock=clock)
    assert eta.update(0) is None and eta.steps_per_s is None
    for done in range(1, 11):
        clock.now += 2.0
        assert eta.update(done) == pytest.approx(2.0 * (100 - done))
    assert eta.steps_per_s == pytest.approx(0.5)
    clock.now += 9.0
    assert eta.update(13) == pytest.approx(87 * 2.0 + 87 * 0.3 * (3.0 - 2.0))  # burst of 3 steps at 3 s/step
    assert eta.update(100) == 0.0


def test_eta_follows_a_rate_change_smoothly_and_restarts():
    clock = FakeClock()
    eta = EtaEstimator(total=1000, smoothing=0.5, clock=clock)
    eta.update(0)
    clock.now += 1.0
    eta.update(1)
    for done in range(2, 30):
        clock.now += 0.1
        value = eta.update(done)
    assert value == pytest.approx(0.1 * (1000 - 29), rel=1e-3)
    clock.now += 5.0
    eta.update(0)  # a new run starts over: the clock restarts, the rate is kept
    clock.now += 0.1
    assert eta.update(1) == pytest.approx(0.1 * 999, rel=1e-3)
    with pytest.raises(ValueError):
        EtaEstimator(10, smoothing=0.0)


def test_format_duration():
    assert format_duration(3725) == "1:02:05"
    assert format_duration(125.4) == "2:05"
    assert format_duration(None) == "--:--"
    assert format_duration(float("nan")) == "--:--"


def test_format_step_event_shows_bar_losses_rate_and_eta():
    line = format_event(sample_events()[2], width=200)
    assert line == (
        "stage 1 epoch 1/4 | [######..............] 3/10 | total 2.5 action_ce 1.25 | 120.5 samples/s | ETA 0:33"
    )
    assert len(format_event(sample_events()[2], width=30)) == 30
    assert format_event(sample_events()[4]) == "checkpoint (stage 1 epoch 1): runs/a/last.pt"
    assert format_event(sample_events()[1]) == "stage 1: disentangle"
    assert format_event(ProgressEvent("epoch", stage=2, epoch=3, epochs=15, losses={"mse": 0.01})) == (
        "stage 2 epoch 3/15 done: mse 0.01"
    )
    assert format_event(ProgressEvent("error", message="CUDA out of memory")) == "error: CUDA out of memory"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_redraws_steps_in_place_on_a_terminal():
    term = Terminal()
    bar = ProgressBar(term, width=81)
    events = sample_events()
    for event in events[:3]:
        bar.handle(event)
    bar.handle(events[2])
    bar.handle(events[3])
    out = term.getvalue()
    lines = out.split("\n")
    assert lines[0] == "start: training small on synthetic"
    assert lines[1] == "stage 1: disentangle"
    redraws = lines[2].split("\r")
    assert redraws[1] == redraws[2] and len(redraws[1]) == 80  # the same line drawn twice, padded
    assert redraws[-2] == " " * 80  # the bar is blanked before the epoch line
    assert redraws[-1] == "stage 1 epoch 1/4 done: total 2"


def test_progress_bar_drops_steps_when_not_a_terminal():
    log = io.StringIO()
    bar = ProgressBar(log, width=120)
    for event in sample_events():
        bar.handle(event)
    out = log.getvalue()
    assert "\r" not in out and "[" not in out
    assert out.count("\n") == len(sample_events()) - 1
