"""A user's .ncu-rep is read in a child process (app/core/ncu_report_process.py): the same
records as a read in this process, and a native reader that crashes, hangs or answers too
much ends only the child, said in words. With NVIDIA's real module installed (the ncu
extra), a report made on the H200 reads with its time, FLOPs, main loop and lines."""

from __future__ import annotations

import gzip
import importlib.util
import os

import fake_ncu_report as fake
import places
import pytest

from gemmscope.app.core import ncu_report as nr
from gemmscope.app.core import ncu_report_process as proc

STAND_IN = "fake_ncu_report"  # the child imports it from the test's path
H200_REPORT = places.FIXTURES / "ncu_report" / "register_2d_h200.ncu-rep.gz"


def test_the_child_gives_the_records_a_read_in_this_process_gives(tmp_path, monkeypatch):
    path = fake.write_report(tmp_path / "mine.ncu-rep",
                             [fake.h200_kernel(), fake.h200_kernel()])
    child = proc.read_report(path, module=STAND_IN)
    fake.install(monkeypatch)
    here = nr.read_in_process(path)
    assert child == here  # every field of every kernel's records, and nothing left out
    assert [k.key for k in child.kernels] == ["mine.ncu-rep #1", "mine.ncu-rep #2"]


def test_a_reader_that_crashes_ends_only_the_child(tmp_path):
    path = fake.write_hostile(tmp_path / "crash.ncu-rep", fake.CRASH)
    with pytest.raises(nr.ReportError, match=r"crashed reading crash\.ncu-rep \(SIGSEGV\)"):
        proc.read_report(path, module=STAND_IN)


def test_a_reader_that_hangs_is_stopped_after_the_timeout(tmp_path):
    path = fake.write_hostile(tmp_path / "hang.ncu-rep", fake.HANG)
    with pytest.raises(nr.ReportError, match=r"still reading hang\.ncu-rep after 3 s; it "
                                             r"was stopped"):
        proc.read_report(path, module=STAND_IN, timeout_s=3)


def test_an_answer_over_the_bound_is_refused(tmp_path, monkeypatch):
    path = fake.write_report(tmp_path / "big.ncu-rep", [fake.h200_kernel()])
    monkeypatch.setattr(proc, "MAX_OUTPUT_BYTES", 1000)
    with pytest.raises(nr.ReportError, match="over the"):
        proc.read_report(path, module=STAND_IN)


def test_the_readers_refusal_comes_back_in_its_words(tmp_path):
    bad = tmp_path / "bad.ncu-rep"
    bad.write_text("not a report")
    with pytest.raises(nr.ReportError, match="holds no profiled kernel"):
        proc.read_report(bad, module=STAND_IN)


def test_a_file_is_refused_before_any_child_starts(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(proc.subprocess, "run", lambda *a, **k: started.append(a))
    with pytest.raises(nr.ReportError, match="not an Nsight Compute report"):
        proc.read_report(tmp_path / "r.txt", module=STAND_IN)
    with pytest.raises(nr.ReportError, match="cannot read"):
        proc.read_report(tmp_path / "none.ncu-rep", module=STAND_IN)
    monkeypatch.setitem(__import__("sys").modules, "ncu_report", None)
    (tmp_path / "r.ncu-rep").write_text("x")
    with pytest.raises(nr.ReportError, match=r"pip install 'gemmscope\[ncu\]'"):
        proc.read_report(tmp_path / "r.ncu-rep")
    assert started == []


@pytest.mark.skipif(importlib.util.find_spec("ncu_report") is None,
                    reason="NVIDIA's ncu_report module (the ncu extra) is not installed")
def test_a_report_made_on_the_h200_reads_with_time_flops_main_loop_and_lines(tmp_path):
    # `ncu --set full --import-source yes -k regex:register_2d -c 1` of
    # `python -m gemmscope.kernels.engine.launch register_2d 1024 1024 1024` (2026-12-01)
    path = tmp_path / "register_2d.ncu-rep"
    path.write_bytes(gzip.decompress(H200_REPORT.read_bytes()))
    report = proc.read_report(path)
    [k] = report.kernels
    lk = k.kernel
    assert "sgemm_register_2d" in lk.kernel and lk.grid == [8, 8, 1] and lk.regs == 152
    assert 0.05 < lk.ms < 5  # one launch at 1024^3, under the profiler's clock control
    assert lk.flops == pytest.approx(2 * 1024 ** 3, rel=1e-3) and k.precision == "fp32"
    assert lk.dram_bytes and lk.dram_bytes >= 2 * 4 * 1024 ** 2  # A and B read once at least
    assert lk.main_loop is not None and lk.executed_mix["FFMA"] == 1024 ** 3 / 32
    assert list(lk.sources) == ["register_2d.cu"]
    assert k.lines is not None and len(k.lines.lines) > 900
    assert k.lines.totals["inst_executed"] > 0 and k.lines.stall_totals
    assert os.path.getsize(path) > 1 << 20
