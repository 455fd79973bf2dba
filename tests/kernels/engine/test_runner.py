"""The runner's handling of commands, and the client's handling of a runner that fails."""

from __future__ import annotations

import io
import shlex
import sys
import time

import places
import pytest
from runner_subprocess import RunnerProcess, wire

from gemmscope.kernels.device.gpu import get_cupy
from gemmscope.kernels.drive.session import RunnerSession
from gemmscope.kernels.engine.runner import Runner
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.decoding import encode
from gemmscope.kernels.protocol.plan import RunRequest

FAKE = str(places.FAKE_RUNNER)
NO_GPU = get_cupy()[0] is None


def serve(lines: list[str]) -> tuple[int, list[dict]]:
    out = io.StringIO()
    runner = Runner(out, telemetry_hz=0)
    runner.start()
    try:
        code = runner.serve(iter(line + "\n" for line in lines))
    finally:
        runner.stop()
    events = [wire(x) for x in out.getvalue().splitlines()]
    return code, events


def test_header_then_ready_and_bye():
    code, events = serve(['{"cmd": "ping", "id": 1}', '{"cmd": "quit"}'])
    assert code == 0
    assert [e["type"] for e in events][:1] == ["session"]
    assert events[0]["protocol"] == protocol.PROTOCOL_VERSION
    assert "naive" in events[0]["levels"] and "common" in events[0]["levels"]
    kinds = [e["type"] for e in events]
    assert kinds.index("ready") < kinds.index("pong") < kinds.index("bye")
    assert all(isinstance(e["t"], float) for e in events)


def test_the_runner_clock_starts_at_its_header_not_before_cuda_starts(monkeypatch):
    """The session places a runner's events by the time its header (t = 0) arrives, so the
    runner's t must count from that header: time spent before it (CUDA's initialisation)
    would shift every later event against the session's own on one axis."""
    from gemmscope.kernels.engine import runner as runner_module

    def slow_start():
        time.sleep(1.0)
        return None, "no GPU (test)"

    monkeypatch.setattr(runner_module, "get_cupy", slow_start)
    out = io.StringIO()
    runner = Runner(out, telemetry_hz=0)
    runner.start()
    runner.stop()
    events = [wire(x) for x in out.getvalue().splitlines()]
    assert events[0]["type"] == "session" and events[0]["t"] == 0.0
    ready = next(e for e in events if e["type"] == "ready")
    assert ready["t"] < 0.5  # the header's t = 0 is when it was written, not 1 s before


