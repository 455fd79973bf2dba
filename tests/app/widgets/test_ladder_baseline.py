"""The ladder table, the CSV and the Markdown report beside a baseline recording: both
runs' values and the changes per level at the shape, mode and GPU shown, the two
instruction mixes, and the warning that names what differs between the two runs."""

from __future__ import annotations

import csv
import io
import json

import pytest

from gemmscope.app.core import export
from gemmscope.app.core.baseline_run import baseline_of
from gemmscope.app.core.store import SessionStore
from gemmscope.app.widgets.ladder_panel import LadderPanel
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.recording import read_session
from gemmscope.kernels.results.rows import Column


def header(name="NVIDIA H200", driver="13.0"):
    return {"type": "session", "t": 0.0, "protocol": 4, "created": "x",
            "levels": {"naive": {"source": "kernels/cuda/naive.cu", "sha256": "aa"}},
            "device": {"name": name, "driver": driver, "cuda_runtime": "13.2",
                       "sm_clock_max_mhz": 1980.0}}


def result(level, tflops, clock=1980.0, regs=40, **more):
    return {"type": "result", "t": 1.0, "level": level, "M": 4096, "N": 4096, "K": 4096,
            "tflops": tflops, "sm_clock_mhz_avg": clock, "dtype": "fp32", "precision": "fp32",
            "median_ms": 1.0, "verified": True, "rel_err": 1e-7, "repeats": 5,
            "regs": regs, "variant": "scalar", **more}


def build(level, ffma):
    mix = {"FFMA": ffma, "LDS": 4}
    return {"type": "build", "t": 0.5, "level": level, "variant": "scalar",
            "instruction_mix": {"kernel": mix, "main_loop": mix}}


def store_with(tmp_path, run, base, base_header=None) -> SessionStore:
    store = SessionStore()
    for ev in [header(), *run]:
        store.handle(of(ev))
    path = tmp_path / "yesterday.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [base_header or header(), *base]) + "\n")
    session = read_session(path)
    store.set_baseline(baseline_of(str(path), session.header, session.events))
    return store


RUN = [build("naive", 64), result("naive", 2.0, regs=40), result("smem_tiled", 5.0)]
BASE = [build("naive", 32), result("naive", 1.6, clock=1755.0, regs=38)]


def test_a_baseline_knows_its_levels_as_its_later_header_describes_them(tmp_path):
    """A baseline brought up to date by record --update carries a second header whose
    catalog describes a changed level anew: the baseline's store has that entry."""
    from gemmscope.kernels.ladder import registry

    first = {**header(), "catalog": [registry.catalog()[0]]}
    later = {**first, "t": 2.0,
             "catalog": [{**registry.catalog()[0], "adds": "Its form after the update."}]}
    path = tmp_path / "updated.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [first, *BASE, later]) + "\n")
    session = read_session(path)
    base = baseline_of(str(path), session.header, session.events)
    assert base.store.level("naive").adds == "Its form after the update."


@pytest.fixture
def panel(qtbot):
    def make(store):
        p = LadderPanel()
        qtbot.addWidget(p)
        p.resize(1600, 500)
        p.bind(store)
        p.refresh(store.take_changes())
        p.show()
        qtbot.waitExposed(p)
        return p
    return make


def column_shown(p: LadderPanel, column: Column) -> bool:
    from gemmscope.app.widgets.ladder_panel import COLUMNS

    return not p.table.isColumnHidden(COLUMNS.index(column))


def test_the_table_shows_the_baseline_and_the_change(panel, tmp_path):
    p = panel(store_with(tmp_path, RUN, BASE))
    assert column_shown(p, Column.BASELINE)
    assert p.cell_text("naive", Column.BASELINE) == f"1.6 ({100 * (2.0 / 1.6 - 1):+.1f}%)"
    assert p.cell_text("smem_tiled", Column.BASELINE) == "–"  # not in the baseline
    tip = p.cell("naive", Column.BASELINE).toolTip()
    for said in ("SM MHz: 1980 / 1755", "regs: 40 / 38", "FFMA 64 / 32",
                 "warning: the baseline differs"):
        assert said in tip


