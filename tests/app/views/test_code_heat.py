"""Per-line counters in the app: the Code view's heat map on SASS and source lines, and the
banks view's conflicting lines linked to the Code view, on the bundled H200 recording with
a source_counters event made from the H200's source page of register_2d
(tests/fixtures/ncu_source/). Values are read back from what the widgets drew."""

from __future__ import annotations

import csv
import io
import json
from importlib import resources
from typing import Any

import fed_store
import msgspec
import places
import pytest
import synthetic_session as syn
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel

from gemmscope.app.core import builds, source_heat
from gemmscope.app.core.source_heat import Metric
from gemmscope.app.core.store import SessionStore
from gemmscope.app.theme import SASS_SELECTION, SOURCE_HEAT
from gemmscope.kernels.profile import ncu_source_step as step
from gemmscope.kernels.profile.ncu_source import parse_cuda_sass_page, parse_sass_page
from gemmscope.kernels.protocol.decoding import decode, of
from gemmscope.kernels.protocol.events import dumps
from gemmscope.kernels.protocol.records import Build, SourceCounters

PAGES = places.FIXTURES / "ncu_source"
BUNDLED = resources.files("gemmscope.resources") / "sessions" / "h200-ladder.jsonl.gz"
CU = "kernels/cuda/register_2d.cu"


def register_2d_event(**over) -> dict:
    """The source_counters event of the H200's register_2d page, through the protocol."""
    page = parse_sass_page((PAGES / "register_2d_sass.csv").read_text())
    where = parse_cuda_sass_page((PAGES / "register_2d_cudasass.csv").read_text(),
                                 [CU, "kernels/cuda/common.cuh"])
    ev = step.event("register_2d", 1024, 1024, 1024,
                    step.Outcome(step.Status.OK, page=page, where=where, variant="scalar"),
                    1e6, "2025.3.1.0")
    ev.update(over)
    decode(dumps(ev))  # a valid event: what the decoder reads
    return json.loads(dumps(ev))


def page_values(column: str) -> dict[int, int]:
    """offset -> the column's value, read from the fixture with the csv module."""
    rows = list(csv.reader(io.StringIO((PAGES / "register_2d_sass.csv").read_text())))
    head = rows[1]
    body = [r for r in rows[2:] if r and r[0].startswith("0x")]
    base = min(int(r[0], 16) for r in body)
    return {int(r[0], 16) - base: int(r[head.index(column)]) for r in body}


def measured_on(ev: dict) -> bool:
    """Whether a build event is the register_2d build the fixture page was measured on: its
    SASS agrees with the page's instructions (the bundled recording also holds register_2d
    builds of later code, re-recorded by ``record --update`` after the page was taken)."""
    if ev["type"] != "build" or ev["level"] != "register_2d":
        return True
    rows = of(register_2d_event()).lines or []
    return source_heat.agreement_problem(rows, of(ev)) is None


@pytest.fixture(scope="module")
def events():
    """The bundled session without its own per-line counters (each test adds its own),
    its register_2d build the one the fixture page was measured on."""
    kept = [e for e in syn.file_events(BUNDLED)
            if e["type"] != "source_counters" and measured_on(e)]
    assert any(e["type"] == "build" and e["level"] == "register_2d" for e in kept)
    return kept


def fed(events, *extra: dict) -> SessionStore:
    return fed_store.fed(events, *extra)


def color(c: QColor | None) -> str | None:
    return None if c is None else c.name()


def test_sass_lines_carry_the_measured_values_and_heat(code_view, events):
    v = code_view(fed(events, register_2d_event()))
    stalls = page_values("Warp Stall Sampling (All Samples)")
    assert v.heat_bar.chosen() is Metric.STALLS and v.heat.reason is None
    assert v.sass.values is not None
    shown = dict(zip([ln.offset for ln in v.sass.lines], v.sass.values, strict=True))
    for offset, value in shown.items():
        # the page was trimmed: lines not on it are unknown (n/a), never zero
        assert value == (stalls[offset] if offset in stalls else None)
    text = v.sass.toPlainText().splitlines()
    hottest = max((i for i, x in enumerate(v.sass.values) if x is not None),
                  key=lambda i: v.sass.values[i])
    assert text[hottest].lstrip().startswith(f"{v.sass.values[hottest]:,.0f} │")
    assert color(v.sass.line_color(hottest)) == QColor(SOURCE_HEAT).name()
    unknown = v.sass.values.index(None)
    assert v.sass.line_color(unknown) is None and text[unknown].lstrip().startswith("n/a")
    assert "n/a" in v.heat_bar.text.text() and "2025.3.1.0" in v.heat_bar.text.text()


