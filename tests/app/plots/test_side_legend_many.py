"""A legend of many entries (a recording of a thousand GPUs names each) is laid out in time
linear in its entries: each text is measured once per type size, and the entries that fit
the rows it may take are found in a few layouts, not one per entry. The counts are
asserted, not the time (benchmarks/many_gpus.py times the whole opening)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFontMetricsF

from gemmscope.app.plots.side_legend import LegendEntry, SideLegend


def _counted(monkeypatch, n: int, hard_height: float) -> tuple[int, int, SideLegend]:
    """(texts measured, layouts tried) when a legend below a plot is given ``n``
    entries."""
    measured: list[int] = []
    flows: list[int] = []
    real_advance = QFontMetricsF.horizontalAdvance
    real_flow = SideLegend._flow

    def advance(self, *args):  # type: ignore[no-untyped-def]
        measured.append(1)
        return real_advance(self, *args)

    def flow(self, width, entries):  # type: ignore[no-untyped-def]
        flows.append(1)
        return real_flow(self, width, entries)

    legend = SideLegend()
    legend.set_below(True, max_height=60, width=600, hard_height=hard_height)
    monkeypatch.setattr(QFontMetricsF, "horizontalAdvance", advance)
    monkeypatch.setattr(SideLegend, "_flow", flow)
    legend.set_entries([LegendEntry(f"GPU {i} (NVIDIA H200)", "#336699") for i in range(n)])
    monkeypatch.undo()
    return len(measured), len(flows), legend


@pytest.mark.parametrize("hard_height", [40.0, 90.0, 300.0])
def test_a_legend_of_many_entries_costs_linear_time(qtbot, monkeypatch, hard_height):
    counts = {n: _counted(monkeypatch, n, hard_height) for n in (100, 1000, 3000)}
    for n, (measured, flows, legend) in counts.items():
        sizes = len(legend._sizes())
        # each text once per type size tried, and a note of "… N more" per layout
        assert measured <= n * sizes + 2 * flows, (n, measured)
        # the layouts tried: one per type size and a halving search, never one per entry;
        # twice (the height it asks for, then the resize that gives it)
        assert flows <= 2 * (sizes + n.bit_length() + 2), (n, flows)
        assert legend.rows() <= max(1, int((hard_height - 6) // legend._line_h()))
        shown = legend.shown
        if shown != legend.entries:  # cut: "… N more" names the rest
            more = int(shown[-1].text.split()[1])
            assert len(shown) - 1 + more == n


def test_the_cut_keeps_the_most_entries_that_fit(qtbot, monkeypatch):
    """The halving finds what the walk down from every entry found: the most that fit,
    one more would not."""
    _, _, legend = _counted(monkeypatch, 500, 60.0)
    kept = len(legend.shown) - 1
    rows = max(1, int((legend.hard_height - 6) // legend._line_h()))
    more = LegendEntry(f"… {500 - kept - 1} more: hover a curve", legend.color, kind="note")
    legend._flow(600, [*legend.entries[:kept + 1], more])
    assert legend._flow_rows > rows