def test_without_a_baseline_the_column_is_hidden(panel):
    store = SessionStore()
    for ev in [header(), *RUN]:
        store.handle(of(ev))
    p = panel(store)
    assert not column_shown(p, Column.BASELINE)


def test_the_csv_has_both_values_and_the_changes(tmp_path):
    store = store_with(tmp_path, RUN, BASE)
    rows = list(csv.DictReader(io.StringIO(export.ladder_csv(store))))
    naive = next(r for r in rows if r["level"] == "naive")
    assert float(naive["baseline TFLOPS"]) == 1.6
    assert float(naive["change TFLOPS (%)"]) == pytest.approx(100 * (2.0 / 1.6 - 1), abs=0.01)
    assert float(naive["baseline SM MHz"]) == 1755
    assert float(naive["change SM MHz"]) == pytest.approx(1980 - 1755)
    assert float(naive["change regs"]) == 2
    assert naive["main-loop mix run / baseline"] == "FFMA 64 / 32"
    tiled = next(r for r in rows if r["level"] == "smem_tiled")
    assert tiled["baseline TFLOPS"] == "" and tiled["change TFLOPS (%)"] == ""


def test_the_csv_without_a_baseline_has_no_baseline_columns(tmp_path):
    store = SessionStore()
    for ev in [header(), *RUN]:
        store.handle(of(ev))
    head = next(csv.reader(io.StringIO(export.ladder_csv(store))))
    assert not any("baseline" in h for h in head)


def test_the_markdown_report_names_what_differs_and_pairs_the_levels(tmp_path):
    store = store_with(tmp_path, RUN, BASE, base_header=header(driver="12.8"))
    text = export.ladder_markdown(store, "a.jsonl")
    assert "## Against the baseline yesterday.jsonl" in text
    warning = next(line for line in text.splitlines() if line.startswith("**Warning:**"))
    # (a recording's text, as Markdown text: its colons escaped)
    assert "driver\\: 13.0 vs 12.8" in warning
    naive = next(line for line in text.splitlines() if line.startswith("| naive | 4096"))
    assert "2 / 1.6 (+25.0%)" in naive and "FFMA 64 / 32" in naive


def test_a_change_that_rounds_to_nothing_reads_plus_zero_not_minus_zero(tmp_path):
    from gemmscope.app.core.baseline_run import baseline_cell

    same = store_with(tmp_path, [result("naive", 8.7366)], [result("naive", 8.7370)])
    assert baseline_cell(same, "naive") == "8.737 (+0.0%)"
    lower = store_with(tmp_path, [result("naive", 1.9)], [result("naive", 2.0)])
    assert baseline_cell(lower, "naive") == "2 (-5.0%)"


def test_the_baseline_line_names_the_gpu_of_a_two_gpu_baseline_it_compares(tmp_path):
    """The two-GPU recording against itself: GPU 1 shown, the line says the baseline's
    GPU 1 and gives its number (both GPUs are "NVIDIA H200": GPU 0's was taken)."""
    from pathlib import Path

    from gemmscope.app.core.baseline_run import baseline_result, baseline_text

    path = Path(__file__).resolve().parents[3] / "resources/sessions/h200x2-ladder.jsonl.gz"
    if not path.exists():
        pytest.skip("the bundled recording is not here")
    session = read_session(path)
    store = SessionStore()
    for ev in session.events:
        store.handle(ev)
    store.set_baseline(baseline_of(str(path), session.header, session.events))
    for device in (0, 1):
        store.view.set(device=device)
        level = store.ladder_levels()[0].id
        text = baseline_text(store, level)
        assert f"(its GPU {device} of 2)" in text, text
        ours, theirs = store.ladder_result(level), baseline_result(store, level)
        assert theirs.device_index == device and theirs.tflops == ours.tflops
