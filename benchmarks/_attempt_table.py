"""The table benchmarks/kernel_attempts.py ends with: a row per variant and shape timed
(ratio to the reference with its interval, checks, registers, blocks per SM, clocks), and
the first error of a variant that did not get that far."""

from __future__ import annotations

from typing import Any


def size_text(M: int, N: int | None = None, K: int | None = None) -> str:
    N, K = (M if N is None else N), (M if K is None else K)
    return str(M) if M == N == K else f"{M}x{N}x{K}"



def compact(changes: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in changes.items()) or "-"


def table(records: list[dict[str, Any]]) -> str:
    head = (f"{'variant':18s} {'params':40s} {'size':>14s} {'ok':>5s} {'TFLOPS':>7s} "
            f"{'ref':>7s} {'ratio':>6s} {'95% CI':>13s} {'pairs':>5s} {'regs':>4s} "
            f"{'B/SM':>4s} {'MHz':>9s}")
    lines = ["", "== issue 42 attempts (burst, paired with the reference, L2 flushed; ratio = "
             "pseudo-median of per-pair ratios; ok: check / burst check; B/SM: blocks per SM; MHz: "
             "level / reference) ==", head]
    by_index: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        by_index.setdefault(r["index"], []).append(r)
    for i in sorted(by_index):
        rs = by_index[i]
        name = rs[0]["name"]
        params = compact(rs[0]["changes"])[:40]
        for r in (x for x in rs if x.get("stage") == "time"):
            def f(x: Any, spec: str) -> str:
                return format(x, spec) if isinstance(x, (int, float)) else "-"

            ok = ("y" if r.get("verified") else "N") + "/" + (
                "y" if r.get("burst_verified") else "N")
            ci = f"[{f(r.get('pct_ci_low'), '.1f')},{f(r.get('pct_ci_high'), '.1f')}]"
            mhz = f"{f(r.get('sm_clock'), '.0f')}/{f(r.get('ref_sm_clock'), '.0f')}"
            lines.append(
                f"{name:18s} {params:40s} {size_text(r['M'], r.get('N'), r.get('K')):>14s} "
                f"{ok:>5s} {f(r.get('tflops'), '7.1f')} "
                f"{f(r.get('ref_tflops'), '7.1f')} {f(r.get('pct_of_reference'), '6.1f')} "
                f"{ci:>13s} {f(r.get('pairs'), '5d')} {f(r.get('regs'), '4d')} "
                f"{f(r.get('blocks_per_sm'), '4d')} {mhz:>9s}")
        for r in [x for x in rs if "error" in x][:1]:
            lines.append(f"{name:18s} {params:40s} {r.get('stage', '')}: "
                         f"{str(r['error'])[:80]}")
    lines.append("ratio: % of the reference (register_2d's family: of siboehm's kernel 5 "
                 "where --sgemm-cuda was given, else of cuBLAS FP32)")
    return "\n".join(lines)
