"""Predicted against measured: the access model's whole-kernel shared-memory totals beside
the counters Nsight Compute measured for the same level and shape, where the session has
them (``counters`` events, written by ``gemmscope record --ncu``).

Rows are loads, stores and cp.async writes; column groups are bank conflicts, wavefronts
and instructions, each as model, ncu and the difference in percent of the measured value.
The numbers come from :mod:`gemmscope.app.core.counters`; this widget only lays them out.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from ...kernels.models import NCU_EXTRA_METRICS, NCU_METRICS, ComparisonRow
from ..core.counters import CountersComparison, compare_counters
from ..core.store import SessionStore
from ..theme import ANIMATION

NO_MEASUREMENT = "no ncu measurement in this session"
NOT_REPLAYED = "ncu measurement: not replayed yet (the recording has one for this level)"
LAUNCH_TEXT = {"one_block_per_sm": " (launched with one block per SM)",
               "as_launched": " (launched as the runner does: blocks share SMs)"}
OPS = (("ld", "loads"), ("st", "stores"), ("cp", "cp.async writes"))
QUANTITIES = (("conflicts", "bank conflicts"), ("wavefronts", "wavefronts"),
              ("instructions", "instructions"))
# metric name -> (op, quantity), from the key names in level_model ("ld_conflicts", ...)
CELL_OF = {name: tuple(key.split("_", 1))
           for key, name in (*NCU_METRICS.items(), *NCU_EXTRA_METRICS.items())}
CLOSE_PCT = 5.0  # a difference within this many percent is drawn in the "ok" colour


def fmt_count(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def fmt_diff(pct: float | None) -> str:
    return "n/a" if pct is None else f"{pct:+.1f}%"


def table_html(comparison: CountersComparison, earlier: str | None = None) -> str:
    """The comparison as a rich-text table (plus the notes under it); ``earlier``: the
    code key of the build measured, where the session re-ran the level since (a warning
    first: the counters are not of the code shown)."""
    c = comparison.counters
    how = LAUNCH_TEXT.get(c.launch or "", "")
    head = (f"<b>Whole kernel at {c.shape}, shared memory: the model against "
            f"{html.escape(c.tool)}</b>{html.escape(how)}")
    if earlier is not None:
        head = f"<b>{html.escape(earlier_counters_text(c.level, earlier))}</b><br>{head}"
    if comparison.error:
        return f"{head}<br>no model to compare: {html.escape(comparison.error)}"
    cells: dict[tuple[str, str], ComparisonRow] = {}
    for row in comparison.rows:
        if row.metric in CELL_OF:
            op, quantity = CELL_OF[row.metric]
            cells[(op, quantity)] = row
    quantities = [q for q in QUANTITIES if any(k[1] == q[0] for k in cells)]
    ops = [o for o in OPS if any(k[0] == o[0] for k in cells)]
    out = [head, '<table cellspacing="0" cellpadding="3">', "<tr><th></th>"]
    out += [f'<th colspan="3">{title}</th>' for _, title in quantities]
    out.append("</tr><tr><th></th>")
    out += ["<th>model</th><th>ncu</th><th>diff</th>" for _ in quantities]
    out.append("</tr>")
    for op, title in ops:
        out.append(f'<tr class="{op}"><th align="left">{title}</th>')
        for quantity, _ in quantities:
            cell = cells.get((op, quantity))
            if cell is None:
                out.append('<td></td><td></td><td></td>')
                continue
            row = cell
            close = row.diff_pct is not None and abs(row.diff_pct) <= CLOSE_PCT
            colour = ANIMATION.ok if close else ANIMATION.conflict
            out.append(f'<td align="right">{fmt_count(row.model)}</td>'
                       f'<td align="right">{fmt_count(row.measured)}</td>'
                       f'<td align="right"><font color="{colour}">'
                       f"{fmt_diff(row.diff_pct)}</font></td>")
        out.append("</tr>")
    out.append("</table>")
    notes = [n for n in (comparison.caveat, comparison.note) if n]
    out += [f"<i>{html.escape(n)}</i><br>" for n in notes]
    return "".join(out)


def earlier_counters_text(level: str, measured: str) -> str:
    """The warning under counters measured on a level's code before the session re-ran it."""
    return (f"⚠ ncu measured an earlier build of {level} (code {measured}): the recording "
            f"re-ran it since with other code, which these counters are not of. "
            f"`gemmscope record --update FILE` profiles the new code again.")


class CountersPanel(QLabel):
    """Predicted and measured shared-memory counters of one level, or why there are none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setToolTip("Model: kernels/models, whole kernel at the measured shape and "
                        "template parameters. ncu: l1tex bank-conflict and wavefront "
                        "counters (shared ld/st) and smsp instruction counts, from "
                        "`gemmscope record --ncu`. diff = (model - ncu) / ncu. The "
                        "recorder launches each level with one block per SM: where "
                        "blocks share an SM, l1tex also counts their contention for the "
                        "banks as conflicts, which no block's access pattern has "
                        "(docs/perf-notes.md, benchmarks/ncu_residue.py).")
        self.comparison: CountersComparison | None = None
        self.show_level(None, None)

    def show_level(self, store: SessionStore | None, level_id: str | None) -> None:
        counters = (store.counters_for(level_id)
                    if store is not None and level_id is not None else None)
        if counters is None:
            self.comparison = None
            coming = store is not None and store.not_replayed_yet("counters", level_id)
            self.setText(f"<i>{NOT_REPLAYED if coming else NO_MEASUREMENT}</i>")
            return
        self.comparison = compare_counters(counters)
        assert store is not None
        earlier = store.earlier_code("counters", counters.level, store.build_for(counters.level))
        self.setText(table_html(self.comparison, earlier))
