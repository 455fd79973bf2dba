"""The roofline's numbers (kernels/results/roofline.py), the points and roofs the Roofline
tab reads from a recording (app/core/roofline_data.py), and what the chart draws."""

from __future__ import annotations

import json
import math
from pathlib import Path

import places
import pytest

from gemmscope.kernels.hardware import gpu_table
from gemmscope.kernels.protocol.decoding import decode
from gemmscope.kernels.protocol.events import ProtocolError
from gemmscope.kernels.protocol.recording import read_session
from gemmscope.kernels.protocol.records import Ceilings
from gemmscope.kernels.results import roofline as rl

BUNDLED = places.SESSIONS / "h200-ladder.jsonl.gz"
CEILINGS = places.FIXTURES / "h200-ceilings.jsonl"


@pytest.mark.parametrize(("M", "N", "K", "a", "c"), [
    (4096, 4096, 4096, 4, 4), (4096, 4096, 4096, 2, 2), (1000, 999, 1001, 1, 2),
    (1, 7, 100, 4, 4)])
def test_algorithmic_intensity_is_flops_over_a_b_read_once_and_c_written_once(M, N, K, a, c):
    p = rl.point("x", "fp32", {4: "fp32", 2: "fp16", 1: "fp8e4m3"}[a], M, N, K, 1.0,
                 {4: "fp32", 2: "bf16"}[c])
    assert p is not None
    assert p.ai == pytest.approx(2 * M * N * K / ((M * K + K * N) * a + M * N * c))


def test_a_square_fp32_gemm_has_n_over_six_flop_per_byte():
    # 2N^3 / (3 N^2 x 4 bytes)
    p = rl.point("naive", "fp32", "fp32", 4096, 4096, 4096, 0.5)
    assert p.ai == pytest.approx(4096 / 6)


def test_references_of_16_bit_precisions_write_16_bit_c_where_the_catalog_says_nothing():
    assert rl.output_bytes_of(None, "fp16", is_reference=True) == 2
    assert rl.output_bytes_of(None, "fp16", is_reference=False) == 4
    assert rl.output_bytes_of("bf16", "fp8", is_reference=False) == 2


def test_a_roof_is_the_bandwidth_slope_until_the_ridge_then_the_peak():
    roof = rl.Roof("bf16", 989.4, 4800)
    assert roof.ridge == pytest.approx(989.4e12 / 4800e9)
    assert roof.attainable(10) == pytest.approx(10 * 4.8)
    assert roof.attainable(roof.ridge * 2) == 989.4
    p = rl.Point("wgmma_tma", "bf16", 800.0, 1365.0)
    assert roof.fraction(p) == pytest.approx(800 / 989.4)


def test_measured_intensity_needs_both_dram_counters_of_a_whole_launch():
    metrics = {"dram__bytes_read.sum": 3e8, "dram__bytes_write.sum": 6.7e7}
    assert rl.measured_dram_bytes(metrics, "as_launched") == pytest.approx(3.67e8)
    assert rl.measured_dram_bytes(metrics, "one_block_per_sm") is None
    assert rl.measured_dram_bytes({"dram__bytes_read.sum": 3e8}, None) is None
    p = rl.point("cp_async", "fp32", "fp32", 4096, 4096, 4096, 40.0, dram_bytes=3.67e8)
    assert p.ai_measured == pytest.approx(2 * 4096**3 / 3.67e8)


@pytest.mark.parametrize("tflops", [0.0, -1.0, math.inf, math.nan])
def test_a_result_that_cannot_sit_on_a_log_axis_gives_no_point(tflops):
    assert rl.point("x", "fp32", "fp32", 64, 64, 64, tflops) is None
    assert rl.point("x", "fp32", "int4", 64, 64, 64, 1.0) is None


def test_no_bandwidth_means_no_roofs_and_missing_peaks_are_skipped():
    assert rl.roofs({"fp32": 66.9}, None, ["fp32"]) == []
    made = rl.roofs({"fp32": 66.9, "fp16": None}, 4800, ["fp32", "fp16", "fp32"])
    assert [r.precision for r in made] == ["fp32"]


