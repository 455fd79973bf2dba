"""Issue 46 item 1 without a GPU: a level's trace build (kernels/cuda/trace.cuh) compiles
for sm_90a, and its plain build is the level before it was traced: the same source, code
key and cubin, so the bundled recording's results still name the code that runs."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import cubin, nvrtc

TRACED = tuple(lv.id for lv in registry.ladder())  # issue 46 item 1: each ladder level


def test_every_ladder_level_is_traceable_and_a_reference_is_not():
    assert len(TRACED) >= 20
    assert all(nvrtc.traceable(registry.get(i)) for i in TRACED)
    refs = [lv for lv in registry.LEVELS if lv.library is not None]
    assert refs and not any(nvrtc.traceable(lv) for lv in refs)


@pytest.mark.parametrize("level_id", TRACED)
def test_a_level_says_it_has_a_k_stage_observer_exactly_where_its_source_has_one(level_id):
    """The host gives an observer a lane of its own after the warpgroups' lanes and reads
    the block's stage events from it (trace_schedule.stage_lanes): the level's
    ``trace_observer`` and its kernel's GsTraceStages (kernels/cuda/trace.cuh) agree."""
    from gemmscope.kernels.models.trace_schedule import schedule

    level = registry.get(level_id)
    text = nvrtc.source_file(level).read_text(encoding="utf-8")
    assert level.trace_observer == ("GsTraceStages<" in text)
    model = schedule(level, 4096, 4096, 4096, 132)
    if level.trace_observer:
        # 384 threads: three warpgroups' lanes, then the observer's (the kernel's LANE)
        assert f"GsTraceStages<{model.lanes_per_block - 1}>" in text
        assert model.stage_lanes == range(model.lanes_per_block - 1, model.lanes_per_block)
        assert list(model.consumer_lanes) == [1, 2]


@pytest.mark.parametrize("level_id", TRACED)
def test_k_stage_events_are_in_the_source_exactly_where_the_level_stages_k_tiles(level_id):
    """The host sizes a lane's slots from the model's ``staged`` (trace_launch.lane_capacity):
    a level that walks K one element at a time (naive, coalesced) records its blocks'
    begin and end only, and every other level marks its K steps."""
    from gemmscope.kernels.models.trace_schedule import schedule

    text = "".join(t for path, t in nvrtc.source_files(registry.get(level_id), trace=True).items()
                   if path != "kernels/cuda/trace.cuh")  # the macros themselves
    marks = re.search(r"^\s*GS_TRACE\w*\(.*\b(?:GS_TR_)?(?:LOAD_ISSUED|DATA_READY|MMA_DONE)\b",
                      text, re.M)
    staged = schedule(registry.get(level_id), 1024, 1024, 1024, 132).staged
    assert staged == (marks is not None)


@pytest.mark.parametrize("level_id", TRACED)
def test_every_trace_line_is_one_whole_statement_the_plain_build_can_drop(level_id):
    files = nvrtc.source_files(registry.get(level_id), trace=True)
    assert "kernels/cuda/trace.cuh" in files
    for path, text in files.items():
        if path == "kernels/cuda/trace.cuh":  # the macros themselves
            continue
        for line in text.splitlines():
            if "GS_TRACE" not in line:
                continue
            code = line.split("//")[0].strip()
            # a hook alone on its line, whole: dropping it leaves valid code behind
            assert re.match(r"^GS_TRACE\w*\(.*\);?$", code), (path, line)
            assert code.count("(") == code.count(")"), (path, line)


@pytest.mark.parametrize("level_id", TRACED)
def test_plain_source_has_no_trace_line_and_the_trace_source_has_them(level_id):
    level = registry.get(level_id)
    plain, traced = nvrtc.assemble(level), nvrtc.assemble(level, trace=True)
    assert "GS_TRACE" not in plain and "gs_trace" not in plain
    assert "GS_TRACE_LANE" in traced and "struct GsTrace" in traced
    # the trace build is the plain one plus lines: every plain line is in it, in order
    rest = iter(traced.splitlines())
    assert all(any(line == t for t in rest) for line in plain.splitlines()
               if not line.startswith("#line"))
    assert nvrtc.TRACE_DEFINE in nvrtc.options(level, trace=True)
    assert nvrtc.TRACE_DEFINE not in nvrtc.options(level)


