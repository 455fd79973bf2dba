"""The report's reader (``read_session(only=...)``): it passes over the whole lines of the
types it was not asked for without decoding them, and finds every result, error and
damaged line the whole reader finds, at the same line numbers, whatever the chunking, in a
plain or a gzip file; a line of a skipped type before the header is still refused."""

from __future__ import annotations

import gzip

import pytest
import synthetic_session

from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.events import ProtocolError, dumps

ONLY = (rec.Result, rec.Error)


def damaged_lines() -> tuple[list[str], list[int]]:
    """The synthetic session's lines with damage among them, and the numbers of the lines
    both readers must name (a cut sample and a result that is not JSON)."""
    lines = [dumps(e) for e in synthetic_session.events()]
    samples = [i for i, line in enumerate(lines) if line.startswith('{"type":"telemetry"')]
    results = [i for i, line in enumerate(lines) if line.startswith('{"type":"result"')]
    assert len(samples) > 20 and len(results) > 4
    lines[samples[10]] = lines[samples[10]][:-7]  # cut: no closing brace
    lines[results[1]] = lines[results[1]].replace('{"type":"result"', '{"type":"res\\u0075lt"')
    lines[results[2]] = lines[results[2]].replace('{"type":"result"', ' {"type":"result"')
    lines.insert(samples[20], "")  # a blank line among the samples
    lines.insert(samples[5], '{"type":"result","t":2,"oops"}')
    lines.insert(samples[3], '{"type":"some_future_event","t":1.5,"x":[1,2]}')
    # the numbers (from 1) of the two damaged lines, after the insertions above them
    cut = samples[10] + 1 + 2
    oops = samples[5] + 1 + 1
    return lines, sorted([cut, oops])


@pytest.mark.parametrize("chunk", [recording.CHUNK_BYTES, 97, 4096])
@pytest.mark.parametrize("packed", [False, True])
def test_the_report_reader_finds_what_the_whole_reader_finds(tmp_path, monkeypatch, chunk,
                                                             packed):
    monkeypatch.setattr(recording, "CHUNK_BYTES", chunk)
    lines, damaged = damaged_lines()
    data = "".join(line + "\n" for line in lines).encode()
    path = tmp_path / "s.jsonl"
    if packed:  # two gzip members, as files appended to one another are
        half = data.index(b"\n", len(data) // 2) + 1
        data = gzip.compress(data[:half], mtime=0) + gzip.compress(data[half:], mtime=0)
    path.write_bytes(data)
    whole = recording.read_session(path)
    report = recording.read_session(path, only=ONLY)
    assert report.header == whole.header
    assert report.results == whole.results and len(report.results) > 4
    assert report.errors == whole.errors and report.errors
    assert all(isinstance(e, rec.Session | rec.Result | rec.Error) for e in report.events)
    assert [e.line for e in report.skipped] == [e.line for e in whole.skipped] == damaged


def test_the_report_reader_passes_over_a_skipped_type_unread(tmp_path):
    header = dumps(synthetic_session.header())
    sample = '{"type":"telemetry","t":"soon"}'  # whole, so not read
    path = tmp_path / "s.jsonl"
    path.write_text(f"{header}\n{sample}\n{sample}\n")
    assert recording.read_session(path).skipped_count == 2
    assert recording.read_session(path, only=ONLY).skipped_count == 0


@pytest.mark.parametrize("first", ['{"type":"telemetry","t":0.5}', '{"type":"build","t":0}'])
def test_a_skipped_type_before_the_header_is_still_refused(tmp_path, first):
    path = tmp_path / "s.jsonl"
    path.write_text(f"\n{first}\n{dumps(synthetic_session.header())}\n")
    with pytest.raises(ProtocolError, match=r"s\.jsonl:2: "):  # not a session
        recording.read_session(path, only=ONLY)


@pytest.mark.parametrize("chunk", [recording.CHUNK_BYTES, 700])
def test_a_line_too_long_is_named_by_both_readers_whatever_its_type(tmp_path, monkeypatch,
                                                                    chunk):
    from gemmscope.kernels.protocol import decoding

    lines = [dumps(e) for e in synthetic_session.events()]
    limit = max(map(len, lines)) + 100
    for module in (recording, decoding):  # a smaller bound: the same rule, a smaller file
        monkeypatch.setattr(module, "MAX_EVENT_BYTES", limit)
    monkeypatch.setattr(recording, "CHUNK_BYTES", chunk)
    build = '{"type":"build","t":1.0,"level":"naive","sass":"' + "x" * (limit + 500) + '"}'
    sample = '{"type":"telemetry","t":1.0,"n":"' + "y" * limit + '"}'
    lines[5:5] = [build, sample[:limit - 2] + '"}']  # the second one just short enough
    lines[9:9] = [sample]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    whole = recording.read_session(path)
    report = recording.read_session(path, only=ONLY)
    assert [e.line for e in report.skipped] == [e.line for e in whole.skipped][:2] == [6, 10]
    assert all(f"longer than {limit} bytes" in e.reason for e in report.skipped)
    assert report.results == whole.results
