"""The ``build`` event of a user's Triton kernel, from Triton's own compiled artifacts
(docs/user-kernels.md, "Triton"): the cubin Triton made is disassembled by nvdisasm like
a level's, its line info points into the user's ``.py``, and registers, spills and shared
memory are Triton's numbers; occupancy comes from the driver where asked, beside the
calculator's. The same fields as ``build_event`` writes, so the Code view, the resources
and the per-line counters read it unchanged; ``compiler`` names Triton.
"""

from __future__ import annotations

from typing import Any

from ..ladder.level import Level
from ..results.counts import counted
from . import build_event, nvrtc, occupancy, sass


def triton_code_key(source: str, triton: str, params: dict[str, int], arch: str) -> str:
    """A user's Triton kernel's code key (issue 41 item 6), as :func:`nvrtc.code_key` is a
    level's: 16 hex digits of the sha256 of what Triton's machine code is a function of,
    the ``.py`` source text, Triton's version, the constexpr and launch parameters
    (``BLOCK_M``..., ``num_warps``, ``num_stages``; in name order) and the target arch."""
    names = [f"{k}={params[k]}" for k in sorted(params)]
    return nvrtc.code_key(source, (f"-arch={arch}",), names, f"Triton {triton}")


def triton_event(level: Level, art: dict[str, Any], limits: occupancy.DeviceLimits,
                 driver_blocks: int | None, arch: str) -> dict[str, Any]:
    threads = 32 * art["num_warps"]
    regs, shared = art["regs"], art["shared"]
    files = list(nvrtc.source_files(level))
    calc = occupancy.occupancy(regs, threads, 0, shared, limits)
    occ = calc.as_dict()
    occ.update({"source": "driver" if driver_blocks is not None else "calculator",
                "driver_blocks_per_sm": driver_blocks,
                "calculator_blocks_per_sm": calc.blocks_per_sm,
                "what_if": occupancy.what_if(regs, threads, 0, shared, limits),
                "device": limits.as_dict()})
    if driver_blocks is not None:
        warps = -(-threads // limits.warp_size)
        occ.update({"blocks_per_sm": driver_blocks, "warps_per_sm": driver_blocks * warps,
                    "occupancy_pct": round(100.0 * driver_blocks * warps /
                                           limits.max_warps_per_sm, 2)})
    event: dict[str, Any] = {
        "type": "build", "level": level.id, "variant": "triton",
        "params": dict(level.params), "kernel": art["name"], "arch": arch,
        "compiler": f"Triton {art['triton']}",
        "options": [f"num_warps={art['num_warps']}", f"num_stages={art['num_stages']}"],
        "sources": nvrtc.source_files(level), "regs": regs, "smem_static_bytes": 0,
        "smem_dynamic_bytes": shared, "local_bytes": 4 * art["spills"],
        "threads_per_block": threads, "barriers": 0, "resources_from": "triton",
        "occupancy": occ, "mangled": art["name"]}
    if art.get("code_key"):
        event["code_key"] = art["code_key"]
    cubin = art.get("cubin")
    reason = sass.nvdisasm_missing() if isinstance(cubin, bytes) and cubin else \
        "Triton kept no cubin"
    text = None
    if reason is None and isinstance(cubin, bytes):
        try:
            texts = sass.disassemble(cubin, files)
            text = texts.get(art["name"]) or next(iter(texts.values()), None)
            if text is None:
                reason = (f"nvdisasm listed no kernel section in Triton's cubin "
                          f"({counted(len(cubin), 'byte')})")
        except Exception as exc:  # a tool that fails is a reason, not a lost event
            reason = f"nvdisasm failed: {exc}"
    if text is None:
        event.update({"sass": None, "sass_reason": reason, "main_loop": None,
                      "instruction_mix": None, "instruction_mix_reason": reason})
    else:
        event.update(build_event.sass_fields(text))
        event["sass_from"] = {"compiler": f"Triton {art['triton']}", "arch": arch,
                              "disassembler": "nvdisasm -c -gi", "regs": regs}
    return build_event.bound(event)