def test_plain_text_leaves_a_file_without_trace_lines_as_it_is():
    text = "// GS_TRACE is named in a comment\nint x;  // trace.cuh\n"
    assert nvrtc.plain_text(text) == text
    assert nvrtc.plain_text('#include "trace.cuh"\n  GS_TRACE(A, 1, 2);\nint x;\n') == "int x;\n"


@functools.cache
def _bundled_results_and_builds():
    """The bundled recording's results and builds, read once for the twenty levels."""
    import places

    from gemmscope.kernels.protocol import recording
    from gemmscope.kernels.protocol import records as rec

    return recording.read_session(places.SESSIONS / "h200-ladder.jsonl.gz",
                                  only=(rec.Result, rec.Build))


@pytest.mark.parametrize("level_id", TRACED)
def test_plain_build_is_the_code_the_bundled_recording_measured(level_id):
    """The H200's build events of the level carry the sources it compiled; the plain build
    of this checkout is that text, file by file, and its code key is the shown results' key."""
    from gemmscope.kernels.protocol import records as rec

    session = _bundled_results_and_builds()
    header = next(e for e in session.events if isinstance(e, rec.Session))
    level = registry.get(level_id)
    now = nvrtc.source_files(level)
    builds = [e for e in session.events if isinstance(e, rec.Build) and e.level == level_id
              and e.sources]
    assert any(b.sources == now for b in builds)
    keys = {b.code_key for b in builds if b.sources == now}
    # the results readers show (the newest of each shape and mode: record --update keeps the
    # older ones as history, e.g. cp_async_interior's before its fourth stage, same source)
    from gemmscope.kernels.results.rows import newest

    shown = newest(e for e in session.events if isinstance(e, rec.Result) and e.level == level_id)
    results = [r for r in shown if r.code_key in keys]
    assert results
    for r in results:
        fitted = level.for_shape(r.M, r.N, r.K, header.device.sm_count)
        assert nvrtc.expected_key(fitted, header.device.arch, r.compiler or "") == r.code_key


needs_nvrtc = pytest.mark.skipif(
    __import__("importlib").util.find_spec("cuda") is None, reason="the nvrtc extra is missing")


# The trace builds that spill where their plain build does not with the test extra's NVRTC
# (13.5; the H200 compiles with CuPy's 13.0, whose list tests/gpu/test_trace_gpu.py holds),
# and at most how many bytes; their reloads are outside the K loop (checked below). Each
# level is compiled in the form it runs at 4096^3, where its trace is recorded and its
# overhead measured (issue 46 item 2): a shape rule may give it other parameters than its
# entry's. None now: fp8_deep's trace build spilled 24 bytes in its producer warp's and
# its K-stage observer's code while K was read at run time (13.5 reloaded the tiles' tail
# count once a tile; the 2-CTA form's peer and multicast state); built with its K blocks
# compiled in (KS) and one CTA a cluster at 4096^3 it spills nothing.
SPILLS_OFFLINE: dict[str, int] = {}


