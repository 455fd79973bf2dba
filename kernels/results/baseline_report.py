"""``gemmscope report A --baseline B``: the warning naming what differs between the two
runs, then one row per (level, shape, mode, GPU) with both values and the change, as text
safe on a terminal (both recordings are untrusted)."""

from __future__ import annotations

from ..protocol import recording
from ..protocol import records as rec
from .baseline import Pair, join, latest_results, mix_text, run_facts, warning
from .session_report import printable

# (column title, field, format, show the relative change)
COLUMNS = (("TFLOPS", "tflops", "{:.4g}", True), ("% of ref.", "pct_of_reference",
                                                   "{:.1f}%", False),
           ("SM MHz", "sm_clock_mhz_avg", "{:.0f}", False), ("W", "avg_power_w", "{:.0f}",
                                                               False),
           ("J/GEMM", "energy_j", "{:.3g}", True), ("regs", "regs", "{:.0f}", False),
           ("smem B", "smem_bytes", "{:.0f}", False))


MIX_TITLE = "main-loop mix run / base"


def cell(pair: Pair, field: str, fmt: str, relative: bool) -> str:
    """Both values of a field and, for ``relative`` ones, the change ("46.7 / 45.2
    (+3.3%)"); a dash for a side without it."""
    return _cell(pair, field, fmt, relative)


def _cell(pair: Pair, field: str, fmt: str, relative: bool) -> str:
    a, b = pair.value(field), pair.value(field, of_base=True)
    if a is None and b is None:
        return "–"
    text = f"{'–' if a is None else fmt.format(a)} / {'–' if b is None else fmt.format(b)}"
    change = pair.change(field) if relative else None
    if change is not None:
        text += f" ({100 * change:+.1f}%)"
    return text


def rows(pairs: list[Pair]) -> list[list[str]]:
    out = []
    for pair in pairs:
        level, M, N, K, mode, gpu = pair.key
        where = "both" if pair.run and pair.base else ("run only" if pair.run else
                                                       "baseline only")
        out.append([level, f"{M}×{N}×{K}", mode, gpu, where,
                    *(_cell(pair, f, fmt, rel) for _, f, fmt, rel in COLUMNS),
                    mix_text(pair.run_mix, pair.base_mix)])
    return out


def render(pairs: list[Pair], markdown: bool = False) -> list[str]:
    head = ["level", "shape", "mode", "GPU", "in", *(c[0] + " run / base" for c in COLUMNS),
            MIX_TITLE]
    body = rows(pairs)
    if markdown:
        def esc(s: str) -> str:
            return s.replace("|", "\\|")

        return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
                *("| " + " | ".join(esc(c) for c in r) + " |" for r in body)]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    line = "  ".join("-" * w for w in widths)
    return ["  ".join(c.ljust(w) for c, w in zip(head, widths, strict=True)).rstrip(), line,
            *("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in body)]


def baseline_lines(path: str, base_path: str, markdown: bool = False
                   ) -> tuple[list[str], list[str]]:
    """(the report's lines, the problems of either file), each printable."""
    run, base = recording.read_session(path), recording.read_session(base_path)
    facts = run_facts(run.header, run.events), run_facts(base.header, base.events)
    lines: list[str] = [f"{path} against the baseline {base_path}"]
    said = warning(*facts)
    lines.append(f"warning: {said}" if said else "the two runs match in GPU, driver, CUDA, "
                 "clocks, power limit, compiler and code")
    lines.append("")
    pairs = join(latest_results(run.header, run.events),
                 latest_results(base.header, base.events),
                 [e for e in run.events if isinstance(e, rec.Build)],
                 [e for e in base.events if isinstance(e, rec.Build)])
    lines += render(pairs, markdown)
    problems = [f"gemmscope report: {s.problem}" for s in (run, base) if s.problem]
    return [printable(x) for x in lines], [printable(x) for x in problems]
