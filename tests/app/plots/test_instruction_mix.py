"""The instruction-mix chart keeps its bar items as build events arrive one by one, and
still shows exactly the rows it was given."""

from __future__ import annotations

from gemmscope.app.plots.instruction_mix import InstructionMixChart


def _legend(chart) -> list[str]:
    return [label.text for _sample, label in chart.legend.items]


def test_new_rows_update_the_bars_in_place(qtbot):
    chart = InstructionMixChart()
    qtbot.addWidget(chart)
    chart.set_rows([("a", {"FFMA": 4, "LDS": 2})], selected="a")
    items = dict(chart.items)
    assert _legend(chart) == ["FFMA", "LDS"]
    chart.set_rows([("a", {"FFMA": 4, "LDS": 2}), ("b", {"FFMA": 8, "LDS": 1})],
                   selected="b")
    assert chart.items == items  # the same items, not made again
    assert chart.levels == ["a", "b"] and chart.stacks["LDS"] == ([4.0, 8.0], [2.0, 1.0])
    assert list(chart.items["FFMA"].opts["height"]) == [4.0, 8.0]
    widths = [pen.width() for pen in chart.items["FFMA"].opts["pens"]]
    assert widths[1] > widths[0]  # the selected level is outlined
    # a class that appears or goes away: the legend follows, in the classes' order
    chart.set_rows([("a", {"FFMA": 4, "BAR": 1})], selected=None)
    assert set(chart.items) == {"FFMA", "BAR"} and chart.items["FFMA"] is items["FFMA"]
    assert _legend(chart) == [c for c in chart.stacks]
    assert "LDS" not in _legend(chart)


def _legend_layout(chart) -> list[tuple[str, int, int]]:
    layout = chart.legend.layout
    return sorted((layout.itemAt(r, c).text, r, c) for r in range(layout.rowCount())
                  for c in range(layout.columnCount())
                  if layout.itemAt(r, c) is not None and hasattr(layout.itemAt(r, c), "text"))


def test_a_new_class_keeps_the_legend_entries_and_lays_out_as_a_fresh_legend(qtbot):
    rows = [("a", {"FFMA": 4, "LDS": 2}), ("b", {"FFMA": 8, "BAR": 1, "HMMA": 3, "LDS": 1})]
    chart = InstructionMixChart()
    qtbot.addWidget(chart)
    chart.set_rows(rows[:1])
    kept = {label.text: label for _sample, label in chart.legend.items}
    chart.set_rows(rows)
    labels = {label.text: label for _sample, label in chart.legend.items}
    assert all(labels[c] is kept[c] for c in kept)  # not made again
    fresh = InstructionMixChart()
    qtbot.addWidget(fresh)
    fresh.set_rows(rows)
    assert _legend(chart) == _legend(fresh)
    assert _legend_layout(chart) == _legend_layout(fresh)
    chart.set_rows(rows[:1])  # and back: the classes that went are gone from the layout
    assert _legend_layout(chart) == [("FFMA", 0, 1), ("LDS", 0, 3)]


def test_the_count_axis_is_rounded_up_and_set_only_when_it_changes(qtbot):
    chart = InstructionMixChart()
    qtbot.addWidget(chart)
    chart.set_rows([("a", {"FFMA": 100})])
    vb = chart.getPlotItem().vb
    assert vb.targetRange() == [[-0.6, 0.6], [0.0, 120.0]]  # 105, rounded up in steps of 20
    ranges = []
    vb.sigRangeChanged.connect(lambda *_: ranges.append(vb.targetRange()))
    chart.set_rows([("a", {"FFMA": 101})], selected="a")  # same axes: no range set
    assert ranges == []
    chart.set_rows([("a", {"FFMA": 101}), ("b", {"FFMA": 300})])
    assert vb.targetRange() == [[-0.6, 1.6], [0.0, 320.0]]
