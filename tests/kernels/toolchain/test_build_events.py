"""Build events: SASS parsing and instruction classes (pure), then each level compiled by
NVRTC from PyPI and disassembled by nvdisasm without a GPU (skipped, with the reason,
where those are missing), the event's validation, size and round trip, and the runner's
one event per compiled variant."""

from __future__ import annotations

import io
import json

import pytest
from runner_subprocess import wire

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import commands
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol.decoding import decode, encode, of
from gemmscope.kernels.toolchain import build_event, compile_child, sass
from gemmscope.kernels.toolchain import nvrtc as build

NVDISASM_OUTPUT = """
//--------------------- .text._Z1kILb1EEvv --------------------------
\t.section\t.text._Z1kILb1EEvv,"ax",@progbits
\t.align\t128
_Z1kILb1EEvv:
.text._Z1kILb1EEvv:
\t//## File "/tmp/run/kernels/cuda/x.cu", line 10
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_1:
\t//## File "/w/kernels/cuda/common.cuh", line 25 inlined at "/w/kernels/cuda/x.cu", line 12
        /*0010*/                   LDS.U.128 R4, [R2] ;
        /*0020*/                   FFMA.FTZ R8, R4, R5, R8 ;
\t//## File "/usr/local/cuda/include/cuda_fp16.hpp", line 7
        /*0030*/              @!PT LDS RZ, [RZ] ;
        /*0040*/               @P0 BRA `(.L_x_1) ;
        /*0050*/                   EXIT ;
.L_x_2:
        /*0060*/                   BRA `(.L_x_2);
        /*0070*/                   NOP;
"""


def test_classes():
    assert [sass.op_class(m) for m in (
        "FFMA.FTZ", "HMMA.16816.F32", "HGMMA.64x256x16.F32.BF16", "QGMMA.64x128x32.F32.E4M3",
        "LDS", "LDS.64", "LDS.U.128", "LDSM.16.MT88.4", "STS.128", "LDG.E.CONSTANT",
        "LDGSTS.E.BYPASS.128", "UTMALDG.2D", "BAR.SYNC.DEFER_BLOCKING", "LDL", "STL.64",
        "SYNCS.ARRIVE.TRANS64", "IMAD", "STSM.16.M88.4", "UTMASTG.2D")] == [
        "FFMA", "HMMA", "HGMMA", "HGMMA", "LDS", "LDS", "LDS.128", "LDSM", "STS", "LDG",
        "LDGSTS", "UTMALDG", "BAR", "LDL", "STL", "other", "other", "STSM", "UTMASTG"]


def test_compact_text_parses_back_with_repository_paths():
    texts = sass.compact(NVDISASM_OUTPUT, ["kernels/cuda/x.cu", "kernels/cuda/common.cuh"])
    text = texts["_Z1kILb1EEvv"]
    assert "/tmp/run" not in text and "/w/" not in text and "/usr/local" not in text
    assert '"cuda_fp16.hpp", line 7' in text
    lines = sass.parse(text)
    assert [ln.offset for ln in lines] == [0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70]
    lds = lines[1]
    assert (lds.mnemonic, lds.op_class, lds.text) == ("LDS.U.128", "LDS.128",
                                                      "LDS.U.128 R4, [R2] ;")
    assert lds.where == (("kernels/cuda/common.cuh", 25), ("kernels/cuda/x.cu", 12))
    assert lds.source == ("kernels/cuda/common.cuh", 25)
    assert lines[0].source == ("kernels/cuda/x.cu", 10)
    assert not lines[3].counted and not lines[7].counted  # @!PT, NOP padding
    mix = sass.instruction_mix(lines)
    assert list(mix) == list(sass.CLASSES)
    assert (mix["LDS.128"], mix["LDS"], mix["FFMA"], mix["other"]) == (1, 0, 1, 4)
    # the loop from .L_x_1 to the branch back; the self-branch after EXIT is no loop
    assert sass.main_loop(text) == (0x10, 0x40)
    assert [ln.offset for ln in sass.in_span(lines, (0x10, 0x40))] == [0x10, 0x20, 0x30, 0x40]