def test_the_conflicts_metric_heats_the_lds128_lines_and_their_source_line(code_view, events):
    v = code_view(fed(events, register_2d_event()))
    v.heat_bar.set_metric(Metric.CONFLICTS)
    excess = {o: n for o, n in page_values("L1 Wavefronts Shared Excessive").items() if n}
    hot = [i for i, ln in enumerate(v.sass.lines) if ln.offset in excess]
    assert hot and set(v.sass.heat) == set(hot)
    assert {v.sass.lines[i].mnemonic for i in hot} == {"LDS.128"}
    assert f"{sum(page_values('L1 Wavefronts Shared Excessive').values()):,}" in \
        v.heat_bar.text.text()
    # on the source: the sum of its SASS lines' values, on the line they come from
    kernel = v.kernel_lines()
    want: dict[int, int] = {}
    for ln in kernel:
        where = builds.in_file(ln, CU)
        if ln.offset in excess and where:
            want[where[1]] = want.get(where[1], 0) + excess[ln.offset]
    assert {n + 1 for n in v.source.heat} == set(want)
    top = max(want, key=want.get)
    assert color(v.source.line_color(top - 1)) == QColor(SOURCE_HEAT).name()
    # a click on that source line selects its SASS lines over the heat
    v.source.go_to_line(top)
    assert v.sass.selected and set(v.sass.selected) & set(hot)
    assert color(v.sass.line_color(v.sass.selected[0])) == QColor(SASS_SELECTION).name()


def test_an_event_listing_every_instruction_makes_unlisted_lines_zero(code_view, events):
    n = len(builds.main_loop_lines(fed(events).build_for("register_2d")))
    store = fed(events)
    total = len(source_heat.parse(store.build_for("register_2d").sass))
    v = code_view(fed(events, register_2d_event(lines_total=total)))
    assert len(v.sass.values) == n and None not in v.sass.values


@pytest.mark.parametrize("over, says", [
    ({"status": "refused", "lines": None, "reason": "==ERROR== ERR_NVGPUCTRPERM ..."},
     "ERR_NVGPUCTRPERM"),
    ({"variant": "vector"}, "profiled the vector variant"),
    ({"columns": {}}, "no column for warp-stall samples"),
])
def test_absent_or_unplaceable_counters_show_the_reason_not_zeros(code_view, events, over,
                                                                   says):
    v = code_view(fed(events, register_2d_event(**over)))
    assert says in v.heat_bar.text.text()
    assert v.sass.values is None and v.sass.heat == {} and v.source.heat == {}
    assert "│" not in v.sass.toPlainText()


def test_a_recording_without_source_counters_says_how_to_get_them(code_view, events):
    v = code_view(fed(events))
    assert "--ncu-source" in v.heat_bar.text.text()
    assert v.sass.values is None and v.source.heat == {}


def test_instructions_that_differ_from_the_build_are_not_placed(events):
    ev = register_2d_event()
    for row in ev["lines"]:
        row[1] = "FFMA R0, R0, R0, R0"
    h = source_heat.heat(of(ev), fed(events).build_for("register_2d"), Metric.STALLS)
    assert "differ from the build's" in h.reason and h.values == {}


def _rebuilt(events, code_key: str, sass: str | None = None) -> dict:
    """register_2d's build event again, as ``record --update`` appends it after a change:
    the same variant and parameters, another code key (and, given, other SASS)."""
    build = next(e for e in events if e["type"] == "build" and e["level"] == "register_2d")
    return {**build, "code_key": code_key, "t": build["t"] + 1e4,
            **({"sass": sass} if sass is not None else {})}


def test_counters_of_a_build_the_session_re_ran_since_say_so_and_are_not_placed(
        code_view, events):
    measured = next(e for e in events if e["type"] == "build"
                    and e["level"] == "register_2d")["code_key"]
    # the code changed after ncu's measurement: other instructions
    other = "\n".join(line.replace("FFMA", "FMUL") for line in
                      next(e for e in events if e["type"] == "build"
                           and e["level"] == "register_2d")["sass"].splitlines())
    store = fed(events, register_2d_event(), _rebuilt(events, "f" * 16, other))
    assert store.earlier_code("source_counters", "register_2d",
                              store.build_for("register_2d")) == measured
    v = code_view(store)
    assert v.heat.values == {} and v.heat.reason.startswith(
        f"ncu measured an earlier build of register_2d (code {measured})")
    assert "record --update" in v.heat.reason
    assert v.sass.values is None or all(x is None for x in v.sass.values)