def test_bad_commands_get_errors_and_the_runner_keeps_serving():
    _code, events = serve([
        "not json",
        '{"cmd": "run", "level": "naive", "M": 0, "N": 4, "K": 4, "id": "a"}',
        '{"cmd": "run", "level": "naive", "M": -1, "N": 4, "K": 4}',
        '{"cmd": "run", "level": "naive", "M": 2.5, "N": 4, "K": 4}',
        '{"cmd": "run", "level": "no_such_level", "M": 4, "N": 4, "K": 4, "id": "b"}',
        '{"cmd": "run", "level": "naive", "M": 4, "N": 4, "K": 4, "params": {"BK": 8}}',
        '{"cmd": "ping", "id": "still-alive"}',
    ])
    errors = [e for e in events if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["bad_input"] * 4 + ["unknown_level", "bad_input"]
    assert "naive has no parameter(s) BK" in errors[5]["message"]
    assert "not JSON" in errors[0]["message"]
    assert "M must be at least 1" in errors[1]["message"]
    assert "whole number" in errors[3]["message"]
    assert errors[4]["level"] == "no_such_level" and errors[4]["id"] == "b"
    assert any(e["type"] == "pong" and e["id"] == "still-alive" for e in events)


def test_shape_too_large_for_memory_is_refused():
    if NO_GPU:
        pytest.skip("memory check needs a device")
    _code, events = serve(['{"cmd": "run", "level": "naive", "M": 1048576, "N": 1048576, '
                           '"K": 1048576, "id": 9}'])
    err = next(e for e in events if e["type"] == "error")
    assert err["kind"] == "out_of_memory" and "GiB" in err["message"]


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_without_a_gpu_runs_are_refused_with_the_reason():
    _code, events = serve(['{"cmd": "run", "level": "naive", "M": 4, "N": 4, "K": 4, "id": 1}'])
    assert events[0]["device"] is None and events[0]["no_gpu_reason"]
    err = next(e for e in events if e["type"] == "error")
    assert err["kind"] == "no_gpu" and err["level"] == "naive" and err["M"] == 4
    assert any(e["type"] == "done" and e["id"] == 1 for e in events)


# each line with what the runner's answer must say; the runner reads bytes under a strict
# UTF-8 locale, so none of them may end it
GARBAGE = [
    (b"{this is not json", "command is not JSON"),
    (b"\xff\xfe\xc3\x28 not UTF-8", "command is not UTF-8 text (byte 0xff at column 1)"),
    (b'{"cmd": "ping", "id": "\xed\xa0\x80"}', "command is not UTF-8 text"),
    (b'{"cmd": "run", "level": "naive", "M": ' + b"9" * 5000 + b', "N": 1, "K": 1}',
     "an integer of 5000 digits (at most 100)"),
    (b"[" * 100_000 + b"\x00", "command is longer than 65536 bytes"),
    (b"[" * 60_000, "command is nested deeper than 32 levels"),
    (b'{"cmd": "ping", "id": ' + b"[" * 500 + b"]" * 500 + b"}", "nested deeper than 32"),
    (b'{"cmd": "ping", "id": "' + b"x" * (10 << 20) + b'"}',
     "command is longer than 65536 bytes"),  # 10 MB
    (b'{"cmd": "run", "level": "naive", "M": 0, "N": 1, "K": 1}', "M must be at least 1"),
    (b'{"cmd": "run", "level": "naive", "M": 4, "N": 4, "K": 4, "params": {"BLOCK": 0}}',
     "naive: BLOCK=0 is out of range"),
    (b'{"cmd": "dance"}', "unknown command 'dance'"),
]


def test_runner_as_a_subprocess_survives_garbage():
    """Every line of garbage gets its own bad_input error (and done), and the runner
    still answers a valid command after all of them."""
    runner = RunnerProcess()
    try:
        assert runner.header["type"] == "session"
        for line, message in GARBAGE:
            runner.send(line + b"\n")
            got = runner.until(lambda e: e["type"] == "done")
            errors = [e for e in got if e["type"] == "error"]
            assert len(errors) == 1 and errors[0]["kind"] == "bad_input", got
            assert message in errors[0]["message"], (message, errors[0])
        runner.send(b'{"cmd": "ping", "id": "still here"}\n')
        got = runner.until(lambda e: e["type"] == "done")
        assert [(e["type"], e.get("id")) for e in got] == [("pong", "still here"),
                                                           ("done", "still here")]
    finally:
        assert runner.close() == 0


def fake(mode: str, state: str | None = None) -> list[str]:
    return [sys.executable, FAKE, "--mode", mode, *(["--state", state] if state else [])]


def test_session_restarts_a_runner_that_crashes_mid_run(tmp_path):
    seen: list[dict] = []
    session = RunnerSession(seen.append, fake("crash", str(tmp_path / "once")))
    try:
        session.wait_ready()
        evs = session.run([RunRequest("wmma", Shape(7, 8, 9))])
        err = next(e for e in evs if e.type == "error")
        assert err.type == "error" and err.kind == "runner_crash"
        assert (err.level, err.M, err.N, err.K) == ("wmma", 7, 8, 9)
        assert "the runner exited" in err.message
        evs = session.run([RunRequest("naive", Shape(4, 4, 4))])
        assert any(e.type == "result" for e in evs)
        assert session.restarts == 1
    finally:
        session.close()
    # one time axis across the restart; the second header became a restart event
    times = [e.t for e in seen]
    assert times == sorted(times)
    assert sum(e.type == "session" for e in seen) == 1
    restart = next(e for e in seen if e.type == "restart")
    assert restart.restarts == 1 and restart.runner.protocol >= 1


def test_session_kills_a_runner_that_stops_answering(tmp_path):
    session = RunnerSession(lambda e: None, fake("hang", str(tmp_path / "once")),
                            watchdog_s=1.0)
    try:
        session.wait_ready()
        evs = session.run([RunRequest("naive", Shape(5, 6, 7))])
        err = next(e for e in evs if e.type == "error")
        assert err.kind == "timeout" and err.N == 6
        evs = session.run([RunRequest("naive", Shape(5, 6, 7))])
        assert [e.type for e in evs if e.type in ("result", "error")] == ["result"]
    finally:
        session.close()


def test_record_writes_every_event_line_by_line(tmp_path, monkeypatch):
    """`record` through the stand-in runner: the file holds every event the client
    delivered, in order, each written (and flushed) before the next one arrived."""
    from gemmscope.kernels.cli import main as cli

    seen: list[str] = []
    on_disk: list[int] = []

    def lines_written() -> int:
        [temp] = tmp_path.glob(".rec.*.tmp.jsonl")  # written beside rec.jsonl, renamed after
        return len(temp.read_bytes().splitlines())

    class TeeSession(RunnerSession):
        """The session the CLI makes, with every delivered event seen here too."""

        def __init__(self, on_event, command=None, **kwargs):
            def tee(ev: dict) -> None:
                on_disk.append(lines_written())
                seen.append(encode(ev))
                on_event(ev)

            super().__init__(tee, command, **kwargs)

    monkeypatch.setattr(cli, "RunnerSession", TeeSession)
    out = tmp_path / "rec.jsonl"
    code = cli.main(["record", "-o", str(out), "-l", "naive,coalesced", "-s", "16", "-s", "8",
                     "--no-compare", "-r", "3", "--runner", shlex.join(fake("ok"))],
                    stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    lines = out.read_text().splitlines()
    assert lines == seen  # every event, in order, nothing else
    # the tap writes each event before it is handed on: on disk before the next arrives
    assert on_disk == list(range(1, len(seen) + 1))
    s = recording.read_session(out)
    assert s.problem is None
    assert [(r.level, r.M) for r in s.results] == [("naive", 16), ("coalesced", 16),
                                                   ("naive", 8), ("coalesced", 8)]
    assert [e.type for e in s.events].count("repeat") == 4 * 3
