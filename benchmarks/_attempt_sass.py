"""The offline half of benchmarks/kernel_attempts.py (--sass): each variant compiled here
for sm_90a with the levels' options (NVRTC, nvdisasm; no GPU), its registers, spills and
K loop's instruction mix."""

from __future__ import annotations

from typing import Any


def compile_timed(level: Any) -> tuple[Any, str]:
    """The instantiation that the timed sizes run (the vector path where the level has
    two), compiled here for sm_90a with the levels' options (NVRTC, no GPU): the build
    and the kernel's mangled name."""
    from gemmscope.kernels.toolchain import nvrtc

    vec = level.use_vector_path(4096, 4096, 4096) or not level.edge_variant
    expression = level.name_expression(vec)
    built = nvrtc.compile_source(level.id, nvrtc.assemble(level), [expression],
                                 nvrtc.offline_options(level, "sm_90a"), "sm_90a")
    return built, built.lowered[expression]


def sass_rows(levels: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Each (name, level) compiled here for sm_90a (NVRTC, nvdisasm): registers, spills and
    the K loop's instruction mix of the kernel the timed sizes run (no GPU)."""
    import collections

    from gemmscope.kernels.toolchain import cubin, sass

    rows = []
    for vname, level in levels:
        built, name = compile_timed(level)
        res = cubin.kernels(built.cubin)
        text = sass.disassemble(built.cubin)[name]
        loop = [ln for ln in sass.in_span(sass.parse(text), sass.main_loop(text)) if ln.counted]
        mix = collections.Counter(ln.op_class for ln in loop)
        rows.append({"name": vname, "regs": res[name].regs, "local": res[name].local_bytes,
                     "loop": len(loop), **{k: mix.get(k, 0) for k in
                                           ("HMMA", "FFMA", "LDSM", "LDS", "LDS.128",
                                            "LDGSTS", "other")}})
    return rows


def sass_table(rows: list[dict[str, Any]]) -> str:
    cols = ("regs", "local", "loop", "HMMA", "FFMA", "LDSM", "LDS", "LDS.128", "LDGSTS",
            "other")
    lines = [f"{'variant':18s} " + " ".join(f"{c:>7s}" for c in cols)]
    lines += [f"{r['name']:18s} " + " ".join(f"{r[c]!s:>7s}" for c in cols) for r in rows]
    return "\n".join(lines)
