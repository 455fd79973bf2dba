"""The source_counters event at the protocol's edge: typed, bounded, non-finite numbers
as null, and an event without lines kept with its reason."""

from __future__ import annotations

import json

import msgspec
import pytest

from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol import source_counters as sc
from gemmscope.kernels.protocol.decoding import decode


def event(**over) -> dict:
    ev = {"type": "source_counters", "t": 1.5, "level": "register_2d", "M": 64, "N": 64,
          "K": 64, "tool": "ncu", "status": "ok", "fields": list(sc.FIELDS),
          "lines": [[16, "LDS.128 R24, [R11]", ["kernels/cuda/register_2d.cu", 44], 512,
                     7, 3, 1024, 512, 512, 8, {"mio": 4, "short_sb": 3}]]}
    ev.update(over)
    return ev


def read(ev: dict | str) -> rec.SourceCounters:
    got = decode(ev if isinstance(ev, str) else json.dumps(ev))
    assert isinstance(got, rec.SourceCounters)
    return got


def cells(line: sc.SassLine) -> list:
    """A line as the row it was written as (the source location as a list)."""
    out = list(msgspec.structs.astuple(line))
    out[2] = list(out[2]) if out[2] is not None else None
    return out


def test_a_well_formed_event_reads_back_unchanged_in_its_lines():
    ev = read(event())
    assert [cells(r) for r in ev.lines] == event()["lines"]
    assert ev.status == "ok" and ev.fields == list(sc.FIELDS)


@pytest.mark.parametrize("missing", ["level", "M", "tool", "status"])
def test_an_event_without_a_required_field_is_refused(missing):
    ev = event()
    del ev[missing]
    with pytest.raises(protocol.ProtocolError, match=missing):
        read(ev)


def test_an_unknown_status_is_refused():
    with pytest.raises(protocol.ProtocolError, match="status"):
        read(event(status="great"))


def test_non_finite_and_mistyped_numbers_read_as_null():
    line = ('{"type":"source_counters","t":1,"level":"x","M":1,"N":1,"K":1,"tool":"ncu",'
            '"status":"ok","fields":' + json.dumps(list(sc.FIELDS)) + ',"lines":[[0,"NOP",'
            'null,NaN,Infinity,1e400,"12",true,-Infinity,2,{"mio":NaN,"wait":3}]],'
            '"totals":{"stall_samples":NaN,"bogus":1},"seconds":"soon"}')
    ev = read(line)
    row = ev.lines[0]
    assert cells(row)[3:9] == [None] * 6
    assert row.smem_conflicts_n_way == 2
    assert row.stalls == {"wait": 3}
    assert ev.totals == {"stall_samples": None} and ev.seconds is None


def test_hostile_sizes_are_bounded():
    big = [[i * 16, "X" * 10_000, ["p" * 5000, 1], 1, 1, 0, 0, 0, 0, 0,
            {f"r{k}": k for k in range(200)}] for i in range(3)]
    rows = big + [[i * 16, "NOP"] for i in range(3, sc.MAX_LINES + 50)]
    ev = read(event(lines=rows, reason="r" * 50_000, command=["c" * 9000] * 500))
    assert len(ev.lines) == sc.MAX_LINES and ev.lines_unread == 50
    row = ev.lines[0]
    assert len(row.sass) == sc.MAX_SASS_CHARS
    assert len(row.source[0]) == sc.MAX_PATH_CHARS
    assert list(row.stalls.values()) == [199, 198, 197, 196]  # the largest four
    assert len(ev.reason) == sc.MAX_TEXT_CHARS
    assert len(ev.command) == 64 and all(len(c) == sc.MAX_TEXT_CHARS for c in ev.command)


def test_rows_without_an_integer_offset_are_dropped_and_counted():
    rows = [[16, "NOP"], ["0x10", "NOP"], [-4, "NOP"], "row", [], [True, "NOP"], [32]]
    ev = read(event(lines=rows))
    assert [r.offset for r in ev.lines] == [16, 32]
    assert ev.lines_unread == 5
    assert ev.lines[1].sass is None and ev.lines[1].stalls is None


def test_a_bad_source_location_reads_as_null():
    for bad in (["f.cu"], ["f.cu", "12"], [3, 4], "f.cu:12", ["f.cu", -1]):
        row = [0, "NOP", bad, 1, 0, 0, 0, 0, 0, 0, None]
        assert read(event(lines=[row])).lines[0].source is None


def test_rows_under_another_field_order_are_read_by_name():
    fields = ["stall_samples", "offset", "future_field", "sass"]
    ev = read(event(fields=fields, lines=[[9, 48, "x", "FFMA R1, R2, R3, R4"]]))
    row = ev.lines[0]
    assert row.offset == 48 and row.stall_samples == 9
    assert row.sass == "FFMA R1, R2, R3, R4" and row.inst_executed is None
    assert ev.fields == list(sc.FIELDS)  # as the reader now holds them


def test_lines_that_cannot_be_read_leave_the_event_without_lines_saying_why():
    no_offset = read(event(fields=["sass"], lines=[["NOP"]]))
    assert no_offset.lines is None and no_offset.status == "unreadable"
    assert "offset" in no_offset.reason
    not_a_list = read(event(lines={"0": "NOP"}))
    assert not_a_list.lines is None and not_a_list.status == "unreadable"


def test_an_event_without_lines_keeps_its_status_and_reason():
    ev = read(event(status="refused", lines=None,
                    reason="==ERROR== ERR_NVGPUCTRPERM - The user does not have permission"))
    assert ev.status == "refused" and ev.lines is None
    assert "ERR_NVGPUCTRPERM" in ev.reason
