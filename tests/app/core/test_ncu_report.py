"""A user's Nsight Compute report read through ncu_report (app/core/ncu_report.py), with the
module's stand-in (tests/support/fake_ncu_report.py) made from the H200's register_2d
pages: each kernel's launch, SASS, per-instruction counters, stall reasons, source lines
and roofline numbers; what it says without the package and on files it cannot read."""

from __future__ import annotations

import csv
import io
import json

import fake_ncu_report as fake
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemmscope.app.core import ncu_report as nr
from gemmscope.app.core.store import SessionStore


@pytest.fixture
def module(monkeypatch):
    fake.install(monkeypatch)


def page() -> tuple[list[str], list[list[str]], int]:
    rows = list(csv.reader(io.StringIO((fake.PAGES / "register_2d_sass.csv").read_text())))
    body = [r for r in rows[2:] if r and r[0].startswith("0x")]
    return rows[1], body, min(int(r[0], 16) for r in body)


def test_without_the_package_it_says_which_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ncu_report", None)
    assert nr.missing() is not None and "pip install 'gemmscope[ncu]'" in nr.missing()
    path = fake.write_report(tmp_path / "r.ncu-rep", [fake.h200_kernel()])
    with pytest.raises(nr.ReportError, match=r"pip install 'gemmscope\[ncu\]'"):
        nr.read_in_process(path)


def test_a_kernel_reads_with_its_launch_and_resources(tmp_path, module):
    path = fake.write_report(tmp_path / "mine.ncu-rep", [fake.h200_kernel()])
    report = nr.read_in_process(path)
    [k] = report.kernels
    lk, m = k.kernel, fake.LAUNCH
    assert k.key == "mine.ncu-rep #1" and lk.tool == "ncu-report"
    assert lk.kernel == fake.h200_kernel()["name"]
    assert lk.grid == [m["launch__grid_dim_x"], m["launch__grid_dim_y"], m["launch__grid_dim_z"]]
    assert lk.block == [m["launch__block_dim_x"], 1, 1]
    assert lk.regs == m["launch__registers_per_thread"]
    assert lk.smem_static_bytes == m["launch__shared_mem_per_block_static"]
    assert lk.ms == pytest.approx(m["gpu__time_duration.sum"] * 1e-6)


def test_every_instruction_carries_its_counts_stalls_and_source_line(tmp_path, module):
    report = nr.read_in_process(fake.write_report(tmp_path / "r.ncu-rep", [fake.h200_kernel()]))
    [k] = report.kernels
    head, body, base = page()
    executed = head.index("Instructions Executed")
    expected = {int(r[0], 16) - base: int(r[executed].replace(",", "")) for r in body}
    assert k.kernel.sass.count("*/ ") == len(body)
    got = {row.offset: row.inst_executed for row in k.lines.lines}
    assert {o: v for o, v in got.items() if v} == {o: v for o, v in expected.items() if v}
    stall_cols = [c for c in head if c.startswith("stall_") and not c.endswith("(Not Issued)")]
    for row in k.lines.lines:
        r = next(r for r in body if int(r[0], 16) - base == row.offset)
        for reason, n in (row.stalls or {}).items():
            assert n == int(r[head.index("stall_" + reason)].replace(",", ""))
    assert stall_cols and k.lines.stall_totals
    # the source: the file as the report holds it, and the SASS lines under its lines
    assert list(k.kernel.sources) == ["register_2d.cu"]
    assert k.kernel.sources["register_2d.cu"] == (fake.places.REPO / fake.CU).read_text()
    assert "//## File \"register_2d.cu\", line " in k.kernel.sass
    assert any(row.source for row in k.lines.lines)


RATE = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"


