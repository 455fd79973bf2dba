"""`gemmscope record --ncu` on the references (kernels/profile/ncu_reference.py), with the
stand-in runner and the stand-in ncu (tests/support/fake_ncu.py): the library_kernel event
naming the kernel the library ran, its launch, resources and SASS, and what the event says
when ncu is missing, fails or prints what the reader does not know."""

from __future__ import annotations

import csv
import io
import shlex
import sys
from pathlib import Path

import fake_ncu
import places
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.models.ncu_compare import parse_number
from gemmscope.kernels.profile import ncu_reference as nr
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.plan import RunRequest
from gemmscope.kernels.toolchain.sass import op_class

RUNNER = shlex.join([sys.executable, str(places.FAKE_RUNNER), "--mode", "ok"])


def record(tmp_path: Path, ncu: str, *levels: str) -> tuple[int, recording.Session, str]:
    out = tmp_path / "rec.jsonl"
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "-l", ",".join(levels or ("register_2d",)),
                     "-s", "16", "-r", "2", "--telemetry-hz", "0", "--runner", RUNNER,
                     "--ncu", ncu, "--ncu-size", "64x32x16"],
                    stdout=io.StringIO(), stderr=err)
    return code, recording.read_session(out), err.getvalue()


def library_events(session: recording.Session) -> list:
    return [e for e in session.events if e.type == "library_kernel"]


def gemm_rows() -> tuple[list[str], list[list[str]]]:
    """The fixture page's rows of the GEMM (the second kernel), read with the csv module."""
    rows = list(csv.reader(io.StringIO(fake_ncu.LIBRARY_PAGE.read_text())))
    starts = [i for i, r in enumerate(rows) if r and r[0] == "Kernel Name"]
    part = rows[starts[1]:]
    return part[1], [r for r in part[2:] if r and r[0].startswith("0x")]


def test_record_names_the_kernel_with_the_most_time_and_its_launch(tmp_path):
    fake = fake_ncu.write_fake_ncu(tmp_path / "ncu", log=tmp_path / "log")
    code, session, err = record(tmp_path, str(fake))
    assert code == 0, err
    [ev] = library_events(session)
    gemm = max(fake_ncu.LIBRARY_KERNELS, key=lambda k: parse_number(k["gpu__time_duration.sum"]))
    assert ev.level == "cublas_fp32"  # register_2d's reference, compared by default
    assert (ev.M, ev.N, ev.K, ev.status) == (64, 32, 16, "ok")
    # the GEMM, listed second by ncu, not the first-listed reduction
    assert ev.kernel == gemm["Kernel Name"] != fake_ncu.LIBRARY_KERNELS[0]["Kernel Name"]
    assert [k.name for k in ev.kernels] == [k["Kernel Name"] for k in fake_ncu.LIBRARY_KERNELS]
    assert ev.grid == [int(x) for x in gemm["Grid Size"].strip("()").split(",")]
    assert ev.block == [int(x) for x in gemm["Block Size"].strip("()").split(",")]
    assert ev.threads_per_block == ev.block[0] * ev.block[1] * ev.block[2]
    assert ev.regs == parse_number(gemm["launch__registers_per_thread"])
    assert ev.smem_dynamic_bytes == parse_number(gemm["launch__shared_mem_per_block_dynamic"])
    assert ev.smem_static_bytes == parse_number(gemm["launch__shared_mem_per_block_static"])
    assert ev.ms == pytest.approx(parse_number(gemm["gpu__time_duration.sum"]) * 1e-6)
    # the profiled range: the reference's call only, after a warm-up outside it
    [run] = [c for c in fake_ncu.logged_commands(tmp_path / "log") if "cublas_fp32" in c]
    assert run[run.index("--profile-from-start") + 1] == "off"
    assert run[-1] == "--profiled-range"
    assert session.events.index(ev) > session.events.index(session.results[-1])