def _store(path: Path):
    from gemmscope.app.core.store import SessionStore

    store = SessionStore()
    for ev in read_session(path).events:
        store.handle(ev)
    return store


def test_the_bundled_recording_gives_a_point_per_result_at_the_shape_and_h200_roofs():
    from gemmscope.app.core.roofline_data import roofline_data

    store = _store(BUNDLED)
    data = roofline_data(store)
    shape = store.ladder_shape()
    expected = {lv.id for lv in store.levels if store.result_at(lv.id, shape) is not None}
    assert {p.level for p in data.points} == expected
    for p in data.points:
        r = store.result_at(p.level, shape)
        assert p.tflops == r.tflops
    h200 = gpu_table.lookup("NVIDIA H200")
    by = {r.precision: r for r in data.roofs}
    assert by["bf16"].peak_tflops == h200.peak("bf16")
    assert by["fp32"].bandwidth_gbs == h200.memory_bandwidth_gbs
    # the H200's own ceilings, measured by `record --ceilings` and appended to the file;
    # the newest event is the one drawn (the first, with mma.sync's FP16 and TF32, stays
    # in the file as history)
    ceil = [e for e in read_session(BUNDLED).events if isinstance(e, Ceilings)
            and e.peak_tflops][-1]
    measured = {r.precision: r for r in data.measured}
    assert set(measured) == set(ceil.peak_tflops)
    for precision, roof in measured.items():
        assert roof.peak_tflops == ceil.peak_tflops[precision]
        assert roof.bandwidth_gbs == ceil.bandwidth_gbs
    assert not any("--ceilings" in n for n in data.notes)


def test_a_measured_roof_a_result_went_past_is_named_with_its_fastest_result():
    roof = rl.Roof("tf32", 322.8, 3900.0, measured=True)
    slow = rl.Point("tf32_level", "tf32", 300.0, 700.0)
    fast = rl.Point("cublas_tf32", "tf32", 400.3, 700.0)
    other = rl.Point("cublas_bf16", "bf16", 900.0, 1000.0)
    assert rl.broken_roofs([roof], [slow, fast, other]) == [(roof, fast)]
    assert rl.broken_roofs([roof], [slow, other]) == []
    # on the roof within the probe's noise is on it, not past it
    near = rl.Point("x", "tf32", 322.8 * (rl.OVER_CEILING - 0.001), 700.0)
    assert rl.broken_roofs([roof], [near]) == []
    # over the DRAM slope but under the peak (a small GEMM from L2) breaks no compute roof
    low = rl.Point("x", "tf32", 5.0, 1.0)
    assert low.tflops > roof.attainable(low.ai)
    assert rl.broken_roofs([roof], [low]) == []


def test_the_bundled_recordings_measured_roofs_lie_above_every_point_of_their_precision():
    """The bundled ceilings were measured again on the H200 with the wgmma probes for FP16
    and TF32 (the first ceilings took them from mma.sync, which cuBLAS outran): every
    precision's measured roof is drawn, each point lies under its own, and no note says a
    roof was left out."""
    from gemmscope.app.core.roofline_data import roofline_data

    data = roofline_data(_store(BUNDLED))
    measured = {r.precision: r for r in data.measured}
    assert {"bf16", "fp8", "fp16", "fp32", "tf32"} <= set(measured)
    assert not [n for n in data.notes if "left out" in n]
    for p in data.points:
        assert p.tflops <= measured[p.precision].peak_tflops, (p.level, p.precision)
    assert rl.broken_roofs(list(data.measured), list(data.points)) == []


def test_a_recording_with_ceilings_draws_the_measured_roofs_too():
    from gemmscope.app.core.roofline_data import roofline_data

    session = read_session(CEILINGS)
    (ceil,) = [e for e in session.events if isinstance(e, Ceilings)]
    data = roofline_data(_store(CEILINGS))
    (fp32,) = [r for r in data.measured if r.precision == "fp32"]
    assert fp32.peak_tflops == ceil.peak_tflops["fp32"]
    assert fp32.bandwidth_gbs == ceil.bandwidth_gbs and fp32.measured