@pytest.mark.parametrize("counts", ["rates", "sums"])
def test_its_roofline_numbers_come_from_its_metrics(tmp_path, module, counts):
    m = dict(fake.LAUNCH)
    cycles = m["smsp__cycles_elapsed.avg"]
    ffma, fadd = m[RATE.format("ffma")] * cycles, m[RATE.format("fadd")] * cycles
    if counts == "sums":  # another set's form: the counts themselves, no rates
        for op, n in (("ffma", ffma), ("fadd", fadd)):
            del m[RATE.format(op)]
            m[RATE.format(op).removesuffix(".per_cycle_elapsed")] = n
    kernel = fake.h200_kernel()
    kernel["metrics"] = m
    report = nr.read_in_process(fake.write_report(tmp_path / "r.ncu-rep", [kernel]))
    [k] = report.kernels
    flops = 2 * ffma + fadd
    assert k.kernel.flops == pytest.approx(flops)
    assert k.kernel.dram_bytes == m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
    assert k.precision == "fp32"
    assert report.tflops(k) == pytest.approx(flops / (m["gpu__time_duration.sum"] * 1e-9)
                                             / 1e12)
    from gemmscope.app.core.roofline_data import roofline_data

    store = SessionStore()
    store.set_report(report)
    [point] = [p for p in roofline_data(store).points if p.level == k.key]
    assert point.ai == pytest.approx(flops / k.kernel.dram_bytes)


@pytest.mark.parametrize(("unit", "per_ms"), [("ns", 1e-6), ("nsecond", 1e-6),
                                              ("us", 1e-3), ("msecond", 1.0)])
def test_its_time_is_read_in_the_unit_the_report_names(tmp_path, module, unit, per_ms):
    kernel = fake.h200_kernel()
    kernel["units"] = {"gpu__time_duration.sum": unit}
    [k] = nr.read_in_process(fake.write_report(tmp_path / "r.ncu-rep", [kernel])).kernels
    assert k.kernel.ms == pytest.approx(fake.LAUNCH["gpu__time_duration.sum"] * per_ms)


def test_its_main_loop_is_found_from_branches_to_addresses(tmp_path, module):
    # the module gives each instruction's text with branch targets as absolute addresses
    [k] = nr.read_in_process(fake.write_report(tmp_path / "r.ncu-rep",
                                               [fake.h200_kernel()])).kernels
    assert k.kernel.main_loop is not None
    start, end = k.kernel.main_loop
    assert 0 < start < end
    assert "BRA `(.L_x_" in k.kernel.sass  # a branch inside the kernel names its label


def test_a_kernel_without_flop_counts_has_no_point_and_a_note(tmp_path, module):
    bare = fake.h200_kernel()
    bare["metrics"] = {n: v for n, v in bare["metrics"].items() if "sass_thread" not in n}
    store = SessionStore()
    store.set_report(nr.read_in_process(fake.write_report(tmp_path / "r.ncu-rep", [bare])))
    from gemmscope.app.core.roofline_data import roofline_data

    data = roofline_data(store)
    assert not data.points and any("no roofline point for r.ncu-rep #1" in n
                                   for n in data.notes)


@pytest.mark.parametrize(("name", "content", "words"), [
    ("r.txt", "{}", "not an Nsight Compute report"),
    ("r.ncu-rep", "garbage, not a report", "holds no profiled kernel"),
])
def test_files_it_cannot_read_are_said_in_words(tmp_path, module, name, content, words):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(nr.ReportError, match=words):
        nr.read_in_process(path)


def test_a_missing_or_too_large_file_is_refused_before_it_is_opened(tmp_path, module,
                                                                    monkeypatch):
    with pytest.raises(nr.ReportError, match="cannot read"):
        nr.read_in_process(tmp_path / "none.ncu-rep")
    path = fake.write_report(tmp_path / "big.ncu-rep", [fake.h200_kernel()])
    monkeypatch.setattr(nr, "MAX_REPORT_BYTES", 100)
    opened = []
    monkeypatch.setattr(fake, "load_report", lambda f: opened.append(f))
    with pytest.raises(nr.ReportError, match="over the"):
        nr.read_in_process(path)
    assert opened == []


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(max_size=3000), sass=st.text(max_size=400))
def test_hostile_names_and_instructions_stay_bounded_text(tmp_path, module, name, sass):
    k = fake.h200_kernel()
    k["name"] = name
    first = next(iter(k["sass"]))
    k["sass"][first] = sass
    path = tmp_path / "h.ncu-rep"
    path.write_text(json.dumps({"stand_in_ncu_report": 1, "kernels": [k]}))
    [got] = nr.read_in_process(path).kernels
    assert len(got.kernel.kernel) <= 2000
    instructions = [ln for ln in got.kernel.sass.splitlines() if ln.startswith("/*")]
    assert len(instructions) == len(k["sass"])
    assert all(len(ln) < 200 for ln in instructions)
