"""The event protocol: round trips, validation, and readers that name the bad line."""

from __future__ import annotations

import json

import pytest

from gemmscope.kernels import protocol
from gemmscope.kernels.protocol import ProtocolError

HEADER = {"type": "session", "t": 0.0, "protocol": 1, "created": "2026-11-29T12:00:00+00:00",
          "levels": {}}
RESULT = {"type": "result", "t": 1.5, "level": "naive", "M": 8, "N": 8, "K": 8, "dtype": "fp32",
          "median_ms": 0.01, "tflops": 0.1, "verified": True, "rel_err": 1e-7, "repeats": 3,
          "mode": "burst"}  # a result without a mode reads as burst (test_modes.py)


def write(tmp_path, lines, final_newline=True):
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + ("\n" if final_newline else ""))
    return p


def test_round_trip(tmp_path):
    events = [HEADER, RESULT, {"type": "error", "t": 2.0, "kind": "verify", "message": "x"}]
    p = write(tmp_path, [protocol.dumps(e) for e in events])
    s = protocol.read_session(p)
    assert s.header == HEADER
    assert s.results == [RESULT]
    assert [e["kind"] for e in s.errors] == ["verify"]


def test_nan_and_infinity_become_null():
    line = protocol.dumps({**RESULT, "rel_err": float("nan"), "tflops": float("inf")})
    back = json.loads(line)
    assert back["rel_err"] is None and back["tflops"] is None


def test_bad_json_names_the_line(tmp_path):
    p = write(tmp_path, [protocol.dumps(HEADER), "{oops", protocol.dumps(RESULT)])
    with pytest.raises(ProtocolError, match=r"s\.jsonl:2: not JSON"):
        protocol.read_session(p)


def test_missing_field_names_the_line(tmp_path):
    bad = {k: v for k, v in RESULT.items() if k != "tflops"}
    p = write(tmp_path, [protocol.dumps(HEADER), protocol.dumps(bad)])
    with pytest.raises(ProtocolError, match=r":2: result event lacks \"tflops\""):
        protocol.read_session(p)


def test_wrong_type_is_rejected():
    with pytest.raises(ProtocolError, match='"M" must be int'):
        protocol.validate_event({**RESULT, "M": "8"})
    with pytest.raises(ProtocolError, match="must not be a boolean"):
        protocol.validate_event({**RESULT, "M": True})


def test_first_event_must_be_session(tmp_path):
    p = write(tmp_path, [protocol.dumps(RESULT)])
    with pytest.raises(ProtocolError, match=':1: the first event must be "session"'):
        protocol.read_session(p)


def test_newer_protocol_is_rejected(tmp_path):
    p = write(tmp_path, [protocol.dumps({**HEADER, "protocol": 99})])
    with pytest.raises(ProtocolError, match="protocol 99 is newer"):
        protocol.read_session(p)


def test_empty_and_missing_files(tmp_path):
    p = write(tmp_path, [], final_newline=False)
    with pytest.raises(ProtocolError, match="empty"):
        protocol.read_session(p)
    with pytest.raises(ProtocolError, match="cannot open"):
        protocol.read_session(tmp_path / "nope.jsonl")


def test_truncated_last_line_is_dropped(tmp_path):
    text = protocol.dumps(HEADER) + "\n" + protocol.dumps(RESULT) + "\n" + '{"type": "resu'
    p = tmp_path / "cut.jsonl"
    p.write_text(text)
    s = protocol.read_session(p)
    assert s.results == [RESULT]


COUNTERS = {"type": "counters", "t": 9.0, "level": "naive", "M": 64, "N": 64, "K": 64,
            "tool": "ncu", "metrics": {"a__x.sum": 12, "b__y.sum": 1.5, "c__z.sum": None},
            "command": ["ncu", "--csv"]}


def test_counters_round_trip(tmp_path):
    p = write(tmp_path, [protocol.dumps(e) for e in (HEADER, RESULT, COUNTERS)])
    assert protocol.read_session(p).counters == [COUNTERS]


@pytest.mark.parametrize(("change", "message"), [
    ({"metrics": {"a__x.sum": "12"}}, "metric 'a__x.sum' must be a number or null"),
    ({"metrics": {"a__x.sum": True}}, "metric 'a__x.sum' must be a number or null"),
    ({"metrics": [1, 2]}, '"metrics" must be dict'),
    ({"M": 64.0}, '"M" must be int'),
    ({"tool": None}, '"tool" must be str'),
])
def test_bad_counters_name_the_line(tmp_path, change, message):
    p = write(tmp_path, [protocol.dumps(HEADER), protocol.dumps({**COUNTERS, **change})])
    with pytest.raises(ProtocolError, match=f"s.jsonl:2: .*{message}"):
        protocol.read_session(p)


def test_unknown_event_types_pass_through(tmp_path):
    p = write(tmp_path, [protocol.dumps(HEADER), '{"type": "future", "t": 1}'])
    assert protocol.read_session(p).events[-1]["type"] == "future"


@pytest.mark.parametrize("line, message", [
    ("not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    ('{"cmd": "dance"}', "unknown command"),
    ('{"cmd": "run", "M": 1, "N": 1, "K": 1}', 'needs a string "level"'),
    ('{"cmd": "run", "level": "naive", "M": 0, "N": 1, "K": 1}', "M must be at least 1"),
    ('{"cmd": "run", "level": "naive", "M": -5, "N": 1, "K": 1}', "at least 1"),
    ('{"cmd": "run", "level": "naive", "M": 1.5, "N": 1, "K": 1}', "whole number"),
    ('{"cmd": "run", "level": "naive", "M": "7", "N": 1, "K": 1}', "whole number"),
    ('{"cmd": "run", "level": "naive", "M": true, "N": 1, "K": 1}', "whole number"),
    ('{"cmd": "run", "level": "naive", "M": 1, "N": 1}', "K must be a whole number"),
    ('{"cmd": "run", "level": "naive", "M": 1, "N": 1, "K": 99999999}', "larger than"),
    ('{"cmd": "run", "level": "naive", "M": 1, "N": 1, "K": 1, "repeats": 0}', "repeats"),
    ('{"cmd": "run", "level": "naive", "M": 1, "N": 1, "K": 1, "params": {"BK": "x"}}',
     "params"),
    ('{"cmd": "telemetry", "hz": 500}', "hz"),
    ('{"cmd": "telemetry", "hz": 0.5}', "hz"),
])
def test_bad_commands_are_explained(line, message):
    with pytest.raises(ProtocolError, match=message):
        protocol.parse_command(line)


def test_good_commands():
    cmd = protocol.parse_command('{"cmd": "run", "level": "naive", "M": 7, "N": 13, "K": 5}')
    assert cmd["M"] == 7
    assert protocol.parse_command('{"cmd": "telemetry", "hz": 0}')["hz"] == 0
    assert protocol.parse_command('{"cmd": "quit"}')["cmd"] == "quit"
