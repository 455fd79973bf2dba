"""The session's own events stay in order with its runner's on the one time axis, also
when the runner's header was read late (a busy machine: tests/kernels/engine/
test_runner.py's crash test saw the crash error placed before the runner's last repeat)."""

from __future__ import annotations

import json

from gemmscope.kernels.drive.session import RunnerSession
from gemmscope.kernels.protocol.events import PROTOCOL_VERSION
from gemmscope.kernels.protocol.timeline import Timeline


def line(**event) -> bytes:
    return json.dumps(event).encode()


def test_an_event_of_the_session_never_goes_before_the_runners_latest():
    seen = []
    session = RunnerSession(seen.append, ["true"])
    # the header written at its t = 0 but read 5 s into the session; the run's lines after it
    late = session.now() + 5.0
    session._handle(0, late, line(type="session", t=0.0, protocol=PROTOCOL_VERSION,
                                  created="x", levels={}))
    session._handle(0, late, line(type="repeat", t=0.3, id="run-1", level="naive", M=4,
                                  N=4, K=4, i=0, ms=1.0, tflops=1.0))
    session.emit({"type": "error", "kind": "runner_crash", "message": "the runner exited"})
    times = [e.t for e in seen]
    assert [e.type for e in seen] == ["session", "repeat", "error"]
    assert times == sorted(times) and times[2] >= late + 0.3


def test_a_stamp_is_now_unless_the_axis_has_gone_past_it():
    axis = Timeline()
    assert axis.stamp(1.0) == 1.0
    assert axis.stamp(0.5) == 1.0  # never back
    assert axis.stamp(2.0) == 2.0 and axis.last_s == 2.0
