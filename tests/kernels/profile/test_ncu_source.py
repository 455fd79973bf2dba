"""Nsight Compute's source page, read (kernels/profile/ncu_source.py) on real pages of the H200
(tests/fixtures/ncu_source/), and turned into a bounded source_counters event.

Expected numbers are read from the fixture files here with the csv module, not typed."""

from __future__ import annotations

import csv
import io

import places
import pytest

from gemmscope.kernels.profile import ncu_source_step as step
from gemmscope.kernels.profile.ncu_source import (
    COLUMNS,
    SourcePageError,
    parse_cuda_sass_page,
    parse_sass_page,
)
from gemmscope.kernels.protocol import source_counters as sc

PAGES = places.FIXTURES / "ncu_source"
FILES = ["kernels/cuda/register_2d.cu", "kernels/cuda/common.cuh"]


def fixture_rows(name: str) -> tuple[list[str], list[list[str]]]:
    """The header and the SASS rows of a --print-source sass page, read plainly."""
    rows = list(csv.reader(io.StringIO((PAGES / name).read_text())))
    header_at = next(i for i, r in enumerate(rows) if r[:2] == ["Address", "Source"])
    return rows[header_at], [r for r in rows[header_at + 1:] if r and r[0].startswith("0x")]


def cell(header: list[str], row: list[str], column: str) -> int:
    return int(row[header.index(column)].replace(",", ""))


@pytest.mark.parametrize("name", ["register_2d_sass.csv", "cp_async_sass.csv"])
def test_every_sass_row_is_read_at_its_offset_with_its_values(name):
    header, rows = fixture_rows(name)
    page = parse_sass_page((PAGES / name).read_text())
    assert len(page.lines) == len(rows)
    assert page.columns == COLUMNS  # ncu 2025/2026 gives every column read here
    base = min(int(r[0], 16) for r in rows)
    by_offset = {ln.offset: ln for ln in page.lines}
    for r in rows:
        line = by_offset[int(r[0], 16) - base]
        assert line.sass == r[1].strip()
        for field, column in COLUMNS.items():
            assert line.values[field] == cell(header, r, column)
        stalls = {h[len("stall_"):]: int(v) for h, v in zip(header, r, strict=True)
                  if h.startswith("stall_") and not h.endswith("(Not Issued)") and v != "0"}
        assert line.stalls == stalls
    assert page.kernel == next(csv.reader(io.StringIO((PAGES / name).read_text())))[1]


def test_register_2d_conflicts_sit_on_its_lds128_lines():
    header, rows = fixture_rows("register_2d_sass.csv")
    page = parse_sass_page((PAGES / "register_2d_sass.csv").read_text())
    excess = [ln for ln in page.lines if ln.values["smem_excess_wavefronts"]]
    want = [r for r in rows if cell(header, r, "L1 Wavefronts Shared Excessive")]
    assert len(excess) == len(want) > 0
    assert {ln.sass.split()[0] for ln in excess} == {r[1].split()[0] for r in want}
    assert all(ln.sass.startswith("LDS") for ln in excess)
    # excess is wavefronts minus ideal, line by line, as ncu printed them
    for ln in excess:
        v = ln.values
        assert v["smem_excess_wavefronts"] == v["smem_wavefronts"] - v["smem_wavefronts_ideal"]


def test_cuda_sass_page_gives_each_sass_row_the_source_line_it_sits_under():
    rows = list(csv.reader(io.StringIO((PAGES / "register_2d_cudasass.csv").read_text())))
    path = rows[0][1]
    assert path.endswith("/kernels/cuda/register_2d.cu")  # the profiling machine's path
    want: dict[int, int] = {}
    line = None
    for r in rows[3:]:
        if r[0].isdigit():
            line = int(r[0])
        elif r[0] == "" and r[2].startswith("0x"):
            want[int(r[2], 16)] = line
    base = min(want)
    where = parse_cuda_sass_page((PAGES / "register_2d_cudasass.csv").read_text(), FILES)
    assert where == {a - base: ("kernels/cuda/register_2d.cu", n) for a, n in want.items()}
    # the same instructions as the sass page, at the same offsets
    sass = parse_sass_page((PAGES / "register_2d_sass.csv").read_text())
    assert {ln.offset for ln in sass.lines} <= set(where)


