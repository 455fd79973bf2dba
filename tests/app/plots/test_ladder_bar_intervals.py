"""Issue 41 item 4 in the app: the ladder bars draw a paired ratio's 95% interval as error
bars whose ends are the interval (read back from the ErrorBarItem), their labels clear of
them; the view state's ``per_clock`` switches the bars to TFLOPS/GHz and % of cuBLAS at
equal clocks; older recordings (no interval) draw none and say "unpaired"."""

from __future__ import annotations

import numpy as np
import pytest
import synthetic_session as syn

from gemmscope.app.core.store import SessionStore
from gemmscope.app.plots.ladder_bar_rows import PCT_CLOCK, PCT_REF, TFLOPS_PER_GHZ, hover_text
from gemmscope.app.plots.ladder_bars import LadderBars
from gemmscope.app.views.chart_rows import ladder_rows
from gemmscope.kernels.protocol.decoding import of


def _store(events) -> SessionStore:
    store = SessionStore()
    for ev in events:
        store.handle(of(ev))
    return store


STORES: dict[int, SessionStore] = {}  # each chart's store, read by the tests


@pytest.fixture
def bars(qtbot):
    def make(events, metric: str = "TFLOPS", log: bool = False) -> LadderBars:
        chart = LadderBars()
        qtbot.addWidget(chart)
        chart.resize(1280, 520)
        store = STORES[id(chart)] = _store(events)
        chart.set_log_axis(log)
        chart.set_metric(metric)
        chart.set_rows(ladder_rows(store), header=True)
        return chart
    yield make
    STORES.clear()


def _paired_results() -> dict[str, dict]:
    return {e["level"]: e for e in syn.with_pairs() if e["type"] == "result"
            and e.get("paired") and tuple((e["M"], e["N"], e["K"])) == syn.SHAPE}


@pytest.mark.parametrize("log", [False, True])
def test_error_bars_on_the_percent_bars_are_the_intervals(bars, log):
    # (the log box on leaves a percentage on a linear axis)
    chart = bars(syn.with_pairs(), PCT_REF, log=log)
    paired = _paired_results()
    drawn = chart.drawn_intervals()
    assert set(drawn) == set(paired)
    for level, e in paired.items():
        assert drawn[level] == (pytest.approx(e["pct_ci_low"]), pytest.approx(e["pct_ci_high"]))
    # the item's own data: centred on the bars' tops, the bars' median the middle
    opts = chart.error_bars.opts
    assert len(opts["x"]) == len(paired)
    y = np.asarray(opts["y"])
    mid = [paired[chart.level_at(x)]["pct_of_reference"] for x in opts["x"]]
    assert not chart.is_log()  # (a percentage keeps a linear axis)
    assert y == pytest.approx(mid)
    assert chart.INTERVAL_LEGEND in [e.text for e in chart.side_legend.entries]


@pytest.mark.parametrize("log", [False, True])
def test_error_bars_on_the_tflops_bars_carry_the_ratios_interval(bars, log):
    chart = bars(syn.with_pairs(), "TFLOPS", log=log)
    assert chart.is_log() == log
    for level, e in _paired_results().items():
        low, high = chart.drawn_intervals()[level]
        scale = e["tflops"] / e["pct_of_reference"]
        assert (low, high) == (pytest.approx(e["pct_ci_low"] * scale),
                               pytest.approx(e["pct_ci_high"] * scale))


@pytest.mark.parametrize(("metric", "log"), [(PCT_REF, False), ("TFLOPS", False),
                                             ("TFLOPS", True)])
def test_value_labels_sit_over_the_error_bars(bars, metric, log):
    chart = bars(syn.with_pairs(), metric, log=log)
    drawn = chart.drawn_intervals()
    checked = 0
    for i, row in enumerate(chart.rows):
        label = chart.labels[i]
        if row.level in drawn and label.isVisible():
            high = drawn[row.level][1]
            # (anchored at its bottom centre: its y is its bottom, in view coordinates)
            assert label.pos().y() >= (np.log10(high) if chart.is_log() else high) - 1e-9
            checked += 1
    assert checked >= len(drawn) // 2