def test_main_loop_of_a_kernel_without_shared_loads_is_the_innermost_mma_loop():
    text = "\n".join([
        ".L_x_0:", "/*0000*/ HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], R24 ;",
        ".L_x_1:", "/*0010*/ HGMMA.64x256x16.F32.BF16 R24, gdesc[UR8], R24 ;",
        "/*0020*/ @P0 BRA `(.L_x_1) ;",
        "/*0030*/ HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], R24 ;",
        "/*0040*/ @P1 BRA `(.L_x_0) ;",
        "/*0050*/ EXIT ;",
        ".L_x_9:", "/*0060*/ SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR16], R2 ;",
        "/*0070*/ BRA `(.L_x_0) ;"]) + "\n"
    # the outer (tile) loop holds more MMA, the cold block after EXIT jumps back to the top:
    # neither is the main loop
    assert sass.main_loop(text) == (0x10, 0x20)
    assert sass.main_loop("/*0000*/ EXIT ;\n") is None


def test_sources_are_every_file_the_level_includes_without_trace_lines_unless_traced():
    files = build.source_files(registry.get("wgmma_tma"))
    # hopper.cuh and the topics it includes, in include order (tests/test_cuda_headers.py)
    assert list(files) == ["kernels/cuda/wgmma_tma.cu", "kernels/cuda/common.cuh",
                           "kernels/cuda/hopper.cuh", "kernels/cuda/hopper_barriers.cuh",
                           "kernels/cuda/hopper_tma.cuh", "kernels/cuda/hopper_schedule.cuh",
                           "kernels/cuda/hopper_warp_specialized.cuh",
                           "kernels/cuda/hopper_wgmma.cuh", "kernels/cuda/hopper_wgmma_ops.cuh",
                           "kernels/cuda/hopper_epilogue.cuh",
                           "kernels/cuda/wgmma_bf16_ops.cuh"]  # its own widths (232)
    for path, text in files.items():
        raw = (registry.cuda_dir() / path.removeprefix("kernels/cuda/")).read_text()
        # the plain build's texts are the files without their trace lines, as it compiled them
        assert text == build.plain_text(raw)
    # and none of them keeps a trace line or the trace header
    assert not any("GS_TRACE" in text or "trace.cuh" in text for text in files.values())
    # the trace build's texts are the files whole, with trace.cuh where it is first included
    traced = build.source_files(registry.get("wgmma_tma"), trace=True)
    at = list(files).index("kernels/cuda/hopper_warp_specialized.cuh") + 1
    assert list(traced) == [*list(files)[:at], "kernels/cuda/trace.cuh", *list(files)[at:]]
    for path, text in traced.items():
        assert text == (registry.cuda_dir() / path.removeprefix("kernels/cuda/")).read_text()
    assert list(build.source_files(registry.get("naive"))) == [
        "kernels/cuda/naive.cu", "kernels/cuda/common.cuh"]


@pytest.mark.parametrize("level_id", ["double_buffer", "cp_async", "smem_tiled"])
def test_assembled_source_keeps_each_files_line_numbers(level_id):
    """Of the file the plain build reads: the level's file without its trace lines (every
    level has a trace build; GsTraceLane's lines in double_buffer and cp_async, the
    thread-0 lane's in smem_tiled), which is its text before it was traced."""
    src = build.assemble(registry.get(level_id)).splitlines()
    name = f"kernels/cuda/{level_id}.cu"
    raw = (registry.cuda_dir() / f"{level_id}.cu").read_text()
    cu = build.plain_text(raw).splitlines()
    assert cu != raw.splitlines() and len(cu) < len(raw.splitlines())  # trace lines left out
    assert src[0] == f'#line 1 "{name}"'
    at = src.index('#line 1 "kernels/cuda/common.cuh"')
    include = cu.index('#include "common.cuh"') + 1  # 1-based line of the #include
    back = next(i for i in range(at, len(src)) if src[i].startswith('#line ')
                and f"{level_id}.cu" in src[i])
    assert src[back] == f'#line {include + 1} "{name}"'
    assert src[back + 1:] == cu[include:]


def test_protocol_requires_level_and_variant_and_checks_sources():
    good = {"type": "build", "t": 1.0, "level": "naive", "variant": "scalar",
            "sources": {"kernels/cuda/naive.cu": "..."}, "sass": None, "sass_reason": "x"}
    read = decode(protocol.dumps(good))
    assert read == of(good) and read.sources == good["sources"] and read.sass_reason == "x"
    for change, message in [({"variant": None}, "variant"), ({"level": 3}, "level"),
                            ({"sources": {"a.cu": 3}}, "source 'a.cu'"),
                            ({"sources": ["a.cu"]}, "sources"), ({"sass": 5}, "sass")]:
        with pytest.raises(protocol.ProtocolError, match=message):
            decode(json.dumps({**good, **change}))