@needs_nvrtc
@pytest.mark.parametrize("level_id", TRACED)
def test_trace_build_compiles_for_sm90a_with_its_buffer_and_spills_only_where_it_is_said(
        level_id):
    from gemmscope.kernels.toolchain import sass

    level = registry.get(level_id).for_shape(4096, 4096, 4096, 132)
    traced = nvrtc.compile_offline(level, trace=True)
    plain = nvrtc.compile_offline(level)
    assert b"gs_trace" in traced.cubin and b"gs_trace" not in plain.cubin
    assert traced.cubin_sha256 != plain.cubin_sha256
    plain_local = {name: res.local_bytes for name, res in cubin.kernels(plain.cubin).items()}
    texts = sass.disassemble(traced.cubin)
    for name, res in cubin.kernels(traced.cubin).items():
        # a spill would slow the traced loop: none where the plain build has none (mma_sync's
        # edge path, VEC=false, spills in its plain build already), but the said few
        if plain_local[name] == 0:
            assert res.local_bytes <= SPILLS_OFFLINE.get(level_id, 0), name
            if res.local_bytes:  # and never reloaded in the K loop
                loop = sass.in_span(sass.parse(texts[name]), sass.main_loop(texts[name]))
                assert loop and not any(ln.mnemonic.startswith("LDL") for ln in loop), name
    spilled = [n for n, r in cubin.kernels(traced.cubin).items()
               if r.local_bytes and not plain_local[n]]
    assert bool(spilled) == (level_id in SPILLS_OFFLINE)  # the list says no more than is so


SPLIT_FILE = """\
int f(int K) {
    int acc = 0;
    for (int k = 0; k < K; ++k) {
        GS_TRACE_SPLIT(gs_tr.samples(k));  // a comment with ) in it
        GS_TRACE(LOAD_ISSUED, 0, k);
        acc += k;
        GS_TRACE(MMA_DONE, 0, k);
        GS_TRACE_SPLIT_END();
    }
    return acc;
}
"""


def _numbered(text: str) -> list[tuple[int, str]]:
    """(line number in the file, text) of each line, as the compiler reads #line."""
    out, n = [], 0
    for line in text.splitlines():
        if line.startswith("#line "):
            n = int(line.split()[1]) - 1
            continue
        n += 1
        out.append((n, line))
    return out


def test_a_split_region_runs_its_trace_lines_only_where_its_condition_holds():
    split = nvrtc.split_regions(SPLIT_FILE, "kernels/cuda/x.cu")
    lines = [t.strip() for _, t in _numbered(split)]
    test = lines.index("if (__builtin_expect(!!(gs_tr.samples(k)), 0)) {")
    other = lines.index("} else {")
    traced, plain = lines[test + 1:other], lines[other + 1:lines.index("}", other)]
    assert [t for t in traced if t] == ["GS_TRACE(LOAD_ISSUED, 0, k);", "acc += k;",
                                        "GS_TRACE(MMA_DONE, 0, k);"]
    assert [t for t in plain if t] == ["acc += k;"]  # the plain build's body, nothing else
    assert "GS_TRACE_SPLIT" not in split
    # the plain build drops the markers with the other trace lines
    assert "GS_TRACE" not in nvrtc.plain_text(SPLIT_FILE)


def test_a_split_region_keeps_every_line_numbered_as_in_its_file():
    split = nvrtc.split_regions(SPLIT_FILE, "kernels/cuda/x.cu")
    source = SPLIT_FILE.splitlines()
    for n, text in _numbered(split):
        if text.strip() and not text.startswith(("if (__builtin_expect", "} else {", "}")):
            assert source[n - 1] == text, (n, text)
    # both copies of `acc += k;` are its own line 6, and `return acc;` stays line 10
    assert [n for n, t in _numbered(split) if t.strip() == "acc += k;"] == [6, 6]
    assert [n for n, t in _numbered(split) if t.strip() == "return acc;"] == [10]


@pytest.mark.parametrize("text", [
    "GS_TRACE_SPLIT(a);\nint x;\n",  # no end
    "int x;\nGS_TRACE_SPLIT_END();\n",  # no begin
    "GS_TRACE_SPLIT(a);\nGS_TRACE_SPLIT(b);\nGS_TRACE_SPLIT_END();\n",  # nested
])
def test_a_split_marker_without_its_pair_is_refused_with_its_line(text):
    with pytest.raises(ValueError, match=r"kernels/cuda/x\.cu:\d+: GS_TRACE_SPLIT"):
        nvrtc.split_regions(text, "kernels/cuda/x.cu")


