"""Predicted against measured in the banks view: the numbers shown are the model's totals
and the counters event's values (invented counters from tests/support/synthetic_session.py)."""

from __future__ import annotations

import re

import pytest
import synthetic_session as syn

from gemmscope.app.core.store import SessionStore
from gemmscope.app.views.banks import BanksView
from gemmscope.app.views.counters_panel import NO_MEASUREMENT
from gemmscope.kernels.models import totals
from gemmscope.kernels.models.level_model import NCU_EXTRA_METRICS, NCU_METRICS
from gemmscope.kernels.protocol.decoding import of


def shown_rows(panel) -> dict[str, list[str]]:
    """op -> the text of each cell of its row, read back from the label's table."""
    rows = re.findall(r'<tr class="(\w+)">(.*?)</tr>', panel.text())
    return {op: [re.sub(r"<[^>]+>", "", cell)
                 for cell in re.findall(r"<td[^>]*>(.*?)</td>", body)] for op, body in rows}


def expected(model: int, measured: float | None) -> list[str]:
    if measured is None:
        return [f"{model:,}", "n/a", "n/a"]
    return [f"{model:,}", f"{measured:,.0f}", f"{100 * (model - measured) / measured:+.1f}%"]


@pytest.fixture
def banks(qtbot):
    view = BanksView("register_2d")
    qtbot.addWidget(view)
    view.set_animated(False)
    view.resize(1200, 760)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_banks_view_shows_the_model_beside_the_measured_counters(qtbot, banks):
    store = SessionStore()
    for ev in (syn.header(), syn.counters("register_2d", 5.0)):
        store.handle(of(ev))
    banks.bind(store)
    panel = banks.counters
    qtbot.waitUntil(lambda: panel.height() > 60)  # the layout gives the table its rows
    assert panel.isVisible()
    # under the picture (in a scroll area: a small screen may not hold the whole table)
    assert banks.counters_area.geometry().top() >= banks.canvas.geometry().bottom()
    model = totals("register_2d", *syn.COUNTERS_SHAPE)
    m = syn.COUNTERS_METRICS
    rows = shown_rows(panel)
    assert set(rows) == {"ld", "st"}  # no cp.async counters were measured
    ld, st = rows["ld"], rows["st"]
    assert ld[0:3] == expected(model.ld.conflicts, m[NCU_METRICS["ld_conflicts"]])
    assert ld[3:6] == expected(model.ld.wavefronts, m[NCU_METRICS["ld_wavefronts"]])
    assert ld[6:9] == expected(model.ld.instructions,
                               m[NCU_EXTRA_METRICS["ld_instructions"]])
    assert st[0:3] == expected(model.st.conflicts, m[NCU_METRICS["st_conflicts"]])
    assert st[3:6] == expected(model.st.wavefronts, None)  # ncu read n/a
    assert st[6:9] == ["", "", ""]  # st instructions were not measured
    text = panel.text()
    assert f"at {syn.COUNTERS_SHAPE[0]}×{syn.COUNTERS_SHAPE[1]}×{syn.COUNTERS_SHAPE[2]}" in text
    assert NO_MEASUREMENT not in text
    assert "one block per SM" in text  # how the profiled launch was made


def test_a_level_without_counters_says_so(banks):
    assert NO_MEASUREMENT in banks.counters.text()  # nothing bound yet
    store = SessionStore()
    for ev in (syn.header(), syn.counters("register_2d", 5.0)):
        store.handle(of(ev))
    banks.bind(store)
    banks.set_level("vectorized")
    assert NO_MEASUREMENT in banks.counters.text() and shown_rows(banks.counters) == {}
    banks.set_level("register_2d")
    assert shown_rows(banks.counters)["ld"]
    store.reset()  # a new session
    banks.refresh(store.take_changes())
    assert NO_MEASUREMENT in banks.counters.text()


def test_the_window_shows_counters_of_a_replayed_recording(make_window, tmp_path):
    path = syn.write(tmp_path / "counters.jsonl", syn.with_counters())
    window = make_window()
    assert window.open_recording(path)
    window.play_instant()
    view = window.named_widget("banks")
    window.ladder.select_level("smem_tiled")
    window.flush_views()
    model = totals("smem_tiled", *syn.COUNTERS_SHAPE)
    ld_w = syn.COUNTERS_METRICS[NCU_METRICS["ld_wavefronts"]]
    assert shown_rows(view.counters)["ld"][3:6] == expected(model.ld.wavefronts, ld_w)
    window.ladder.select_level("naive")
    assert NO_MEASUREMENT in view.counters.text()


def _register_2d_build(code_key: str, t: float) -> dict:
    """The bundled H200 recording's register_2d build event, with this code key."""
    from importlib import resources

    bundled = resources.files("gemmscope.resources") / "sessions" / "h200-ladder.jsonl.gz"
    build = next(e for e in syn.file_events(bundled)
                 if e["type"] == "build" and e["level"] == "register_2d")
    return {**build, "code_key": code_key, "t": t}


def test_counters_of_a_build_re_run_since_carry_a_warning_above_the_table(qtbot, banks):
    store = SessionStore()
    for ev in (syn.header(), _register_2d_build("a" * 16, 1.0), syn.counters("register_2d", 5.0),
               _register_2d_build("b" * 16, 9.0)):  # record --update re-ran the level
        store.handle(of(ev))
    banks.bind(store)
    text = re.sub(r"<[^>]+>", "", banks.counters.text())
    assert text.startswith(f"⚠ ncu measured an earlier build of register_2d (code {'a' * 16})")
    assert set(shown_rows(banks.counters)) == {"ld", "st"}  # the numbers stay, said as old


def test_counters_of_the_build_shown_carry_no_warning(qtbot, banks):
    store = SessionStore()
    for ev in (syn.header(), _register_2d_build("a" * 16, 1.0),
               syn.counters("register_2d", 5.0), _register_2d_build("a" * 16, 9.0)):
        store.handle(of(ev))
    banks.bind(store)
    assert "earlier build" not in banks.counters.text()
