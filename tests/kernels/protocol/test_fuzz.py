"""Property-based tests: hostile command lines and damaged recordings (issue 11).

What must hold for every generated input: no uncaught exception, bounded time (the
profile's deadline, tests/conftest.py), the runner answers every line and still answers
a valid command after it, and the reader returns events or a located error, which every
reader downstream (store, replay, exports, `report`) takes without failing.

The CI profile is derandomized with no example database, so a run is repeatable;
GEMMSCOPE_HYPOTHESIS=explore draws new examples, ten times as many.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("hypothesis")

import msgspec
import synthetic_session
from fake_benches import H200, paired_results
from fake_benches import LimitsBench as FakeBench
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from runner_subprocess import RunnerProcess

from gemmscope.app.core import export
from gemmscope.app.core.replay import ReplayClock, Speed
from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.engine import runner
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import commands as cmds
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.decoding import decode, encode
from gemmscope.kernels.protocol.events import ErrorKind, ProtocolError
from gemmscope.kernels.protocol.telemetry_columns import TelemetryBlock
from gemmscope.kernels.results.table import render

SCALE = 10 if os.environ.get("GEMMSCOPE_HYPOTHESIS") == "explore" else 1


def examples(n: int) -> Any:
    return settings(max_examples=n * SCALE)


# ------------------------------------------------------------------ strategies

LEVEL_IDS = [lv.id for lv in registry.LEVELS]
PARAM_NAMES = sorted({name for lv in registry.LEVELS for name in lv.params})

scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=16)
sizes = (st.integers(-5, 70_000) | st.sampled_from([0, 1, 2**20, 2**20 + 1, 2**63, -2**63])
         | scalars)
param_values = (st.integers(-10, 5000) | st.sampled_from([0, 7, 2**31, -2**31, 10**50])
                | scalars)


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, allow_nan=True).encode()


@st.composite
def commands(draw: st.DrawFn) -> bytes:
    """A command of a known (or not) name whose fields are anything, usually plausible."""
    cmd: dict[str, Any] = {"cmd": draw(st.sampled_from(
        ["run", "run", "run", "levels", "ping", "telemetry", "dance", ""]) | st.text())}
    if draw(st.booleans()):
        cmd["level"] = draw(st.sampled_from(LEVEL_IDS) | st.text(max_size=30) | scalars)
    for name in ("M", "N", "K"):
        if draw(st.integers(0, 9)):
            cmd[name] = draw(sizes)
    for name in ("repeats", "warmup", "hz", "compare"):
        if not draw(st.integers(0, 3)):
            cmd[name] = draw(scalars)
    if draw(st.booleans()):
        cmd["params"] = draw(st.dictionaries(st.sampled_from(PARAM_NAMES) | st.text(max_size=6),
                                             param_values, max_size=4) | json_values)
    if draw(st.booleans()):
        cmd["id"] = draw(json_values)
    return dumps(cmd)


def nested(n: int, inner: bytes = b"1") -> bytes:
    return b"[" * n + inner + b"]" * n


garbage = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    st.integers(1, 100_000).map(lambda n: b"[" * n),  # unclosed, as in the issue
    st.integers(20, 600).map(lambda n: b'{"cmd": "ping", "id": ' + nested(n) + b"}"),
    st.integers(90, 6000).map(lambda n: b'{"cmd": "run", "level": "naive", "M": ' + b"9" * n
                              + b', "N": 1, "K": 1}'),
    st.sampled_from([b'{"cmd": "run", "level": "naive", "M": NaN, "N": 1, "K": 1}',
                     b'{"cmd": "telemetry", "hz": Infinity}', b'{"cmd": "ping", "id": 1e400}',
                     b'{"cmd": "run", "level": "cp_async", "M": 256, "N": 256, "K": 256, '
                     b'"params": {"STAGES": 64}}',
                     b'{"cmd": "run", "level": "register_2d", "M": 8, "N": 8, "K": 8, '
                     b'"params": {"BM": 7}}',
                     b'{"cmd": "run", "level": "register_2d", "M": 8, "N": 8, "K": 8, '
                     b'"params": {"TM": 0}}',
                     b"\xff\xfe\x00{\"cmd\": \"ping\"}", b'{"cmd": "ping", "id": "\xc3\x28"}',
                     b'"\\"' * 2000, b"\x1b[2J\r"]),
    st.integers(protocol.MAX_COMMAND_BYTES - 8, protocol.MAX_COMMAND_BYTES + 8).map(
        lambda n: b'{"cmd": "ping", "id": "' + b"x" * n + b'"}'),
)


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[bytes]) -> bytes:
    """A line damaged the ways files and pipes damage them."""
    data = bytearray(draw(base))
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["cut", "flip", "insert", "utf8"]))
        at = draw(st.integers(0, len(data)))
        if op == "cut":
            del data[at:]
        elif op == "flip" and data:
            data[min(at, len(data) - 1)] ^= draw(st.integers(1, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            data[at:at] = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"]))
    return bytes(data)


hostile_lines = st.one_of(commands(), garbage, mutated(commands()), mutated(garbage))


def is_quit(line: bytes) -> bool:
    try:
        cmd = cmds.parse_command(line)
        return isinstance(cmd, cmds.PlainCommand) and cmd.cmd == "quit"
    except ProtocolError:
        return False


def nonblank_lines(data: bytes) -> int:
    """How many commands the runner reads from ``data`` (blank lines are ignored)."""
    return sum(1 for line in protocol.read_lines(io.BytesIO(data), protocol.MAX_COMMAND_BYTES)
               if line.strip())


# ------------------------------------------------------------------ commands

@examples(600)
@given(line=hostile_lines | st.text(max_size=500))
def test_parse_command_returns_a_command_or_refuses_it(line: bytes | str):
    try:
        cmd = cmds.parse_command(line)
    except ProtocolError as exc:
        assert str(exc)
        return
    assert isinstance(cmd, cmds.RunCommand | cmds.TelemetryCommand | cmds.PlainCommand)
    if isinstance(cmd, cmds.PlainCommand):
        assert cmd.cmd in cmds.COMMANDS
    json.dumps(dataclasses.asdict(cmd), allow_nan=False)  # what was read is finite JSON


PING = b'{"cmd": "ping", "id": "after"}'


@examples(400)
@given(lines=st.lists(hostile_lines, min_size=1, max_size=4))
def test_the_runner_answers_every_hostile_line_and_serves_on(lines: list[bytes]):
    """In process, with the H200's limits and a bench that launches nothing: every line is
    answered (done), errors have a known kind, every line the runner writes is a valid
    event, and a valid command after the garbage is answered."""
    assume(not any(is_quit(x) for line in lines for x in line.split(b"\n")))
    data = b"\n".join(lines) + b"\n" + PING + b"\n"
    out = io.StringIO()
    r = runner.Runner(out, telemetry_hz=0)
    r.device, r.bench = H200, FakeBench()
    r.pair_burst = paired_results
    code = r.serve(protocol.read_lines(io.BytesIO(data), protocol.MAX_COMMAND_BYTES))
    assert code == 0
    for line in out.getvalue().splitlines():
        decode(line)  # every line the runner writes is a valid event
    events = [json.loads(x) for x in out.getvalue().splitlines()]
    assert sum(e["type"] == "done" for e in events) == nonblank_lines(data)
    kinds = {str(k) for k in ErrorKind}
    for e in events:
        if e["type"] == "error":
            assert e["kind"] in kinds and e["kind"] != "internal", e
            assert e["kind"] not in ("launch", "runner_crash")
    assert [e["type"] for e in events[-3:]] == ["pong", "done", "bye"]
    assert events[-3]["id"] == "after"


@pytest.fixture(scope="module")
def runner_process():
    proc = RunnerProcess()
    yield proc
    assert proc.close() == 0


def refused_by_the_runner(line: bytes) -> bool:
    """Lines this test sends: ones parse_command refuses, so nothing reaches a GPU where
    there is one (the in-process test above covers what valid commands do)."""
    try:
        cmds.parse_command(line)
    except ProtocolError:
        return True
    return False


@examples(100)
@given(line=hostile_lines)
def test_a_runner_process_answers_hostile_lines_and_serves_on(runner_process, line: bytes):
    parts = [x for x in line.split(b"\n") if x.strip()]
    assume(parts and all(refused_by_the_runner(x) for x in parts))
    tag = f"after-{time.monotonic_ns()}"
    runner_process.send(line + b"\n" + b'{"cmd": "ping", "id": "%s"}\n' % tag.encode())
    got = runner_process.until(lambda e: e["type"] == "pong" and e.get("id") == tag)
    errors = [e for e in got if e["type"] == "error"]
    assert len(errors) == len(parts) and all(e["kind"] == "bad_input" for e in errors)


# ------------------------------------------------------------------ recordings

def base_recording() -> list[bytes]:
    """A short recording with every event type: the synthetic session's header, first
    runs, its error and a counters event."""
    events = synthetic_session.events()
    keep = events[:40] + [e for e in events if e["type"] == "error"][:1]
    keep.append({"type": "counters", "t": 99.0, "level": "smem_tiled", "M": 64, "N": 64,
                 "K": 64, "tool": "ncu", "metrics": {"a__x.sum": 12, "b__y.sum": None},
                 "params": {"TILE": 32}, "kernel": "k", "command": ["ncu"]})
    keep.append({"type": "info", "t": 100.0, "message": "bye"})
    return [protocol.dumps(e).encode() for e in keep]


BASE = base_recording()
BY_TYPE: dict[str, list[dict]] = {}
for _line in BASE:
    BY_TYPE.setdefault(json.loads(_line)["type"], []).append(json.loads(_line))


@st.composite
def wrong_typed(draw: st.DrawFn, kind: str | None = None) -> bytes:
    """An event of the recording (more often one of the types readers use) with one to
    three fields, or fields of the header's catalog and device, replaced by any JSON
    value, NaN and infinities included."""
    kind = kind or draw(st.sampled_from(["session", "result", "error", "counters",
                                         "telemetry"]) | st.sampled_from(sorted(BY_TYPE)))
    event = json.loads(json.dumps(draw(st.sampled_from(BY_TYPE[kind]))))
    for _ in range(draw(st.integers(1, 3))):
        targets = [event]
        if kind == "session":
            catalog = event.get("catalog")
            targets += [x for x in [event.get("device"), *(
                catalog[:3] if isinstance(catalog, list) else [])] if isinstance(x, dict)]
        target = draw(st.sampled_from(targets))
        names = st.text(max_size=6)
        if target:
            names = st.sampled_from(sorted(target)) | names
        target[draw(names)] = draw(json_values)
    return dumps(event)


@st.composite
def headers(draw: st.DrawFn) -> bytes:
    """The recording's header, as it is or with wrong types in it."""
    return draw(wrong_typed("session")) if draw(st.booleans()) else BASE[0]