RUN_FILE = """\
int f(int K, int every, int* ran, int* rec) {
    int n = 0, m = 0;
    GS_TRACE_DO(int kn = 0;)
    for (int k = 0; k < K; ++k) {
        GS_TRACE_SPLIT_RUN(k == kn, k + 1 < (K < kn ? K : kn), ++k);  // (a, b) stays whole
        GS_TRACE_DO(rec[m++] = k;)
        ran[n++] = k;
        GS_TRACE_DO(kn = k + every;)
        GS_TRACE_SPLIT_END();
    }
    return n * 1000 + m;
}
"""


def test_a_run_region_runs_the_steps_it_leaves_out_as_a_loop_of_their_own():
    split = nvrtc.split_regions(RUN_FILE, "kernels/cuda/x.cu")
    lines = [t.strip() for _, t in _numbered(split)]
    test = lines.index("if (__builtin_expect(!!(k == kn), 0)) {")
    other = lines.index("} else { for (;;) {")
    close = next(i for i in range(other, len(lines)) if lines[i].startswith("if (!("))
    assert [t for t in lines[other + 1:close] if t] == ["ran[n++] = k;"]
    # the test of the next step, its argument's comma inside the parentheses kept
    assert lines[close] == "if (!(k + 1 < (K < kn ? K : kn))) break; ++k; } }"
    assert test < other and "GS_TRACE" not in split.replace("GS_TRACE_DO", "")


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("K, every", [(10, 4), (9, 3), (7, 1), (5, 16), (1, 2)])
def test_a_run_region_runs_every_step_once_in_order_and_records_the_kept_ones(
        tmp_path, K, every):
    split = nvrtc.split_regions(RUN_FILE, "x.c").replace("GS_TRACE_DO(", "GS_DO(")
    main = (f"#include <stdio.h>\n#define GS_DO(...) __VA_ARGS__\n{split}\n"
            "int main(void) { int ran[64], rec[64]; int r = f(" f"{K}, {every}" ", ran, rec);"
            " for (int i = 0; i < r / 1000; ++i) printf(\"%d \", ran[i]); printf(\"|\");"
            " for (int i = 0; i < r % 1000; ++i) printf(\"%d \", rec[i]); return 0; }\n")
    (tmp_path / "x.c").write_text(main)
    subprocess.run(["cc", "-O1", "-o", str(tmp_path / "x"), str(tmp_path / "x.c")], check=True,
                   capture_output=True)
    ran, rec = subprocess.run([str(tmp_path / "x")], capture_output=True, text=True,
                              check=True).stdout.split("|")
    assert [int(x) for x in ran.split()] == list(range(K))
    assert [int(x) for x in rec.split()] == list(range(0, K, every))


@pytest.mark.parametrize("args", ["a", "a, b", "a, , c", "a, b, c, d"])
def test_a_run_marker_without_its_three_arguments_is_refused_with_its_line(args):
    text = f"GS_TRACE_SPLIT_RUN({args});\nint x;\nGS_TRACE_SPLIT_END();\n"
    with pytest.raises(ValueError, match=r"kernels/cuda/x\.cu:1: GS_TRACE_SPLIT_RUN"):
        nvrtc.split_regions(text, "kernels/cuda/x.cu")


SPLIT_LEVELS = ("smem_tiled", "smem_padded", "double_buffer", "cp_async_interior", "wmma",
                "mma_persistent")


@pytest.mark.parametrize("level_id", SPLIT_LEVELS)
def test_a_split_levels_trace_build_holds_its_plain_body_beside_the_recording_one(level_id):
    level = registry.get(level_id)
    files = nvrtc.source_files(level, trace=True)
    main = next(t for p, t in files.items() if p.endswith(f"{level_id}.cu"))
    assert ("GS_TRACE_SPLIT(" in main or "GS_TRACE_SPLIT_RUN(" in main) \
        and "GS_TRACE_SPLIT_END()" in main
    traced = nvrtc.assemble(level, trace=True)
    assert "__builtin_expect" in traced and "GS_TRACE_SPLIT" not in traced
    plain = nvrtc.assemble(level)
    assert "__builtin_expect" not in plain and "GS_TRACE_SPLIT" not in plain