def test_runner_emits_one_build_event_per_variant(monkeypatch):
    from gemmscope.kernels.engine.runner import Runner

    calls = []

    def fake_event(level, variant, params=None, on_compile=None):
        calls.append((level.id, variant))
        if level.id == "wmma":
            raise RuntimeError("no nvdisasm")
        if level.id == "naive":  # NVRTC compiles it again for the SASS (not in the cache)
            on_compile()
        return {"type": "build", "level": level.id, "variant": variant}

    monkeypatch.setattr(build_event, "gpu_event", fake_event)
    out = io.StringIO()
    runner = Runner(out)
    naive, cp_async = registry.get("naive"), registry.get("cp_async")
    cmd = commands.parse_command(json.dumps({"cmd": "run", "id": 7, "level": "naive",
                                             "M": 64, "N": 64, "K": 64}))
    for level, variant in [(naive, "scalar"), (naive, "scalar"), (cp_async, "vector"),
                           (cp_async, "scalar"), (cp_async, "vector"),
                           (cp_async.with_params({"STAGES": 2}), "vector"),
                           (registry.get("cublas_fp32"), "cublas"),
                           (registry.get("wmma"), "vector")]:
        runner._emit_build(level, variant, None, cmd)
    assert calls == [("naive", "scalar"), ("cp_async", "vector"), ("cp_async", "scalar"),
                     ("cp_async", "vector"), ("wmma", "vector")]
    events = [wire(line) for line in out.getvalue().splitlines()]
    assert [e["type"] for e in events] == ["phase"] + ["build"] * 4 + ["info"]
    assert events[0] == {**events[0], "phase": "compile", "level": "naive", "M": 64,
                         "mode": "burst", "trial": 0}
    assert all(e["id"] == 7 for e in events)
    assert "no build event for wmma (vector)" in events[-1]["message"]


# ------------------------------------------------------------------ compiled (NVRTC)

MISSING = build_event.nvrtc_missing() or sass.nvdisasm_missing()
needs_tools = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


@pytest.fixture(scope="module")
def events():
    """Offline build events, made once per level and variant for this module."""
    made: dict[tuple[str, str | None], dict] = {}

    def get(level_id: str, variant: str | None = None) -> dict:
        if (level_id, variant) not in made:
            made[(level_id, variant)] = build_event.offline_event(registry.get(level_id),
                                                                  variant)
        return made[(level_id, variant)]

    return get


def main_loop_mix(event):
    return event["instruction_mix"]["main_loop"]


@needs_tools
def test_cp_async_main_loop_is_fma_and_shared_loads(events):
    mix = main_loop_mix(events("cp_async"))
    assert mix["FFMA"] > 0 and mix["LDS"] + mix["LDS.128"] > 0
    assert mix["HMMA"] == mix["HGMMA"] == 0
    assert mix["LDGSTS"] > 0  # the copies of the stages in flight


@needs_tools
def test_tensor_core_levels_show_their_mma(events):
    assert main_loop_mix(events("wmma"))["HMMA"] > 0
    wgmma = events("wgmma_tma")
    assert main_loop_mix(wgmma)["HGMMA"] > 0
    assert wgmma["instruction_mix"]["kernel"]["UTMALDG"] > 0  # the producer's TMA loads
    assert main_loop_mix(events("fp8_block_scaled"))["HGMMA"] > 0


@needs_tools
def test_resources_from_the_cubin(events):
    ev = events("cp_async")
    assert (ev["variant"], ev["arch"], ev["resources_from"]) == ("vector", "sm_90", "cubin")
    assert ev["smem_static_bytes"] == 0
    assert ev["smem_dynamic_bytes"] == registry.get("cp_async").dyn_smem_bytes()
    assert ev["threads_per_block"] == 256
    occ = ev["occupancy"]
    assert occ["source"] == "calculator" and occ["driver_blocks_per_sm"] is None
    assert occ["blocks_per_sm"] == occ["calculator_blocks_per_sm"]
    assert ev["sass_from"]["regs"] == ev["regs"]
    tiled = events("smem_tiled")
    assert tiled["smem_static_bytes"] == 2 * 32 * 32 * 4  # As and Bs, 32x32 floats
    assert tiled["variant"] == "scalar" and tiled["threads_per_block"] == 1024
    # every kernel of the cubin has registers; the scalar variant is the other kernel
    scalar = events("cp_async", "scalar")
    assert scalar["kernel"].endswith("false>") and scalar["mangled"] != ev["mangled"]