damaged_lines = st.one_of(
    wrong_typed(), wrong_typed(), garbage, mutated(st.sampled_from(BASE)),
    st.integers(20, 3000).map(lambda n: b'{"type": "info", "t": 1, "message": ' + nested(n)
                              + b"}"),
    st.integers(90, 6000).map(lambda n: b'{"type": "repeat", "t": 1, "level": "naive", '
                              b'"M": 1, "N": 1, "K": 1, "i": ' + b"7" * n
                              + b', "ms": 1, "tflops": 1}'),
    st.sampled_from([b'{"type": "result", "t": NaN}', b'{"type": "error", "t": 1, "kind": '
                     b'"launch", "message": ""}', b'{"type": "telemetry", "t": Infinity}',
                     b'{"type": "result", "t": 1, "level": "naive", "M": 8, "N": 8, "K": 8, '
                     b'"dtype": "fp32", "median_ms": 1e308, "tflops": 1e308, "verified": '
                     b'true, "rel_err": null, "repeats": 1, "reference_tflops": 1e-308}']),
)


@st.composite
def damaged_recordings(draw: st.DrawFn) -> bytes:
    lines = list(BASE)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["insert", "replace", "delete", "duplicate"]))
        at = draw(st.integers(0, len(lines)))
        if op == "insert":
            lines.insert(at, draw(damaged_lines))
        elif op == "replace" and at < len(lines):
            lines[at] = draw(damaged_lines)
        elif op == "delete" and at < len(lines):
            del lines[at]
        elif lines:
            lines.insert(at, lines[min(at, len(lines) - 1)])
    data = b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\r\n"]))
    if draw(st.booleans()):  # a crash or a copy cut the file short
        data = data[:draw(st.integers(0, len(data)))]
    return data


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "damaged.jsonl"


