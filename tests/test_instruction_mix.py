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
