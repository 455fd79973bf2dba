"""The results table that `bench` prints and `report` prints from a recording."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import registry

COLUMNS = ("level", "shape", "prec", "mode", "median ms", "TFLOPS", "% cuBLAS", "% peak", "rel err",
           "ok", "SM MHz", "J/GEMM", "GFLOP/J", "notes")


def _fmt(v: Any, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def rows(results: Iterable[dict[str, Any]]) -> list[list[str]]:
    out = []
    for r in results:
        notes = []
        if r.get("throttled"):
            notes.append("throttled: " + ",".join(r["throttled"]))
        level = registry.BY_ID.get(r["level"])
        if r.get("variant") == "scalar" and level is not None and level.vector > 1:
            notes.append("scalar edge path")
        if r.get("precision") == "fp8" and r.get("deepgemm_diff") is not None:
            notes.append(f"DeepGEMM diff {r['deepgemm_diff']:.1e}")
        if r.get("mode") == "sustained" and r.get("tflops_min") is not None:
            notes.append(f"{r.get('trials')} trials {r['tflops_min']:.4g}-{r['tflops_max']:.4g}"
                         f" TFLOPS, {_fmt(r.get('avg_power_w'), '.0f')} W")
        if r.get("energy_j") is None and r.get("energy_reason"):
            notes.append(f"no energy: {r['energy_reason']}")
        pct_ref = r.get("pct_of_reference")
        ref = r.get("reference") or ""
        out.append([
            r["level"], f"{r['M']}x{r['N']}x{r['K']}", r.get("precision") or r["dtype"],
            r.get("mode") or "burst", _fmt(r["median_ms"], ".4f"), _fmt(r["tflops"], ".2f"),
            "-" if pct_ref is None else f"{pct_ref:.1f} ({ref.removeprefix('cublas_')})",
            _fmt(r.get("pct_of_peak"), ".1f"), _fmt(r.get("rel_err"), ".1e"),
            "yes" if r["verified"] else "NO", _fmt(r.get("sm_clock_mhz_avg"), ".0f"),
            _fmt(r.get("energy_j"), ".3g"), _fmt(r.get("gflop_per_j"), ".0f"),
            "; ".join(notes)])
    return out


def render(results: Iterable[dict[str, Any]], markdown: bool = False) -> str:
    body = rows(results)
    if markdown:
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)
    widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c)
              for i, c in enumerate(COLUMNS)]
    right = {4, 5, 6, 7, 8, 10, 11, 12}

    def line(cells: list[str] | tuple[str, ...]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(COLUMNS), line(["-" * w for w in widths]), *map(line, body)])