def test_a_ceilings_event_with_a_bad_number_is_refused_naming_the_field():
    def line(**fields) -> str:
        return json.dumps({"type": "ceilings", "t": 1.0, "peak_tflops": {}, **fields})

    for fields, named in (({"bandwidth_gbs": -3}, "bandwidth_gbs"),
                          ({"read_gbs": "fast"}, "read_gbs"),
                          ({"peak_tflops": {"fp99": 1.0}}, "fp99"),
                          ({"peak_tflops": {"fp32": -1.0}}, "fp32"),
                          ({"probes": [{"name": "ffma"}] * 33}, "at most 32"),
                          ({"probes": [{"name": "ffma", "ms": -1}]}, "probe's numbers")):
        with pytest.raises(ProtocolError, match=named):
            decode(line(**fields), 3, "c.jsonl")
    # what is fine reads: a probe's missing texts as empty, NaN (as JSON has none) as null
    ev = decode(line(bandwidth_gbs=4000, probes=[{"tflops": 50}]).replace("4000", "NaN"))
    assert isinstance(ev, Ceilings) and ev.bandwidth_gbs is None
    assert ev.probes[0].tflops == 50 and ev.probes[0].name == ""


def test_the_chart_draws_every_point_and_roof_and_hover_names_the_level(qtbot):
    from gemmscope.app.core.roofline_data import roofline_data
    from gemmscope.app.plots.roofline_chart import RooflineChart

    store = _store(BUNDLED)
    chart = RooflineChart()
    qtbot.addWidget(chart)
    data = roofline_data(store)
    chart.set_data(data)
    assert len(chart.scatter.data) == len(data.points)
    assert chart.drawn_roofs == [*data.roofs, *data.measured]
    target = next(p for p in data.points if p.level == "wgmma_tma")
    found = chart.point_near(math.log10(target.ai), math.log10(target.tflops))
    assert found == target
    text = chart.describe(found)
    assert "wgmma" in text and "% of the datasheet BF16 roof" in text
    with qtbot.waitSignal(chart.level_clicked) as clicked:
        spot = next(s for s in chart.scatter.points() if s.data() == "wgmma_tma")
        chart._clicked(chart.scatter, [spot])
    assert clicked.args == ["wgmma_tma"]


@pytest.mark.parametrize(("stage", "size"), [(False, (1000, 600)), (True, (1200, 330))])
def test_the_bandwidth_labels_sit_apart_below_every_slope(qtbot, stage, size):
    # a label above a slope, or between two, was crossed by the rising line (seen on
    # stage at 1280x720, where the plot is wide and low and the type large)
    import pyqtgraph as pg

    from gemmscope.app.core.roofline_data import roofline_data
    from gemmscope.app.plots.roofline_chart import RooflineChart
    from gemmscope.app.theme import NORMAL, PRESENTATION

    store = _store(BUNDLED)
    chart = RooflineChart()
    qtbot.addWidget(chart)
    chart.apply_theme(PRESENTATION if stage else NORMAL)
    chart.resize(*size)
    data = roofline_data(store)
    chart.set_data(data)
    chart.grab()  # laid out and painted: a text item places itself when it is painted
    labels = [i for i in chart.getPlotItem().items
              if isinstance(i, pg.TextItem) and "GB/s" in i.toPlainText()]
    bandwidths = {r.bandwidth_gbs for r in (*data.roofs, *data.measured)}
    assert len(labels) == len(bandwidths) == 2  # the datasheet's and the measured one
    vb = chart.getPlotItem().vb
    boxes = [i.textItem.sceneBoundingRect() for i in labels]
    assert not boxes[0].intersects(boxes[1])
    for box in boxes:  # the slopes' heights (scene y grows down) at the label's right end
        right = vb.mapSceneToView(box.topRight())
        for bw in bandwidths:
            y_line = math.log10(10 ** right.x() * bw / 1e3)
            top = vb.mapViewToScene(pg.Point(right.x(), y_line)).y()
            assert box.top() >= top - 1, (bw, box)
