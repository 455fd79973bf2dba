"""The Banks view explains its rows and phases and uses its space (issue 43 item 6): under
the lane row a legend says what a column, a row, a cell and a phase are, with the phases
of the instruction shown (8 lanes each for a 128-bit load in four phases, all 32 for a
32-bit one); the rows grow with a taller canvas and the lane row follows the last row,
so a tall canvas holds a larger picture rather than an empty band."""

from __future__ import annotations

import pytest

from gemmscope.app.views.banks import LANES_GAP_PX, MAX_ROW_LINES, BanksView


@pytest.fixture
def make(qtbot):
    def build(level_id: str, size=(1100, 640)) -> BanksView:
        view = BanksView(level_id)
        qtbot.addWidget(view)
        view.set_animated(False)
        view.resize(*size)
        view.show()
        qtbot.waitExposed(view)
        return view
    return build


def painted(view: BanksView) -> list[str]:
    view.grab()  # painted: the canvas lists what it drew
    return list(view.banks.drawn_texts)


def test_the_legend_says_what_a_row_and_a_phase_are_for_a_wide_load(make):
    view = make("vectorized")
    view.select_instruction("LDS.128 Bs[k*BN")
    rep = view.banks.report()
    assert rep is not None and rep.phases > 1
    legend = view.banks.legend_text()
    assert legend in painted(view)
    assert "A row: one wavefront" in legend and "A column: one of the 32 banks" in legend
    assert f"A phase (ph0-ph{rep.phases - 1}): the {rep.phase_lanes} lanes" in legend
    assert "128-bit" in legend


def test_the_legend_of_a_32_bit_access_says_it_has_one_phase(make):
    view = make("smem_tiled")
    rep = view.banks.report()
    assert rep is not None and rep.phases == 1
    legend = view.banks.legend_text()
    assert "One phase (ph0): all 32 lanes" in legend and legend in painted(view)


def test_the_legend_sits_under_the_lanes_inside_the_picture(make):
    view = make("register_2d")
    view.select_instruction("LDS.128 Bs[k*BN")
    painted(view)
    c = view.banks
    legend = c.legend_rect()
    assert legend is not None
    assert legend.top() >= c.lane_rect(0).bottom()
    assert legend.bottom() <= c.height()
    assert c.cut_texts == []


def test_a_taller_canvas_gets_taller_rows_and_the_lanes_follow_the_last_row(make):
    view = make("register_2d", (1100, 560))
    view.select_instruction("LDS.128 Bs[k*BN")
    c = view.banks
    painted(view)
    short = c.cell_rect(0, 0, int(c.report().lane_bank[0])).height()
    view.resize(1100, 1000)
    painted(view)
    rep = c.report()
    tall = c.cell_rect(0, 0, int(rep.lane_bank[0])).height()
    assert tall > short
    last_phase = rep.phases - 1
    last_rank = int(rep.load[last_phase].max()) - 1
    bottom = max(c.cell_rect(last_phase, last_rank, b).bottom() for b in range(32))
    assert 0 <= c.lane_rect(0).top() - bottom <= LANES_GAP_PX + 2
    # the rows take the room the summary and the legend leave, up to their largest
    legend = c.legend_rect()
    assert legend is not None
    summary_bottom = 4 + 3 * c.line_px()
    free = (c.bank_header_rect(0).top() - summary_bottom) + (c.height() - legend.bottom())
    assert tall + 1 == pytest.approx(MAX_ROW_LINES * c.line_px()) or free < tall + 20