def test_the_per_clock_toggle_switches_what_the_bars_draw(bars):
    chart = bars(syn.with_pairs(), "TFLOPS")
    tflops = chart.drawn_values().copy()
    store = STORES[id(chart)]
    store.view.set(per_clock=True)
    chart.set_rows(ladder_rows(store))
    assert chart.shown_metric == TFLOPS_PER_GHZ and TFLOPS_PER_GHZ in chart.axis_label()
    rows = {r.level: r for r in chart.rows}
    expected = [store.row(store.ladder_result(r.level)).tflops_per_ghz for r in chart.rows]
    assert chart.drawn_values() == pytest.approx(expected)
    # 300 TFLOPS at the capped 1755 MHz: 170.9 TFLOPS/GHz
    assert rows["wmma"].tflops_per_ghz == pytest.approx(300.0 / 1.755)
    assert not np.allclose(chart.drawn_values(), tflops)
    # and the percentage at equal clocks: (tflops / clock) / (ref / ref clock)
    chart.set_metric(PCT_REF)
    assert chart.shown_metric == PCT_CLOCK
    wmma = chart.rows.index(rows["wmma"])
    assert chart.drawn_values()[wmma] == pytest.approx(
        100 * (300.0 / syn.SM_CLOCK_CAPPED_MHZ) / (700.0 / syn.SM_CLOCK_CAPPED_MHZ))
    naive = chart.rows.index(rows["naive"])
    assert chart.drawn_values()[naive] == pytest.approx(
        100 * (0.3 / syn.SM_CLOCK_MAX_MHZ) / (50.0 / syn.SM_CLOCK_MAX_MHZ))
    for level, (low, high) in chart.drawn_intervals().items():
        assert (low, high) == (pytest.approx(rows[level].pct_clock_ci[0]),
                               pytest.approx(rows[level].pct_clock_ci[1]))
    store.view.set(per_clock=False)
    chart.set_rows(ladder_rows(store))
    assert chart.shown_metric == PCT_REF


def test_the_hover_says_the_interval_and_pairs(bars):
    chart = bars(syn.with_pairs())
    row = next(r for r in chart.rows if r.level == "wmma")
    text = hover_text(row)
    e = _paired_results()["wmma"]
    assert f"95% interval {e['pct_ci_low']:.1f}–{e['pct_ci_high']:.1f}%, 40 pairs" in text
    assert "3 of 40 pairs throttled" in text
    assert "TFLOPS/GHz at 1755 MHz" in text and "of cuBLAS at equal clocks" in text


def test_an_old_recording_draws_no_error_bars_and_says_unpaired(bars):
    chart = bars(syn.events(), PCT_REF)
    assert chart.drawn_intervals() == {} and not chart.error_bars.isVisible()
    assert chart.UNPAIRED_LEGEND in [e.text for e in chart.side_legend.entries]
    row = next(r for r in chart.rows if r.level == "wmma")
    assert "(unpaired: no interval)" in hover_text(row)
    assert len(chart.drawn_values()) == len(syn.LADDER_TFLOPS)


def test_the_bundled_recording_draws_intervals_for_its_paired_results_only(bars):
    """The bundled recording mixes levels measured again in pairs (record --update) with
    older unpaired ones: error bars on the first, the "unpaired" legend for the others."""
    from gemmscope.app.window.sources import bundled_session
    from gemmscope.kernels.protocol.recording import read_session

    session = read_session(str(bundled_session()))
    chart = bars([session.header, *session.events], PCT_REF)
    assert chart.rows and (chart.drawn_values() > 0).any()
    paired = {r.level for r in chart.rows if r.pct_ci is not None}
    assert paired and set(chart.drawn_intervals()) == paired
    assert any(r.unpaired for r in chart.rows)
    assert chart.UNPAIRED_LEGEND in [e.text for e in chart.side_legend.entries]