def test_the_sass_and_executed_mix_are_those_of_the_gemm_on_the_page(tmp_path):
    fake = fake_ncu.write_fake_ncu(tmp_path / "ncu")
    code, session, err = record(tmp_path, str(fake))
    assert code == 0, err
    [ev] = library_events(session)
    head, rows = gemm_rows()
    assert ev.sass is not None and ev.sass.count("*/ ") == len(rows)
    executed = head.index("Instructions Executed")
    expected: dict[str, float] = {}
    for r in rows:
        mnemonic = r[1].split()[1] if r[1].split()[0].startswith("@") else r[1].split()[0]
        cls = op_class(mnemonic)
        expected[cls] = expected.get(cls, 0) + int(r[executed].replace(",", ""))
    assert {c: v for c, v in ev.executed_mix.items() if v} == \
        {c: v for c, v in expected.items() if v}
    assert ev.instruction_mix["kernel"]["FFMA"] == sum(
        1 for r in rows if "FFMA" in r[1])
    # the per-line counters of the same kernel, for the Code view's heat map
    [lines] = [e for e in session.events if e.type == "source_counters"]
    assert lines.level == "cublas_fp32" and lines.kernel == ev.kernel
    assert "most GPU time" in lines.reason


@pytest.mark.parametrize(("mode", "status", "words"), [
    ("fail", "refused", "ERR_NVGPUCTRPERM"),
    ("no_report", "failed", "no report"),
    ("raw_garbled", "unreadable", "raw page"),
])
def test_a_failed_profile_says_why_and_records_no_numbers(tmp_path, mode, status, words):
    fake = fake_ncu.write_fake_ncu(tmp_path / "ncu", mode=mode)
    code, session, err = record(tmp_path, str(fake))
    [ev] = library_events(session)
    assert ev.status == status and words in ev.reason
    assert (ev.kernel, ev.grid, ev.regs, ev.sass) == (None, None, None, None)
    assert code == 1 and "cublas_fp32" in err


def test_without_ncu_the_event_says_it_is_missing(tmp_path):
    code, session, _err = record(tmp_path, str(tmp_path / "no-such-ncu"))
    [ev] = library_events(session)
    assert ev.status == "missing" and "not found" in ev.reason and ev.kernel is None
    assert code == 1


def test_the_references_of_a_plan_are_the_asked_and_the_compared_ones_once():
    s = Shape(8, 8, 8)
    runs = [RunRequest("register_2d", s, 2), RunRequest("cublas_fp16", s, 2),
            RunRequest("wmma", s, 2), RunRequest("naive", s, 2),
            RunRequest("smem_tiled", s, 2, compare=False)]
    assert nr.references_of(runs) == ["cublas_fp32", "cublas_fp16"]
    with pytest.raises(ValueError, match="is a level"):
        nr.profile_command("ncu", "register_2d", 8, 8, 8, Path("r"))


@given(st.lists(st.integers(0, 2**31), min_size=3, max_size=3))
def test_launch_dims_read_back_from_ncus_text(d):
    assert nr.dims(f"({d[0]}, {d[1]}, {d[2]})") == d


@given(st.text(max_size=30))
def test_anything_else_is_no_dims(text):
    parts = text.strip().strip("()").split(",")
    if len(parts) == 3 and all(p.strip().isdigit() and p.strip().isascii() for p in parts):
        return
    assert nr.dims(text) is None


@given(st.lists(st.one_of(st.none(), st.floats(0, 1e6)), min_size=1, max_size=8))
def test_the_main_kernel_has_the_most_time(times):
    kernels = [{"name": str(i), "ms": t} for i, t in enumerate(times)]
    i = nr.main_kernel(kernels)
    timed = [t for t in times if t is not None]
    assert (times[i] == max(timed)) if timed else i == 0


def test_an_event_with_wrong_fields_loads_with_them_dropped():
    ev = of({"type": "library_kernel", "t": 1, "level": "cublas_fp32", "M": 8, "N": 8,
             "K": 8, "tool": "ncu", "grid": [1, 2, 3, 4], "regs": -1, "ms": "fast",
             "kernels": [{"name": "k", "block": [1, 1, 1, 1]}] * 40, "future": True})
    assert ev.grid == [1, 2, 3] and ev.regs is None and ev.ms is None
    assert len(ev.kernels) == 32 and ev.kernels[0].block == [1, 1, 1]
