"""The event protocol: round trips, validation, and readers that name the bad line."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

from gemmscope.kernels.protocol import commands, recording
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.decoding import decode, from_builtins, of
from gemmscope.kernels.protocol.events import ProtocolError

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
    s = recording.read_session(p)
    assert s.header == of(HEADER)
    assert s.results == [of(RESULT)]
    assert [e.kind for e in s.errors] == ["verify"]


def test_nan_and_infinity_become_null():
    line = protocol.dumps({**RESULT, "rel_err": float("nan"), "tflops": float("inf")})
    back = json.loads(line)
    assert back["rel_err"] is None and back["tflops"] is None


def test_bad_json_is_skipped_and_named(tmp_path):
    p = write(tmp_path, [protocol.dumps(HEADER), "{oops", protocol.dumps(RESULT)])
    s = recording.read_session(p)
    assert s.results == [of(RESULT)]
    assert s.skipped_count == 1 and s.skipped[0].line == 2
    assert s.problem.startswith(f"{p}:2: not JSON")


def test_missing_field_is_skipped_and_named(tmp_path):
    bad = {k: v for k, v in RESULT.items() if k != "tflops"}
    p = write(tmp_path, [protocol.dumps(HEADER), protocol.dumps(bad)])
    s = recording.read_session(p)
    assert s.events == [of(HEADER)]
    assert ':2: result event lacks "tflops"' in s.problem
    with pytest.raises(ProtocolError, match=r"line 2: result event lacks \"tflops\""):
        list(recording.iter_events([protocol.dumps(HEADER) + "\n", protocol.dumps(bad) + "\n"]))


def test_wrong_type_is_rejected():
    with pytest.raises(ProtocolError, match='"M" must be int'):
        from_builtins({**RESULT, "M": "8"})
    with pytest.raises(ProtocolError, match="must not be a boolean"):
        from_builtins({**RESULT, "M": True})


def test_first_event_must_be_session(tmp_path):
    p = write(tmp_path, [protocol.dumps(RESULT)])
    with pytest.raises(ProtocolError, match=':1: the first event must be "session"'):
        recording.read_session(p)


def test_newer_protocol_is_rejected(tmp_path):
    p = write(tmp_path, [protocol.dumps({**HEADER, "protocol": 99})])
    with pytest.raises(ProtocolError, match="protocol 99 is newer"):
        recording.read_session(p)


def test_empty_and_missing_files(tmp_path):
    p = write(tmp_path, [], final_newline=False)
    with pytest.raises(ProtocolError, match="empty"):
        recording.read_session(p)
    with pytest.raises(ProtocolError, match="cannot open"):
        recording.read_session(tmp_path / "nope.jsonl")


def test_truncated_last_line_is_reported_and_the_rest_kept(tmp_path):
    text = protocol.dumps(HEADER) + "\n" + protocol.dumps(RESULT) + "\n" + '{"type": "resu'
    p = tmp_path / "cut.jsonl"
    p.write_text(text)
    s = recording.read_session(p)
    assert s.results == [of(RESULT)]
    assert s.skipped_count == 1
    assert f"{p}:3: not JSON" in s.problem and "a cut line" in s.problem


COUNTERS = {"type": "counters", "t": 9.0, "level": "naive", "M": 64, "N": 64, "K": 64,
            "tool": "ncu", "metrics": {"a__x.sum": 12, "b__y.sum": 1.5, "c__z.sum": None},
            "command": ["ncu", "--csv"]}


def test_counters_round_trip(tmp_path):
    p = write(tmp_path, [protocol.dumps(e) for e in (HEADER, RESULT, COUNTERS)])
    assert recording.read_session(p).counters == [of(COUNTERS)]


@pytest.mark.parametrize(("change", "message"), [
    ({"metrics": {"a__x.sum": "12"}}, "metric 'a__x.sum' must be a number or null"),
    ({"metrics": {"a__x.sum": True}}, "metric 'a__x.sum' must be a number or null"),
    ({"metrics": [1, 2]}, '"metrics" must be dict'),
    ({"M": 64.0}, '"M" must be int'),
    ({"tool": None}, '"tool" must be str'),
])
def test_bad_counters_name_the_line(tmp_path, change, message):
    p = write(tmp_path, [protocol.dumps(HEADER), protocol.dumps({**COUNTERS, **change})])
    s = recording.read_session(p)
    assert s.counters == []
    assert s.problem is not None and re.search(f"s.jsonl:2: .*{message}", s.problem)


def test_unknown_event_types_pass_through(tmp_path):
    p = write(tmp_path, [protocol.dumps(HEADER), '{"type": "future", "t": 1}'])
    assert recording.read_session(p).events[-1].type == "future"


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
        commands.parse_command(line)


def test_good_commands():
    cmd = commands.parse_command('{"cmd": "run", "level": "naive", "M": 7, "N": 13, "K": 5}')
    assert cmd == commands.RunCommand("naive", 7, 13, 5)  # the defaults filled in, once
    assert commands.parse_command('{"cmd": "telemetry", "hz": 0}') == \
        commands.TelemetryCommand(0.0)
    assert commands.parse_command('{"cmd": "quit", "id": 3}') == commands.PlainCommand("quit", 3)


# ------------------------------------------------------------------ limits at the edge

INFO = '{"type": "info", "t": 1, "message": "%s"}'


@pytest.mark.parametrize("line, message", [
    ("[" * 100_000, "nested deeper than 32 levels"),
    ('{"type": "info", "t": 1, "message": "x", "id": ' + "[" * 500 + "]" * 500 + "}",
     "nested deeper than 32 levels"),
    ('{"type": "info", "t": 1, "message": "x", "n": ' + "9" * 5000 + "}",
     "an integer of 5000 digits (at most 100)"),
    ('{"type": "info", "t": 1, "message": "x", "n": -' + "9" * 101 + "}",
     "an integer of 101 digits"),
    (b'{"type": "info", "t": 1, "message": "\xff"}', "not UTF-8 text (byte 0xff"),
    ('{"type": "info", "t": 1, "message": "' + "x" * protocol.MAX_EVENT_BYTES + '"}',
     f"longer than {protocol.MAX_EVENT_BYTES} bytes"),
    ('{"type": "info", "t": 1, "message": "' + "é" * (protocol.MAX_EVENT_BYTES // 2) + '"}',
     f"longer than {protocol.MAX_EVENT_BYTES} bytes"),  # counted in bytes, not characters
])
def test_limits_refuse_a_line_before_json_decodes_it(line, message):
    with pytest.raises(ProtocolError, match=re.escape(message)):
        decode(line)


def test_within_the_limits_a_line_is_read():
    d = protocol.MAX_DEPTH - 1  # the event itself is the first level
    deep = "[" * d + "]" * d
    # a run's id is any JSON value, kept as it is within the limits
    ev = decode('{"type": "info", "t": 1, "message": "x", "id": ' + deep + "}")
    assert ev.id is not None
    # brackets inside strings are text, not nesting; escaped quotes do not end a string
    text = "[" * 1000 + '\\"{{{' + "{" * 1000
    ev = decode(INFO % text)
    assert ev.message == text.replace('\\"', '"')
    assert decode(INFO % "x", 1).type == "info"
    n = "-" + "9" * protocol.MAX_INT_DIGITS
    assert decode('{"type": "info", "t": 1, "message": "", "id": ' + n + "}").id == int(n)
    # a float of many digits is a float (its overflow is rule 6's)
    long_float = '{"type": "info", "t": 1.' + "5" * 300 + ', "message": ""}'
    assert decode(long_float).t == 1.5555555555555556


def test_the_depth_scan_costs_one_pass_even_on_a_line_full_of_quotes():
    import time

    for line in ('"' + '\\"' * 400_000 + "\\", '"' + '"' * 800_000, "[" + '"",' * 300_000):
        t0 = time.perf_counter()
        with pytest.raises(ProtocolError):
            decode(line)
        assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("line, message", [
    ('{"cmd": "run", "level": "naive", "M": ' + "9" * 5000 + ', "N": 1, "K": 1}',
     "an integer of 5000 digits"),
    ("[" * 50_000, "command is nested deeper than 32 levels"),
    ('{"cmd": "ping", "id": ' + "[" * 500 + "]" * 500 + "}", "nested deeper"),
    (b'{"cmd": "ping", "id": "\xc3\x28"}', "command is not UTF-8 text"),
    ('{"cmd": "ping", "id": "' + "x" * (10 << 20) + '"}', "command is longer than 65536 bytes"),
    ('{"cmd": "run", "level": "naive", "M": NaN, "N": 1, "K": 1}', "M must be a whole number"),
    ('{"cmd": "telemetry", "hz": Infinity}', "telemetry hz"),
    ('{"cmd": "run", "level": "naive", "M": 1, "N": 1, "K": 1, "params": {"BLOCK": 1e400}}',
     "params must map"),
])
def test_commands_are_read_within_the_same_limits(line, message):
    with pytest.raises(ProtocolError, match=re.escape(message)):
        commands.parse_command(line)


def test_the_id_of_a_refused_command_is_found_when_it_can_be():
    assert commands.command_id('{"cmd": "dance", "id": 7}') == 7
    assert commands.command_id(b'{"cmd": "dance", "id": [1, {"a": 2}]}') == [1, {"a": 2}]
    for hopeless in ("{oops", "[1, 2]", b"\xff", '{"id": ' + "9" * 5000 + "}", "[" * 10**5):
        assert commands.command_id(hopeless) is None


def test_read_lines_holds_no_more_than_the_limit_of_a_long_line():
    stream = io.BytesIO(b"a" * 50 + b"\n" + b"b" * 1000 + b"\n" + b"c" * 30 + b"\n" + b"d" * 99)
    lines = list(protocol.read_lines(stream, max_bytes=40))
    assert [len(x) for x in lines] == [41 + 1, 41 + 1, 31, 41]  # cut to 41 (+ its newline)
    assert lines[2] == b"c" * 30 + b"\n" and not lines[3].endswith(b"\n")
    with pytest.raises(ProtocolError, match="longer than 40 bytes"):
        protocol.loads(lines[0], 40)
    assert protocol.loads(b'"' + b"x" * 38 + b'"\n', 40) == "x" * 38  # newline not counted


# ------------------------------------------------------------------ reader rules
# docs/protocol.md, "Reading a session file": one test per rule


def lines_file(tmp_path, *lines: str | bytes, end: bytes = b"\n", name="s.jsonl"):
    p = tmp_path / name
    raw = [x.encode() if isinstance(x, str) else x for x in lines]
    p.write_bytes(b"\n".join(raw) + end)
    return p


@pytest.mark.parametrize("first, message", [
    ("{oops", ":1: not JSON"),
    (protocol.dumps(RESULT), ':1: the first event must be "session"'),
    (protocol.dumps({k: v for k, v in HEADER.items() if k != "created"}),
     ':1: session event lacks "created"'),
    (b"\xff\xfe", ":1: not UTF-8"),
    ("[" * 5000, ":1: nested deeper"),
])
def test_rule_1_a_file_without_a_readable_header_is_refused(tmp_path, first, message):
    p = lines_file(tmp_path, first, protocol.dumps(RESULT))
    with pytest.raises(ProtocolError, match=re.escape(f"{p}{message}")):
        recording.read_session(p)
    with pytest.raises(ProtocolError, match="empty"):
        recording.read_session(lines_file(tmp_path, "", "  ", name="blank.jsonl"))
    with pytest.raises(ProtocolError, match="cannot open"):
        recording.read_session(tmp_path)  # a folder


def test_rule_2_a_newer_protocol_anywhere_refuses_the_file(tmp_path):
    later = protocol.dumps({**HEADER, "protocol": protocol.PROTOCOL_VERSION + 1})
    p = lines_file(tmp_path, protocol.dumps(HEADER), protocol.dumps(RESULT), later)
    newer = protocol.PROTOCOL_VERSION + 1
    with pytest.raises(protocol.NewerProtocol, match=rf"s\.jsonl:3: protocol {newer} is newer"):
        recording.read_session(p)


def test_rule_3_damaged_lines_are_skipped_named_and_counted(tmp_path):
    bad = [
        b"\xff\xfe not utf-8",
        b'{"type": "info", "t": 1, "message": "' + b"x" * (protocol.MAX_EVENT_BYTES + 1) + b'"}',
        b"[" * 40 + b"]" * 40,
        b'{"type": "info", "t": 1, "message": "x", "n": ' + b"1" * 200 + b"}",
        b"not json",
        b"[1, 2]",
        b'{"t": 1}',
        b'{"type": "info"}',
        protocol.dumps({**RESULT, "M": "8"}).encode(),
        protocol.dumps({k: v for k, v in RESULT.items() if k != "verified"}).encode(),
    ]
    lines = [protocol.dumps(HEADER).encode()]
    for b in bad:
        lines += [b, protocol.dumps(RESULT).encode()]
    p = lines_file(tmp_path, *lines)
    s = recording.read_session(p)
    assert s.results == [of(RESULT)] * len(bad)  # every good line was read
    assert s.skipped_count == len(bad)
    assert [e.line for e in s.skipped] == list(range(2, 2 + 2 * len(bad), 2))
    reasons = [e.reason for e in s.skipped]
    for i, part in enumerate(["not UTF-8", "longer than", "nested deeper", "an integer of 200",
                              "not JSON", "JSON object", 'string "type"', 'number "t"',
                              '"M" must be int', 'lacks "verified"']):
        assert part in reasons[i], (i, reasons[i])
    assert s.problem.startswith(f"{p}:2: not UTF-8")
    assert f"and {len(bad) - 1} more unreadable lines" in s.problem
    # a file of garbage keeps only the first errors, but counts them all
    p = lines_file(tmp_path, protocol.dumps(HEADER), *["garbage"] * 500, name="g.jsonl")
    s = recording.read_session(p)
    assert s.skipped_count == 500 and len(s.skipped) == 20 and len(s.events) == 1


def test_rule_4_a_cut_last_line_is_reported_and_the_rest_kept(tmp_path):
    cut = protocol.dumps(RESULT)[:25]
    p = lines_file(tmp_path, protocol.dumps(HEADER), protocol.dumps(RESULT), cut, end=b"")
    s = recording.read_session(p)
    assert s.results == [of(RESULT)]
    assert s.skipped[0].line == 3 and "a cut line: no newline at its end" in s.problem
    # a complete last line without its newline is read
    p = lines_file(tmp_path, protocol.dumps(HEADER), protocol.dumps(RESULT), end=b"",
                   name="whole.jsonl")
    s = recording.read_session(p)
    assert s.results == [of(RESULT)] and s.problem is None


def test_rule_5_a_file_appended_after_a_cut_line_is_read_in_both_parts(tmp_path):
    from gemmscope.app.core.replay import timeline
    from gemmscope.kernels.protocol.session_file import SessionWriter

    p = lines_file(tmp_path, protocol.dumps(HEADER), protocol.dumps(RESULT),
                   protocol.dumps(RESULT)[:30], end=b"")
    writer = SessionWriter(p)  # a live session appended to the crash-cut file
    second = {**RESULT, "t": 0.5, "level": "wmma"}
    for ev in ({**HEADER, "t": 0.0}, second):
        writer.write_line(protocol.dumps(ev))
    writer.close()
    s = recording.read_session(p)
    # the second header is a runner's start later in the session: a restart event
    assert [e.type for e in s.events] == ["session", "result", "restart", "result"]
    assert [r.level for r in s.results] == ["naive", "wmma"]
    assert s.skipped_count == 1 and s.skipped[0].line == 3 and "not JSON" in s.problem
    assert timeline(s.events) == [0.0, 1.5, 1.5, 2.0]  # the second part follows the first


def test_rule_6_non_finite_numbers_read_as_null(tmp_path):
    lines = [protocol.dumps(HEADER),
             '{"type": "result", "t": 2, "level": "naive", "M": 8, "N": 8, "K": 8, '
             '"dtype": "fp32", "median_ms": 0.01, "tflops": 0.1, "verified": true, '
             '"rel_err": NaN, "repeats": 3, "pct_of_peak": Infinity, "energy_j": 1e400, '
             '"avg_power_w": -Infinity}',
             '{"type": "result", "t": 3, "level": "naive", "M": 8, "N": 8, "K": 8, '
             '"dtype": "fp32", "median_ms": NaN, "tflops": 1e999, "verified": true, '
             '"rel_err": 0, "repeats": 3}']
    s = recording.read_session(lines_file(tmp_path, *lines))
    [r] = s.results
    assert r.rel_err is None and r.pct_of_peak is None
    assert r.energy_j is None and r.avg_power_w is None
    assert s.skipped[0].line == 3 and '"median_ms" must be' in s.problem


def test_rule_7_optional_fields_of_a_wrong_type_read_as_null(tmp_path):
    header = {**HEADER, "device": "a string", "catalog": [
        {"id": "naive", "title": 5, "order": "first", "params": {"BLOCK": "32", "X": 4},
         "block": "32x32", "tile": [32, "32"]},
        {"title": "no id"}, "not an entry", {"id": 7}],
        "levels": {"naive": {"source": "x.cu", "sha256": "ab"}, "bad": [1], "worse": 3}}
    result = {**RESULT, "regs": "many", "pct_of_peak": "50", "throttled": ["SwPowerCap", 5],
              "reference": 3, "energy_j": True, "params": {"TM": "8", "TN": 8},
              "sm_clock_mhz_avg": [1980]}
    error = {"type": "error", "t": 3, "kind": "launch", "message": "", "level": 5, "M": "8"}
    telemetry = {"type": "telemetry", "t": 4, "power_w": "700", "reasons": "SwPowerCap"}
    s = recording.read_session(lines_file(
        tmp_path, *(protocol.dumps(e) for e in (header, result, error, telemetry))))
    assert s.problem is None
    h = s.header
    assert h.device is None and h.levels == {"naive": rec.SourceRef(source="x.cu", sha256="ab")}
    [entry] = h.catalog
    assert entry == rec.CatalogEntry(id="naive", params={"X": 4}, tile=[32])
    r = s.results[0]
    assert r.regs is None and r.pct_of_peak is None and r.reference is None
    assert r.throttled == ("SwPowerCap",) and r.energy_j is None
    assert r.params == {"TN": 8} and r.sm_clock_mhz_avg is None
    e = s.errors[0]
    assert e.message == "" and e.level is None and e.M is None
    [samples] = s.telemetry.values()
    assert np.isnan(samples.column("power_w")).all() and samples.reason_sets == [None]


def test_rule_8_unknown_types_pass_through_and_unknown_fields_are_ignored(tmp_path):
    future = {"type": "future", "t": 5, "anything": {"nested": [1, "two", None]}}
    s = recording.read_session(lines_file(
        tmp_path, protocol.dumps(HEADER), protocol.dumps({**RESULT, "new_field": "kept"}),
        protocol.dumps(future)))
    assert s.results[0] == of(RESULT) and s.problem is None
    assert s.events[-1] == rec.Other("future", 5.0, {"anything": {"nested": [1, "two", None]}})