def test_counters_of_an_earlier_code_with_the_same_instructions_are_placed_and_said(
        code_view, events):
    measured = next(e for e in events if e["type"] == "build"
                    and e["level"] == "register_2d")["code_key"]
    store = fed(events, register_2d_event(), _rebuilt(events, "e" * 16))
    v = code_view(store)
    assert v.heat.reason is None and v.heat.values
    assert f"measured on the build before (code {measured})" in v.heat.summary


def test_counters_measured_after_the_re_run_are_of_the_new_code(events):
    store = fed(events, _rebuilt(events, "d" * 16), register_2d_event())
    assert store.earlier_code("source_counters", "register_2d",
                              store.build_for("register_2d")) is None


def test_banks_view_links_a_conflicting_line_to_the_code_view(qtbot, make_window, events,
                                                              tmp_path):
    path = tmp_path / "with_source_counters.jsonl"
    # msgspec writes the 265,000 events in 0.7 s, json.dumps in 5
    path.write_bytes(b"".join(msgspec.json.encode(e) + b"\n"
                              for e in [*events, register_2d_event()]))
    window = make_window()
    assert window.open_recording(path)
    window.play_instant()
    window.show()
    window.ladder.select_level("register_2d")
    banks = window.named_widget("banks")
    qtbot.waitExposed(banks)
    window.flush_views()
    links = banks.links
    excess = {o: n for o, n in page_values("L1 Wavefronts Shared Excessive").items() if n}
    assert [r.offset for r in links.rows] == sorted(excess, key=lambda o: -excess[o])
    assert links.list.count() == len(excess)
    first = links.rows[0]
    assert first.source[0] == CU and "LDS.128" in links.list.item(0).text()
    assert f"{first.excess:,.0f} excess" in links.list.item(0).text()
    rect = links.list.visualItemRect(links.list.item(0))
    qtbot.mouseClick(links.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    code = window.views["code"]
    assert window.tabs.currentWidget() is code
    assert code.level_id == "register_2d" and code.source_path == CU
    assert code.source.textCursor().blockNumber() + 1 == first.source[1]
    assert code.sass.selected == builds.lines_at(code.sass.lines, CU, first.source[1])
    assert any(code.sass.lines[i].offset == first.offset for i in code.sass.selected)


def test_banks_view_says_why_there_are_no_links(qtbot, events):
    from gemmscope.app.views.banks import BanksView

    view = BanksView("register_2d")
    qtbot.addWidget(view)
    view.bind(fed(events))
    assert "--ncu-source" in view.links.heading.text() and view.links.list.count() == 0
    view.bind(fed(events, register_2d_event(status="timeout", lines=None,
                                             reason="ncu ran past 90 s")))
    assert "ncu ran past 90 s" in view.links.heading.text()
    assert view.links.list.isHidden()


def test_counters_of_another_instantiation_name_the_parameters_that_differ(code_view, events):
    """A level that picks its parameters per shape (the FP8 tile width) may have been
    profiled as another instantiation than the build shown: the heat bar says which
    parameters differ instead of placing counters on the wrong instructions."""
    build = fed(events).build_for("register_2d")
    name, (first, value) = build.kernel, next(iter(build.params.items()))
    args = source_heat.template_args(name)
    assert args is not None and args[0] == str(value)
    template = name[:name.index("<")]
    other = ", ".join(f"(int){a}" for a in [str(2 * value), *args[1:]])  # ncu's spelling
    ncu_name = f"void {template}<{other}>(int, int, int, float *)"
    assert source_heat.template_args(ncu_name)[0] == str(2 * value)
    v = code_view(fed(events, register_2d_event(kernel=ncu_name)))
    text = v.heat_bar.text.text()
    assert f"with {first}={2 * value}" in text and f"has {first}={value}" in text
    assert v.sass.values is None and v.source.heat == {}
    # the same instantiation written the ncu way is the build's: the counters are placed
    same = ", ".join(f"(int){a}" for a in args)
    v = code_view(fed(events, register_2d_event(kernel=f"void {template}<{same}>(int)")))
    assert v.sass.values is not None


@pytest.fixture(scope="module")
def recorded():
    """The bundled session whole: its FP8 levels were profiled at 1024^3, where they pick
    BN = 192, and last run at shapes where they keep their own 256."""
    return syn.file_events(BUNDLED)


@pytest.mark.parametrize("level_id", ["fp8_block_scaled", "fp8_stream_k"])
def test_the_build_ncu_profiled_can_be_shown_with_its_heat_and_left_again(
        qtbot, code_view, recorded, level_id):
    store = fed(recorded)
    counters, latest = store.source_counters[level_id], store.build_for(level_id)
    differ = source_heat.other_instantiation(counters, latest)
    assert differ is not None  # what the bundled recording holds: see the fixture
    v = code_view(store, level_id)
    assert v.build is latest and v.heat.reason is not None and v.sass.values is None
    assert v.heat_bar.switch.isVisible()
    assert v.heat_bar.switch.text() == f"Show the profiled build ({differ[0]})"

    qtbot.mouseClick(v.heat_bar.switch, Qt.MouseButton.LeftButton)
    assert v.build is not latest
    assert source_heat.other_instantiation(counters, v.build) is None
    assert v.heat.reason is None and v.sass.values is not None
    # the samples are on its instructions (stream-K's at 1024^3 lie outside the main
    # loop the panel lists)
    assert v.heat.values and any(v.heat.values.values())
    assert "the build ncu profiled" in v.notice.text()
    assert v.heat_bar.switch.text() == f"Show the latest run's build ({differ[1]})"

    v.set_level("register_2d")  # the choice is kept for the level
    v.set_level(level_id)
    assert v.showing_profiled()
    qtbot.mouseClick(v.heat_bar.switch, Qt.MouseButton.LeftButton)
    assert v.build is latest and v.heat.reason is not None
    assert "ncu profiled" not in v.notice.text()


def test_a_cut_heat_reason_still_says_the_counters_are_not_placed(qtbot, code_view, recorded):
    """On a projector's narrow column the reason is cut at its end: what the viewer must
    read (no heat on these lines) comes first, the builds' parameters after it."""
    v = code_view(fed(recorded), "fp8_block_scaled")
    label = v.heat_bar.text
    assert label.text().startswith("per-line counters not placed: ncu profiled ")
    label.resize(label.fontMetrics().horizontalAdvance("per-line counters not placed: ncu"),
                 label.height())
    shown = QLabel.text(label)  # what the label draws, not its whole text
    assert shown != label.text() and shown.endswith("…")
    assert shown.startswith("per-line counters not placed")


def test_no_switch_where_the_session_lacks_the_build_ncu_profiled(code_view, recorded):
    level_id = "fp8_block_scaled"
    profiled = source_heat.profiled_build(
        fed(recorded).source_counters[level_id], fed(recorded).builds_of(level_id))
    assert profiled is not None
    store = fed([e for e in recorded if not (e["type"] == "build"
                                             and e["kernel"] == profiled.kernel)])
    assert source_heat.profiled_build(store.source_counters[level_id],
                                      store.builds_of(level_id)) is None
    v = code_view(store, level_id)
    assert "per-line counters not placed" in v.heat_bar.text.text()
    assert not v.heat_bar.switch.isVisible()


def test_the_profiled_build_is_the_one_with_the_same_template_arguments():
    def build(kernel: str, variant: str) -> Build:
        return Build(t=0.0, level="fp8", kernel=kernel, variant=variant)

    def counters(**fields: Any) -> SourceCounters:
        return of({"type": "source_counters", "t": 0.0, "level": "fp8", "M": 1, "N": 1,
                   "K": 1, "tool": "ncu", "status": "missing", **fields})

    builds = [build("k<128, 256, true>", "tma"), build("k<128, 192, true>", "scalar"),
              build("k<128, 192, true>", "tma")]
    kernel = "void k<(int)128, (int)192, (bool)1>(int)"
    assert source_heat.profiled_build(counters(kernel=kernel, variant="tma"), builds) \
        is builds[2]
    assert source_heat.profiled_build(counters(kernel=kernel), builds) is builds[1]
    assert source_heat.profiled_build(counters(kernel="k", variant="tma"), builds) is None
    assert source_heat.profiled_build(None, builds) is None
    assert source_heat.profiled_build(counters(kernel="k<(int)64>"), builds) is None
