"""A recording's time is bounded by its bytes whatever its lines are (issue 45, held out):
10 MB of empty lines took 20 s and 1 MB of short junk lines 12 s (a good 48 MB recording:
1.5 s), each line costing steps of Python. A run of empty lines is now passed over in one
scan, and a file is not read past MAX_UNREADABLE_LINES unreadable lines (said as a cut)."""

from __future__ import annotations

import io

import places
from hypothesis import given, settings
from hypothesis import strategies as st

from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.records import Result

PLAIN = places.FIXTURES / "h200-ceilings.jsonl"

_LINE = st.one_of(st.just(b""), st.just(b"x"), st.just(b'{"type":"telemetry","t":1}'),
                  st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")))


@settings(max_examples=200)
@given(st.lists(_LINE, max_size=60), st.booleans())
def test_the_lines_read_are_the_non_empty_ones_with_their_numbers(lines, skipping):
    data = b"\n".join(lines) + b"\n"
    skip = {b"telemetry"} if skipping else None
    got = [(n, raw) for n, raw, _ in recording._lines(io.BytesIO(data), None, len(data), skip)]
    want = [(n, raw + b"\n") for n, raw in enumerate(lines, 1) if raw
            and not (skipping and raw == b'{"type":"telemetry","t":1}')]
    assert got == want  # no empty line is handed on: none costs a step


def test_a_file_of_empty_lines_reads_as_its_events(tmp_path):
    text = PLAIN.read_bytes()
    header, rest = text.split(b"\n", 1)
    path = tmp_path / "blank.jsonl"
    path.write_bytes(header + b"\n" + b"\n" * 3_000_000 + rest)
    got = recording.read_session(path)
    assert len(got.events) == len(recording.read_session(PLAIN).events)
    assert got.skipped_count == 0


def test_a_file_of_junk_lines_is_read_to_the_bound_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(recording, "MAX_UNREADABLE_LINES", 50)
    text = PLAIN.read_bytes()
    header, rest = text.split(b"\n", 1)
    path = tmp_path / "junk.jsonl"
    path.write_bytes(header + b"\n" + b"x\n" * 60 + rest)
    for only in (None, (Result,)):
        got = recording.read_session(path, only=only)
        assert not got.results  # after the junk: not read
        said = [str(e) for e in got.skipped if "not read past" in str(e)]
        assert len(said) == 1 and ":51:" in said[0], said
