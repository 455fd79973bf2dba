"""`gemmscope diff A B` and `gemmscope sass LEVEL`, without a GPU: compiled here by NVRTC
and nvdisasm from PyPI (skipped, with the reason, where they are missing), or read from a
recording's build events (--file); exit 2 saying what is missing."""

from __future__ import annotations

import io

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.toolchain import build_event, cubin, nvrtc, sass

MISSING = build_event.nvrtc_missing() or sass.nvdisasm_missing()
needs_tools = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@needs_tools
def test_diff_naive_coalesced_shows_the_changed_lines_and_resources():
    code, out, err = run("diff", "naive", "coalesced")
    assert code == 0, err
    assert "--- kernels/cuda/naive.cu (naive)" in out
    assert "+++ kernels/cuda/coalesced.cu (coalesced)" in out
    # the thread mapping turned round: row from threadIdx.x becomes col from threadIdx.x
    assert "-    const int row = blockIdx.x * BLOCK + threadIdx.x;" in out
    assert "+    const int col = blockIdx.x * BLOCK + threadIdx.x;" in out
    assert " #include \"common.cuh\"" in out  # context line
    assert "common.cuh" not in out.split("Resources")[0].replace('#include "common.cuh"', "")
    table = out.split("Resources", 1)[1]
    assert "registers per thread" in table and "blocks per SM" in table
    assert "Instruction mix (main loop, one iteration)" in table
    ffma = next(ln for ln in table.splitlines() if ln.startswith("FFMA"))
    assert ffma.split()[-1] == "="  # the same math, differently mapped


@needs_tools
def test_diff_of_steps_that_change_resources():
    code, out, err = run("diff", "warp_tiling", "cp_async")
    assert code == 0, err
    dyn = next(ln for ln in out.splitlines() if ln.startswith("shared memory, dynamic"))
    assert dyn.split()[-1] == f"+{registry.get('cp_async').dyn_smem_bytes()}"
    ldgsts = next(ln for ln in out.splitlines() if ln.startswith("LDGSTS"))
    assert ldgsts.split()[1] == "0" and int(ldgsts.split()[2]) > 0


def test_diff_of_levels_sharing_a_source_names_the_parameters_that_differ():
    """wgmma_stream_k is wgmma_tma's source with other template parameters: the diff
    says so instead of showing nothing (the resources part may be unavailable here)."""
    _, out, _ = run("diff", "wgmma_tma", "wgmma_stream_k")
    assert "wgmma_tma and wgmma_stream_k have the same source" in out
    assert "template parameters: GM 16 -> 8, SK 0 -> 2" in out


def test_parameter_changes_from_a_recording_are_made_printable():
    from gemmscope.kernels.toolchain.build_report import param_changes

    assert param_changes({"A": 1}, {"A": 1}) == ""
    assert param_changes(None, {"A": 1}) == ""
    line = param_changes({"A": 1}, {"A": "\x1b]0;pwned\x07", "B": 2})
    assert "\x1b" not in line and line.startswith("template parameters: A 1 -> ")
    assert line.endswith("B - -> 2\n")


@needs_tools
def test_sass_annotates_the_main_loop():
    code, out, err = run("sass", "cp_async")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("cp_async (vector): sgemm_cp_async<")
    # the compiler's count for the vector kernel (the build's options decide it: 255 before
    # kernels.toolchain.nvrtc_options turned NVVM's vectorizer off, 212 with NVRTC 13.5 now)
    level = registry.get("cp_async")
    built = nvrtc.compile_offline(level, arch=level.arch or "sm_90")
    vector = built.lowered[level.name_expression(True)]
    assert f" {cubin.kernels(built.cubin)[vector].regs} registers" in lines[1], lines[1]
    assert "main loop: /*" in lines[2]
    body = [ln for ln in lines if ln.startswith("  /*")]
    classes = {ln.split()[1] for ln in body}
    assert {"FFMA", "LDS.128", "LDGSTS", "BAR"} <= classes and "HMMA" not in classes
    # source lines with their text, from the level's .cu and the shared header
    assert any(ln.strip().startswith("// kernels/cuda/cp_async.cu:") for ln in lines)
    assert lines[-1].startswith("instruction mix: FFMA ")


def test_missing_nvrtc_is_exit_2_with_the_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMMSCOPE_CACHE_DIR", str(tmp_path))  # no answer kept by a test before
    monkeypatch.setattr(build_event, "_cache", {})
    monkeypatch.setattr(build_event, "nvrtc_missing",
                        lambda: "cuda-bindings is not installed (pip install 'gemmscope[nvrtc]')")
    code, out, err = run("diff", "naive", "coalesced")
    assert code == 2
    assert "+    const int col = blockIdx.x * BLOCK + threadIdx.x;" in out  # needs no tool
    assert "cuda-bindings is not installed" in err and "--file" in err
    code, out, err = run("sass", "naive")
    assert code == 2 and out == ""
    assert err.startswith("gemmscope sass: cannot compile naive here: cuda-bindings")


@pytest.mark.skipif(build_event.nvrtc_missing() is not None,
                    reason=str(build_event.nvrtc_missing()))
def test_missing_nvdisasm_is_exit_2_with_the_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMMSCOPE_CACHE_DIR", str(tmp_path))  # no answer kept by a test before
    monkeypatch.setattr(build_event, "_cache", {})
    monkeypatch.setattr(sass, "nvdisasm_missing", lambda: "nvdisasm is not installed")
    code, out, err = run("sass", "naive")
    assert code == 2 and "no SASS for naive: nvdisasm is not installed" in err
    code, out, err = run("diff", "naive", "coalesced")
    assert code == 2
    assert "registers per thread" in out  # resources come from the cubin, no tool needed
    assert "no instruction mix for naive: nvdisasm is not installed" in err


def test_unknown_level_is_exit_2():
    code, _out, err = run("sass", "nope")
    assert code == 2 and "unknown level 'nope'" in err


@needs_tools
def test_reading_build_events_from_a_recording(tmp_path, monkeypatch):
    header = {"type": "session", "t": 0.0, "protocol": protocol.PROTOCOL_VERSION,
              "created": "2026-12-01T00:00:00+00:00", "levels": {}}
    events = [header] + [build_event.offline_event(registry.get(i), t=1.0)
                         for i in ("naive", "coalesced")]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(protocol.dumps(e) + "\n" for e in events))
    # no compiler needed for a recording
    monkeypatch.setattr(build_event, "_cache", {})
    monkeypatch.setattr(build_event, "nvrtc_missing", lambda: "no NVRTC here")
    code, out, err = run("diff", "naive", "coalesced", "--file", str(path))
    assert code == 0, err
    assert "+    const int col = blockIdx.x * BLOCK + threadIdx.x;" in out
    assert "Instruction mix" in out
    code, out, err = run("sass", "coalesced", "--file", str(path))
    assert code == 0 and out.startswith("coalesced (scalar): sgemm_coalesced<32, false>")
    code, out, err = run("sass", "wmma", "--file", str(path))
    assert code == 2 and "the recording has no build event for wmma" in err