@examples(250)
@given(data=damaged_recordings())
def test_a_damaged_recording_gives_events_or_a_located_error(scratch: Path, data: bytes):
    scratch.write_bytes(data)
    try:
        session = recording.read_session(scratch)
    except ProtocolError as exc:
        assert str(exc).startswith(str(scratch))  # names the file
        assert exc.line is not None or "empty" in str(exc)  # and the line, where there is one
        return
    events = session.events
    assert events[0].type == "session" and events[0] is session.header
    for e in events:
        if not isinstance(e, TelemetryBlock):
            assert decode(encode(e)) == e  # what was read is valid as it is, and finite
        else:
            assert np.isfinite(e.times()).all()
    for exc in session.skipped:
        assert exc.line is not None and str(exc).startswith(f"{scratch}:{exc.line}: ")
    assert (session.problem is None) == (session.skipped_count == 0)
    read_everywhere(events, scratch)


def read_everywhere(events: list[dict], path: Path | None = None,
                    report: tuple[int, ...] = (0, 1)) -> None:
    """Every reader downstream of the validator takes ``events``: the store (through the
    replay clock), its derived numbers, the exports, the table and, given the file,
    `gemmscope report`. A failure is reported as text, so that hypothesis, which keeps
    every failing example while it shrinks, keeps no store (20 MB of buffers) alive."""
    failure = None
    store = SessionStore()
    try:
        clock = ReplayClock(events, store.handle)
        clock.set_speed(Speed.INSTANT)
        clock.play()
        samples = sum(e.stop - e.start - 1 for e in events if isinstance(e, TelemetryBlock))
        assert clock.finished and store.event_count == len(events) + samples
        for r in store.results:
            store.row(r).texts(), store.reference_result(r)
        store.sweeps(), store.run_windows(), store.telemetry_status(), store.device_name()
        export.results_csv(store)
        export.ladder_markdown(store, "fuzz")
        render([e for e in events if isinstance(e, rec.Result)])
        if path is not None:
            code = cli.main(["report", str(path)], stdout=io.StringIO(), stderr=io.StringIO())
            assert code in report, code
    except Exception:
        failure = traceback.format_exc()
    finally:
        del store
    if failure is not None:
        pytest.fail(failure, pytrace=False)