def _section(path: str, function: str, header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerows([["File Path", path], ["Function Name", function], header, *rows])
    return out.getvalue()


def test_each_file_of_a_kernel_gives_its_rows_their_lines_and_the_next_kernel_none():
    # a Triton kernel's page has a section per file its lines come from (Triton's own
    # language/standard.py, then the kernel's .py), each naming the function again
    rows = list(csv.reader(io.StringIO((PAGES / "register_2d_cudasass.csv").read_text())))
    function, header, body = rows[1][1], rows[2], rows[3:]
    cut = next(i for i, r in enumerate(body) if r[0].isdigit() and i > len(body) // 2)
    lib, own = "/usr/lib/python3/triton/language/standard.py", "/home/me/k/triton_matmul.py"
    page = (_section(lib, function, header, body[:cut]) + _section(own, function, header,
                                                                   body[cut:])
            + _section(lib, function, header, body[:cut])  # the same kernel launched again
            + _section(own, "other_kernel", header, body[cut:]))  # another kernel
    where = parse_cuda_sass_page(page, ["triton_matmul.py"])
    base = min(int(r[2], 16) for r in body if r[0] == "" and r[2].startswith("0x"))
    expected: dict[int, tuple[str, int]] = {}
    for name, part in (("standard.py", body[:cut]), ("triton_matmul.py", body[cut:])):
        line = None
        for r in part:
            if r[0].isdigit():
                line = int(r[0])
            elif r[0] == "" and r[2].startswith("0x"):
                expected[int(r[2], 16) - base] = (name, line)
    assert where == expected
    assert {f for f, _ in where.values()} == {"standard.py", "triton_matmul.py"}


@pytest.mark.parametrize("text, says", [
    ("", "empty"),
    ("==PROF== Connected\nno kernels were profiled\n", "not a SASS source page"),
    ('"Address","Source","Foo"\n"0x10","NOP","1"\n', "none of the columns"),
    ('"Address","Source","Instructions Executed"\n"zz","NOP","1"\n', "no SASS line"),
])
def test_a_page_in_another_format_is_refused_with_the_reason(text, says):
    with pytest.raises(SourcePageError, match=says):
        parse_sass_page(text)
    with pytest.raises(SourcePageError, match="not a CUDA and SASS"):
        parse_cuda_sass_page(text)


def outcome(name: str = "register_2d_sass.csv") -> step.Outcome:
    page = parse_sass_page((PAGES / name).read_text())
    where = parse_cuda_sass_page((PAGES / "register_2d_cudasass.csv").read_text(), FILES)
    return step.Outcome(step.Status.OK, page=page, where=where, variant="scalar",
                        seconds=4.2, command=["ncu", "..."])


def test_the_event_keeps_counted_lines_and_totals_of_all():
    out = outcome("cp_async_sass.csv")
    ev = step.event("cp_async", 1024, 1024, 1024, out, 3.0, "2025.3.1.0")
    header, rows = fixture_rows("cp_async_sass.csv")
    assert ev["fields"] == list(sc.FIELDS) and ev["status"] == "ok"
    assert ev["lines_total"] == len(rows)
    counted = [r for r in rows if any(c not in ("0", "-", "") and not c.isalpha()
                                      for c in r[2:])]
    assert len(ev["lines"]) == len(counted)
    assert ev["idle_left_out"] == len(rows) - len(counted) and ev["cap_left_out"] == 0
    if len(counted) < len(rows):
        assert f"{len(rows) - len(counted)} lines with no count" in ev["cut"]
    for field, column in COLUMNS.items():
        if field != "smem_conflicts_n_way":
            assert ev["totals"][field] == sum(cell(header, r, column) for r in rows)
    assert ev["stall_totals"]["long_sb"] == sum(cell(header, r, "stall_long_sb") for r in rows)
    i = sc.INDEX
    for row in ev["lines"]:
        assert row[i["stalls"]] is None or len(row[i["stalls"]]) <= sc.MAX_REASONS


def test_over_the_line_cap_the_conflicting_and_most_sampled_lines_stay(monkeypatch):
    monkeypatch.setattr(sc, "MAX_LINES", 20)
    out = outcome()
    ev = step.event("register_2d", 1024, 1024, 1024, out, 3.0, None)
    i = sc.INDEX
    assert len(ev["lines"]) == 20
    assert "counted lines past the 20" in ev["cut"]
    counted = [ln for ln in out.page.lines if any(ln.values.values()) or ln.stalls]
    assert ev["cap_left_out"] == len(counted) - 20
    excess = [ln for ln in out.page.lines if ln.values["smem_excess_wavefronts"]]
    kept = {row[i["offset"]] for row in ev["lines"]}
    assert {ln.offset for ln in excess} <= kept  # 16 conflicting lines, all kept
    assert ev["totals"]["smem_excess_wavefronts"] == sum(
        ln.values["smem_excess_wavefronts"] for ln in out.page.lines)
    offsets = [row[i["offset"]] for row in ev["lines"]]
    assert offsets == sorted(offsets)  # still in address order
