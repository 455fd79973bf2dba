"""The live source (a runner session pumped by Qt) with a stand-in runner that is a real
subprocess (tests/support/fake_runner.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import synthetic_session as syn

from gemmscope.app.core.store import SessionStore
from gemmscope.app.sources.live import LiveSource
from gemmscope.kernels.drive.session import SessionState
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.plan import RunRequest
from gemmscope.kernels.protocol.recording import read_session
from gemmscope.kernels.protocol.session_file import SessionWriter

REQS = [RunRequest("naive", Shape(64, 64, 64), 5), RunRequest("coalesced", Shape(64, 128, 64), 5)]


@pytest.fixture
def make_runner(qtbot, tmp_path, fake_runner):
    made = []

    def make(mode: str, watchdog_s: float = 30.0) -> tuple[LiveSource, SessionStore, Path]:
        path = tmp_path / f"{mode}.jsonl"
        writer = SessionWriter(path)
        cmd = [sys.executable, str(fake_runner), "--mode", mode,
               "--state", str(tmp_path / f"{mode}.state")]
        store = SessionStore()
        runner = LiveSource(store.handle, cmd, tap=writer, watchdog_s=watchdog_s)
        made.append((runner, writer))
        return runner, store, path

    yield make
    for runner, writer in made:
        runner.stop()
        writer.close()


def test_runs_queue_one_at_a_time_and_are_recorded(qtbot, make_runner):
    runner, store, path = make_runner("ok")
    with qtbot.waitSignal(runner.idle, timeout=10_000):
        runner.submit(REQS)
    assert [r.level for r in store.results] == ["naive", "coalesced"]
    assert store.results[1].shape.N == 128
    session = read_session(path)  # the file is a valid recording, line for line
    assert [e.type for e in session.events].count("repeat") == 10
    assert runner.state is SessionState.READY


def test_crash_mid_run_is_reported_with_level_and_shape_then_queue_goes_on(qtbot, make_runner):
    runner, store, path = make_runner("crash")
    with qtbot.waitSignal(runner.idle, timeout=15_000):
        runner.submit(REQS)
    errors = [m for m in store.messages if m.is_error]
    assert len(errors) == 1
    assert errors[0].kind == "runner_crash"
    assert errors[0].describe().startswith("runner_crash (naive at 64×64×64): the runner exited")
    assert [r.level for r in store.results] == ["coalesced"]  # the next run was served
    assert runner.restarts == 1
    events = syn.file_events(path)
    assert [e["type"] for e in events].count("session") == 1
    assert [e["type"] for e in events].count("restart") == 1
    # the two repeats measured before the crash are in the file
    assert sum(1 for e in events if e["type"] == "repeat" and e["level"] == "naive") == 2


@pytest.mark.parametrize("mode", ["hang", "hang_telemetry"])
def test_hang_is_killed_by_the_watchdog(qtbot, make_runner, mode):
    runner, store, path = make_runner(mode, watchdog_s=1.0)
    with qtbot.waitSignal(runner.idle, timeout=15_000):
        runner.submit(REQS)
    errors = [m for m in store.messages if m.is_error]
    assert [e.kind for e in errors] == ["timeout"]
    assert errors[0].level == "naive" and str(errors[0].shape) == "64×64×64"
    assert [r.level for r in store.results] == ["coalesced"]
    assert any(e["type"] == "error" and e["kind"] == "timeout"
               for e in syn.file_events(path))


def test_a_line_that_is_not_an_event_becomes_a_message(qtbot, make_runner):
    runner, store, _ = make_runner("garbage")
    with qtbot.waitSignal(runner.idle, timeout=10_000):
        runner.submit(REQS[:1])
    infos = [m for m in store.messages if not m.is_error]
    assert any("not an event" in m.text for m in infos)
    assert len(store.results) == 1


def test_stop_drops_the_queue_and_ends_the_run(qtbot, make_runner):
    runner, store, _ = make_runner("hang", watchdog_s=30)
    runner.submit(REQS)
    qtbot.waitUntil(lambda: store.stream.count == 2, timeout=10_000)
    with qtbot.waitSignal(runner.idle, timeout=10_000):
        runner.stop_runs()
    assert any("stopped by the user" in m.text for m in store.messages)
    assert store.results == []


def test_a_runner_that_cannot_start_says_so(qtbot, tmp_path):
    store = SessionStore()
    runner = LiveSource(store.handle, [str(tmp_path / "no-such-runner")])
    with qtbot.waitSignal(runner.idle, timeout=10_000):
        runner.submit(REQS[:1])
    assert runner.state is SessionState.FAILED
    assert "could not be started" in store.messages[0].text
    runner.stop()


def test_a_runner_that_never_gets_ready_is_restarted_then_given_up(qtbot, tmp_path,
                                                                   fake_runner):
    cmd = [sys.executable, str(fake_runner), "--mode", "silent_start"]  # every start hangs
    store = SessionStore()
    runner = LiveSource(store.handle, cmd, watchdog_s=0.5)
    with qtbot.waitSignal(runner.idle, timeout=20_000):
        runner.submit(REQS[:1])
    assert runner.state is SessionState.FAILED
    assert [m.kind for m in store.messages if m.is_error] == ["timeout"] * 3
    assert "said nothing within 0.5 s" in store.messages[0].text
    assert "failed 3 times in a row" in store.messages[-1].text
    runner.stop()