@needs_tools
@pytest.mark.parametrize("level", registry.ladder(), ids=lambda lv: lv.id)
def test_build_event_of_every_level(events, level):
    ev = events(level.id)
    line = protocol.dumps(ev)
    assert len(line.encode()) < build_event.MAX_EVENT_BYTES
    assert len(line.encode()) < 2 * 1024 * 1024  # the biggest level is far below the bound
    back = decode(line)
    # the record names every field the writer wrote: nothing is lost on the way back
    assert json.loads(encode(back)) == {k: v for k, v in json.loads(line).items() if v is not None}
    assert back.sources == build.source_files(level)
    assert back.sass and back.main_loop is not None
    assert back.instruction_mix["main_loop"] is not None
    # line info points into the recorded sources (or CUDA's own headers), never at the
    # machine that compiled it
    files = {f for ln in sass.parse(back.sass) for f, _ in ln.where}
    assert files & set(back.sources), files
    assert not any(f.startswith("/") for f in files), files


@needs_tools
def test_an_event_over_its_bound_drops_the_sass_then_the_sources(events, monkeypatch):
    ev = dict(events("naive"))
    monkeypatch.setattr(build_event, "MAX_EVENT_BYTES", len(ev["sass"]) // 2)
    small = build_event.bound(dict(ev))
    assert small["sass"] is None and "over its bound" in small["sass_reason"]
    monkeypatch.setattr(build_event, "MAX_EVENT_BYTES", 1000)
    tiny = build_event.bound(dict(ev))
    assert tiny["sources"] is None and "over its bound" in tiny["sources_reason"]


@needs_tools
def test_the_runner_compiles_in_a_child_process_and_loads_no_nvrtc_itself(tmp_path):
    """cuda-bindings' NVRTC loaded into the runner broke its later `import torch` (the FP8
    reference) on the H200: the runner's build events compile in a child process."""
    import os
    import subprocess
    import sys

    code = ("import sys\n"
            "from gemmscope.kernels.ladder import registry\n"
            "from gemmscope.kernels.toolchain import build_event\n"
            "lv = registry.get('naive')\n"
            "off = build_event.compile_cubin(lv, lv.params, 'sm_90', isolated=True)\n"
            "assert off.sass and all(r.regs for r in off.resources.values())\n"
            "print(sorted(m for m in sys.modules if m.startswith('cuda')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300,  # an empty build cache: it compiles
                          env={**os.environ, "GEMMSCOPE_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert list((tmp_path / "sass").glob("*.json"))
    lv = registry.get("naive")
    here = build_event.compile_cubin(lv, lv.params, "sm_90")
    child = compile_child.compile_in_child({
        "program": "naive", "source": build.assemble(lv),
        "names": list(build.variants(lv).values()),
        "options": list(build.offline_options(lv, "sm_90")), "arch": "sm_90",
        "files": list(build.source_files(lv))}, compile_child.LADDER)
    assert child["sass"] == here.sass and child["lowered"] == here.lowered


# ------------------------------------------------------------------ kept on disk

def _spec(source: str = "__global__ void k() {}") -> dict:
    return {"program": "p", "source": source, "names": ["k"], "options": ["-arch=sm_90"],
            "arch": "sm_90", "files": ["kernels/cuda/p.cu"]}


def test_the_kept_answer_is_named_by_its_spec_and_a_bad_file_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMSCOPE_CACHE_DIR", str(tmp_path))
    path = build_event.answer_path(_spec())
    assert path.parent == tmp_path / "sass"
    assert build_event.answer_path(_spec("__global__ void k() { }")) != path  # an edit
    assert build_event.cached_answer(_spec()) is None
    build_event.keep_answer(_spec(), {"lowered": {"k": "_Z1kv"}, "sass": None})
    assert build_event.cached_answer(_spec()) == {"lowered": {"k": "_Z1kv"}, "sass": None}
    path.write_text("{not json")
    assert build_event.cached_answer(_spec()) is None


@needs_tools
def test_a_second_process_takes_the_compile_from_the_cache_folder(tmp_path, monkeypatch):
    """The runner's build events compile once per machine (issue 40 item 3): the answer
    kept on disk serves a process that has compiled nothing, with no NVRTC run."""
    monkeypatch.setenv("GEMMSCOPE_CACHE_DIR", str(tmp_path))
    lv = registry.get("naive")
    build_event.forget("naive")  # as a new process: nothing in memory
    first = build_event.compile_cubin(lv, lv.params, "sm_90")
    assert len(list((tmp_path / "sass").glob("*.json"))) == 1
    build_event.forget("naive")

    def no_compile(*_args):
        raise AssertionError("compiled again")

    monkeypatch.setattr(build_event, "compile_spec", no_compile)
    monkeypatch.setattr(build_event, "compile_in_child", no_compile)
    assert build_event.compile_cubin(lv, lv.params, "sm_90", isolated=True) == first
