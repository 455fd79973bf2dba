"""A recording beside its baseline: results joined per (level, shape, mode, GPU), the
change of each field, and the warning that names what differs between the two runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import places
import pytest

from gemmscope.kernels.cli.main import main
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.results import baseline as bl
from gemmscope.kernels.results.baseline_report import COLUMNS

BUNDLED = places.SESSIONS / "h200-ladder.jsonl.gz"
CEILINGS = places.FIXTURES / "h200-ceilings.jsonl"


def header(name="NVIDIA H200", driver="13.0", cuda="13.2", clock=1980.0, sha="aa",
           commit="c1"):
    return {"type": "session", "t": 0.0, "protocol": 4, "created": "x",
            "gemmscope": {"version": "0.1.0", "commit": commit},
            "levels": {"naive": {"source": "kernels/cuda/naive.cu", "sha256": sha}},
            "device": {"name": name, "driver": driver, "cuda_runtime": cuda, "cupy": "14",
                       "sm_clock_max_mhz": clock}}


def result(level="naive", n=4096, tflops=1.0, clock=1980.0, mode="burst", **more):
    return {"type": "result", "t": 1.0, "level": level, "M": n, "N": n, "K": n,
            "tflops": tflops, "sm_clock_mhz_avg": clock, "mode": mode, "dtype": "fp32",
            "median_ms": 1.0, "verified": True, "rel_err": 1e-7, "repeats": 5, **more}


def records(*evs):
    return [of(e) for e in evs]


def facts(h, *evs):
    return bl.run_facts(of(h), records(h, *evs))


def latest(h, evs):
    return bl.latest_results(of(h), records(*evs))


def test_matching_runs_give_no_warning():
    a = facts(header(), result(), {"type": "telemetry", "t": 2.0, "power_limit_w": 700.0})
    assert bl.warning(a, copy.deepcopy(a)) is None


@pytest.mark.parametrize(("changes", "named"), [
    ({"name": "NVIDIA H100 80GB HBM3"}, "GPU: NVIDIA H200 vs NVIDIA H100 80GB HBM3"),
    ({"driver": "12.8"}, "driver: 13.0 vs 12.8"),
    ({"cuda": "12.9"}, "CUDA: 13.2 vs 12.9"),
    ({"clock": 1755.0}, "max SM clock: 1980 MHz vs 1755 MHz"),
    ({"sha": "bb"}, "code: kernels/cuda/naive.cu differ"),
    ({"commit": "c2"}, "gemmscope commit: c1 vs c2"),
])
def test_the_warning_names_each_thing_that_differs(changes, named):
    a = facts(header(), result())
    b = facts(header(**changes), result())
    said = bl.warning(a, b)
    assert said is not None and named in said


def test_clocks_during_the_runs_power_limits_and_compilers_are_compared_too():
    a = facts(header(), result(clock=1980.0),
              {"type": "telemetry", "t": 2.0, "power_limit_w": 700.0},
              {"type": "build", "t": 3.0, "level": "naive", "variant": "vec",
               "compiler": "NVRTC 13.0 through CuPy 14.2.0"})
    b = facts(header(), result(clock=1500.0),
              {"type": "telemetry", "t": 2.0, "power_limit_w": 500.0},
              {"type": "build", "t": 3.0, "level": "naive", "variant": "vec",
               "compiler": "NVRTC 12.8 through CuPy 13.6.0"})
    diffs = " | ".join(bl.differences(a, b))
    assert "SM clock during the runs (median): 1980 MHz vs 1500 MHz" in diffs
    assert "power limit: 700 W vs 500 W" in diffs
    assert "compiler: NVRTC 13.0 through CuPy 14.2.0 vs NVRTC 12.8" in diffs
    # 1 % of clock is noise, not a difference
    c = facts(header(), result(clock=1970.0),
              {"type": "telemetry", "t": 2.0, "power_limit_w": 700.0},
              {"type": "build", "t": 3.0, "level": "naive", "variant": "vec",
               "compiler": "NVRTC 13.0 through CuPy 14.2.0"})
    assert bl.warning(a, c) is None


def test_results_join_per_level_shape_mode_and_gpu_with_the_change_of_each_field():
    h = header()
    run = latest(h, [result(tflops=2.0), result(tflops=3.0, n=1024),
                     result(tflops=1.5, mode="sustained"), result("wmma", tflops=7.0)])
    base = latest(h, [result(tflops=1.0), result(tflops=1.5, mode="sustained"),
                      result("coalesced", tflops=5.0)])
    pairs = {p.key: p for p in bl.join(run, base)}
    both = pairs[("naive", 4096, 4096, 4096, "burst", "NVIDIA H200")]
    assert both.change("tflops") == pytest.approx(1.0)  # twice the baseline
    sustained = pairs[("naive", 4096, 4096, 4096, "sustained", "NVIDIA H200")]
    assert sustained.change("tflops") == pytest.approx(0.0)
    assert pairs[("wmma", 4096, 4096, 4096, "burst", "NVIDIA H200")].base is None
    assert pairs[("coalesced", 4096, 4096, 4096, "burst", "NVIDIA H200")].run is None
    assert pairs[("naive", 1024, 1024, 1024, "burst", "NVIDIA H200")].change("tflops") is None


def test_the_same_level_on_two_gpus_is_two_rows():
    run = latest(header(), [result(tflops=2.0)])
    base = latest(header(name="NVIDIA L4"), [result(tflops=0.5)])
    assert len(bl.join(run, base)) == 2


def test_report_with_a_baseline_prints_the_warning_and_both_values(capsys, tmp_path):
    h = header()
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("\n".join(json.dumps(e) for e in [h, result(tflops=2.0)]) + "\n")
    b.write_text("\n".join(json.dumps(e) for e in [header(name="NVIDIA L4"),
                                                    result(tflops=0.5)]) + "\n")
    assert main(["report", str(a), "--baseline", str(b)]) == 0
    out = capsys.readouterr().out
    assert "warning: the baseline differs: GPU: NVIDIA H200 vs NVIDIA L4" in out
    assert "2 / –" in out and "– / 0.5" in out


def test_report_of_two_real_recordings_pairs_their_common_runs(capsys):
    assert main(["report", str(CEILINGS), "--baseline", str(BUNDLED)]) == 0
    out = capsys.readouterr().out
    naive = next(line for line in out.splitlines() if line.startswith("naive ")
                 and "256×256×256" in line)
    assert "both" in naive and "%)" in naive


def test_the_power_limit_of_a_recording_read_whole_comes_from_its_sample_columns():
    from gemmscope.kernels.protocol.recording import read_session

    session = read_session(CEILINGS)
    limits = [e["power_limit_w"] for e in map(json.loads, CEILINGS.read_text().splitlines())
              if e["type"] == "telemetry" and e.get("power_limit_w") is not None]
    assert limits and session.samples  # the samples were read as columns
    assert bl.run_facts(session.header, session.events).power_limit_w == limits[-1]


def _store_of(path: Path):
    from gemmscope.app.core.store import SessionStore
    from gemmscope.kernels.protocol.recording import read_session

    store = SessionStore()
    session = read_session(path)
    for ev in session.events:
        store.handle(ev)
    return store, session


def test_the_roofline_shows_the_baselines_results_at_the_same_shape_and_the_warning(qtbot):
    from gemmscope.app.core.baseline_run import baseline_of
    from gemmscope.app.core.roofline_data import roofline_data
    from gemmscope.app.core.store import Change
    from gemmscope.app.views.roofline import RooflineView
    from gemmscope.kernels.ladder.shape import Shape

    store, _ = _store_of(BUNDLED)
    _, base_session = _store_of(CEILINGS)
    store.view.set(shape=Shape(256, 256, 256))
    store.set_baseline(baseline_of(str(CEILINGS), base_session.header, base_session.events))
    data = roofline_data(store)
    base_results = {e.level: e.tflops for e in base_session.results}
    assert {p.level: p.tflops for p in data.baseline_points} == base_results
    assert data.warning is not None and "gemmscope commit" in data.warning
    view = RooflineView()
    qtbot.addWidget(view)
    view.bind(store)
    view.refresh({Change.HEADER})
    assert view.notes.text().startswith("⚠ h200-ceilings.jsonl: the baseline differs")
    assert len(view.chart.base_scatter.data) == len(base_results)
    naive = next(p for p in view.chart.drawn_base if p.level == "naive")
    assert "baseline" in view.chart.describe(naive) and "this session" in \
        view.chart.describe(naive)


def test_the_ladder_panel_gives_the_baselines_result_and_the_change(qtbot):
    from gemmscope.app.core.baseline_run import baseline_of
    from gemmscope.app.core.store import Change
    from gemmscope.app.widgets.ladder_panel import LadderPanel
    from gemmscope.kernels.ladder.shape import Shape

    store, _ = _store_of(BUNDLED)
    _, base_session = _store_of(CEILINGS)
    store.view.set(shape=Shape(256, 256, 256))
    store.set_baseline(baseline_of(str(CEILINGS), base_session.header, base_session.events))
    panel = LadderPanel()
    qtbot.addWidget(panel)
    panel.bind(store)
    panel.refresh({Change.HEADER, Change.LADDER})
    base = next(e.tflops for e in base_session.results if e.level == "naive")
    now = store.ladder_result("naive").tflops
    tip = panel.table.item(panel.level_ids.index("naive"), 0).toolTip()
    assert f"baseline h200-ceilings.jsonl: {base:.4g} TFLOPS" in tip
    assert f"this session {100 * (now / base - 1):+.1f}%" in tip
    panel._show_detail("naive")
    assert "Baseline:</b> baseline h200-ceilings.jsonl" in panel.detail.text()
    panel._show_detail("wmma")  # no wmma in the baseline
    assert "no result at this shape and mode" in panel.detail.text()
    # the other way round: a level the baseline ran and this session did not
    session, _ = _store_of(CEILINGS)
    _, bundled = _store_of(BUNDLED)
    session.view.set(shape=Shape(256, 256, 256))
    session.set_baseline(baseline_of(str(BUNDLED), bundled.header, bundled.events))
    panel.bind(session)
    panel.refresh({Change.HEADER, Change.LADDER})
    panel._show_detail("wmma")
    text = panel.detail.text()
    assert "Baseline:</b> baseline h200-ladder.jsonl.gz: " in text and "TFLOPS" in text
    assert "Last result" not in text and "This run used" not in text


def test_the_bars_draw_a_tick_at_each_levels_baseline_tflops(qtbot):
    from gemmscope.app.core.baseline_run import baseline_of
    from gemmscope.app.plots.ladder_bars import LadderBars
    from gemmscope.app.views.chart_rows import ladder_rows
    from gemmscope.kernels.ladder.shape import Shape

    store, _ = _store_of(BUNDLED)
    _, base_session = _store_of(CEILINGS)
    store.view.set(shape=Shape(256, 256, 256))
    bars = LadderBars()
    qtbot.addWidget(bars)
    bars.set_rows(ladder_rows(store), header=True)
    assert len(bars.baseline_values()) == 0  # no baseline: no ticks
    store.set_baseline(baseline_of(str(CEILINGS), base_session.header, base_session.events))
    bars.set_rows(ladder_rows(store))
    expected = [e.tflops for e in base_session.results
                if e.level in {r.level for r in bars.rows}]
    assert sorted(bars.baseline_values()) == pytest.approx(sorted(expected))
    i = next(i for i, r in enumerate(bars.rows) if r.level == "naive")
    assert "baseline" in bars._describe(float(i), 0.0)


def build(level="naive", mix=None, code_key=None, variant="scalar"):
    return {"type": "build", "t": 0.5, "level": level, "variant": variant,
            "code_key": code_key,
            "instruction_mix": {"kernel": mix, "main_loop": mix} if mix else None}


def test_the_instruction_mix_of_each_side_is_compared(capsys, tmp_path):
    h = header()
    mine = {"FFMA": 64, "LDS": 8, "LDS.128": 0}
    theirs = {"FFMA": 64, "LDS": 16, "LDS.128": 0}
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("\n".join(json.dumps(e) for e in [h, build(mix=mine), result()]) + "\n")
    b.write_text("\n".join(json.dumps(e) for e in [h, build(mix=theirs), result()]) + "\n")
    assert main(["report", str(a), "--baseline", str(b)]) == 0
    out = capsys.readouterr().out
    assert "main-loop mix run / base" in out
    assert "LDS 8 / 16" in out and "FFMA 64 / 64" not in out  # only what differs


@pytest.mark.parametrize(("a", "b", "text"), [
    ({"FFMA": 8}, {"FFMA": 8}, "same (FFMA 8)"),
    ({"FFMA": 8}, None, "FFMA 8 / –"),
    (None, None, "–"),
    ({"FFMA": 8, "LDS": 2}, {"FFMA": 4, "STS": 1}, "FFMA 8 / 4; LDS 2 / 0; STS 0 / 1"),
])
def test_mix_texts_name_each_side(a, b, text):
    assert bl.mix_text(a, b) == text


def test_a_result_takes_the_build_of_its_code_key():
    builds = records(build(mix={"FFMA": 1}, code_key="k1"), build(mix={"FFMA": 2},
                                                                  code_key="k2"))
    r = of(result(code_key="k2"))
    assert bl.mix_of(bl.build_of(r, builds)) == {"FFMA": 2}
    other = of(result(level="smem_tiled"))
    assert bl.build_of(other, builds) is None


def test_keys_hold_the_mode_and_values_are_read_as_the_decoder_typed_them():
    from gemmscope.kernels.protocol.events import Mode

    h = header()
    (key, run), = latest(h, [result(mode="sustained", regs=40)]).items()
    assert key[4] is Mode.SUSTAINED  # the enum, not its text (issue 44 item 3)
    pair = bl.Pair(key, run, None)
    assert (pair.value("tflops"), pair.value("regs"), pair.value("energy_j")) == \
        (1.0, 40.0, None)
    assert set(bl.COMPARED) == {c[1] for c in COLUMNS}  # every column read from the table