event_types = st.sampled_from(sorted(rec.BY_TYPE)) | st.text(max_size=8)


def optional(cls: type) -> list[str]:
    """The optional fields of a record, as they are named on the wire (those whose every
    value must read, ``mode``, left out: a value of another type refuses the line)."""
    info = msgspec.inspect.type_info(cls)
    strict = getattr(cls, "STRICT", frozenset())
    return [f.encode_name for f in info.fields if not f.required and f.name not in strict]


@st.composite
def plausible_events(draw: st.DrawFn) -> dict[str, Any]:
    """An event of any type whose required fields are mostly there, any field any value."""
    kind = draw(event_types)
    event: dict[str, Any] = {"type": kind, "t": draw(st.floats(-1e3, 1e6) | scalars)}
    template = next((json.loads(b) for b in BASE if json.loads(b)["type"] == kind), {})
    for name, value in template.items():
        if name not in ("type", "t") and draw(st.integers(0, 5)):
            event[name] = value if draw(st.integers(0, 3)) else draw(json_values)
    for name in draw(st.lists(st.text(max_size=8), max_size=3)):
        event[name] = draw(json_values)
    return event


def any_values(fields: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    names = [*sorted(fields), "anything"]
    return st.dictionaries(st.sampled_from(names), json_values | scalars, min_size=1)


@examples(250)
@given(header=headers(), session=any_values(optional(rec.Session)),
       device=any_values(optional(rec.DeviceInfo)), result=any_values(optional(rec.Result)),
       error=any_values(optional(rec.Error)),
       telemetry=any_values(optional(rec.Telemetry)),
       counters=any_values(optional(rec.Counters)))
def test_optional_fields_of_any_type_never_break_a_reader(
        scratch: Path, header: bytes, session: dict, device: dict, result: dict, error: dict,
        telemetry: dict, counters: dict):
    """Every optional field of the events readers use, given any value (strings where
    numbers belong, NaN, lists, objects): the store, its exports, the replay and `report`
    read what was recorded and show n/a for the rest."""
    head = {**json.loads(header), **session}
    if isinstance(head.get("device"), dict):
        head["device"].update(device)
    lines = [dumps(head)]
    for kind, fields in (("result", result), ("error", error), ("telemetry", telemetry),
                         ("counters", counters)):
        lines.append(dumps({**BY_TYPE[kind][0], **fields}))
    scratch.write_bytes(b"\n".join(lines) + b"\n")
    try:
        read = recording.read_session(scratch)
    except ProtocolError as exc:  # only a header that lost a required field
        assert str(exc).startswith(f"{scratch}:1: ")
        return
    assert read.problem is None  # optional fields never make a line unreadable
    assert [e.type for e in read.events] == ["session", "result", "error", "telemetry",
                                             "counters"]
    read_everywhere(read.events, scratch, report=(0,))


@examples(250)
@given(header=headers(), events=st.lists(plausible_events(), min_size=1,
                                                    max_size=8))
def test_every_event_the_validator_passes_is_safe_for_the_store(header: bytes,
                                                                events: list[dict]):
    """Parse at the edge, then trust: the store, its exports and the replay clock take
    any event the decoder let through."""
    try:  # the store takes the first header it is given: a damaged one, where it passes
        passed = [decode(header)]
    except ProtocolError:
        passed = [decode(BASE[0])]
    for ev in events:
        try:  # the edge: limits, non-finite numbers, then the event's fields
            passed.append(decode(json.dumps(ev, allow_nan=True)))
        except ProtocolError:
            continue
    read_everywhere(passed)
