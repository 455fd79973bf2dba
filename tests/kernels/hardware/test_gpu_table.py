"""The GPU table: every GPU the issue names is there with its source, its numbers agree
with its own SM count and clock, names match whole, and a GPU it lacks gets only what can
be computed; levels say which architectures they need and which GPUs skip them."""

from __future__ import annotations

import msgspec
import pytest

from gemmscope.kernels.device import gpu
from gemmscope.kernels.hardware import gpu_table
from gemmscope.kernels.ladder import arch as archs
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.records import CatalogEntry

NAMED = ["NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA A10", "NVIDIA A30",
         "NVIDIA L4", "NVIDIA L40S", "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090",
         "NVIDIA GeForce RTX 5090", "NVIDIA RTX 6000 Ada Generation", "NVIDIA H100 80GB HBM3",
         "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200", "NVIDIA GH200 480GB",
         "NVIDIA B200", "NVIDIA GB200"]


@pytest.mark.parametrize("name", NAMED)
def test_each_gpu_people_use_has_peaks_bandwidth_and_a_source(name):
    spec = gpu_table.lookup(name)
    assert spec is not None, name
    assert spec.peak("fp32") and spec.peak("fp16") and spec.peak("bf16") and spec.peak("tf32")
    assert spec.memory_bandwidth_gbs and spec.memory_bandwidth_gbs > 100
    assert "NVIDIA" in spec.source
    assert spec.arch in archs.ARCHS


def test_names_match_whole_so_similar_names_find_their_own_rows():
    assert gpu_table.lookup("NVIDIA A10").key == "A10"
    assert gpu_table.lookup("NVIDIA A100-SXM4-40GB").key == "A100-SXM4-40GB"
    assert gpu_table.lookup("NVIDIA H200").key == "H200"
    assert gpu_table.lookup("NVIDIA GH200 480GB").key == "GH200-480GB"
    assert gpu_table.lookup("nvidia  h200 nvl").key == "H200-NVL"
    assert gpu_table.lookup("NVIDIA GeForce RTX 3090 Ti") is None


@pytest.mark.parametrize("spec", [s for s in gpu_table.table() if s.boost_clock_mhz],
                         ids=lambda s: s.key)
def test_fp32_peak_is_sms_times_lanes_times_two_times_the_boost_clock(spec):
    lanes = gpu_table.FP32_LANES[spec.arch]
    computed = spec.sm_count * lanes * 2 * spec.boost_clock_mhz * 1e6 / 1e12
    assert spec.peak("fp32") == pytest.approx(computed, rel=0.02)


@pytest.mark.parametrize("spec", gpu_table.table(), ids=lambda s: s.key)
def test_tensor_peaks_keep_the_ratios_of_one_tensor_core(spec):
    # dense tensor-core rates per SM per clock: TF32 half of FP16, BF16 equal to FP16,
    # FP8 twice FP16 where there is FP8 (Ada, Hopper, Blackwell); NVIDIA rounds B200's
    # sparse TF32 2.25 PFLOPS to 2.2
    assert spec.peak("bf16") == spec.peak("fp16")
    assert spec.peak("tf32") == pytest.approx(spec.peak("fp16") / 2, rel=0.03)
    if spec.peak("fp8") is not None:
        assert spec.peak("fp8") == pytest.approx(2 * spec.peak("fp16"), rel=0.02)
    assert spec.peak("fp16") > spec.peak("fp32")


def test_a_gpu_not_in_the_table_gets_fp32_from_its_architecture_and_nothing_guessed():
    # sm_80 has 64 FP32 lanes per SM, later architectures 128
    spec = gpu_table.spec_for("NVIDIA A800 40GB", 108, 1410.0, "sm_80")
    assert spec.peak("fp32") == pytest.approx(19.5, rel=0.01)
    later = gpu_table.spec_for("NVIDIA RTX A2000", 26, 1200.0, "sm_86")
    assert later.peak("fp32") == pytest.approx(26 * 128 * 2 * 1.2e9 / 1e12, rel=0.01)
    assert spec.peak("fp16") is None and spec.memory_bandwidth_gbs is None
    assert spec.source == gpu_table.COMPUTED


def test_the_device_event_carries_the_tables_row():
    info = gpu.DeviceInfo(name="NVIDIA L4", sm_count=58, cc="8.9", arch="sm_89",
                          sm_clock_max_mhz=2040, mem_clock_max_mhz=6251, memory_gib=22,
                          l2_bytes=48 << 20, driver="580.1", cuda_runtime="13.0", cupy="14")
    ev = info.as_event()
    assert ev["peak_tflops"]["fp8"] == 242.5
    assert ev["mem_bandwidth_gbs"] == 300
    assert ev["peak_clock_mhz"] == 2040 and "L4" in ev["peak_source"]
    # a reader of the header keeps the row (the roofline's datasheet roofs read it there)
    device = session(device=ev).device
    assert device.mem_bandwidth_gbs == 300 and device.peak_clock_mhz == 2040
    assert device.gpu_table_key == ev["gpu_table_key"] and device.peak_source == ev["peak_source"]


@pytest.mark.parametrize(("cc", "hopper_runs", "wmma_runs", "naive_runs"), [
    ("8.0", False, True, True), ("8.6", False, False, True), ("8.9", False, False, True),
    ("9.0", True, True, True), ("10.0", False, True, True), ("12.0", False, False, True),
    ("12.1", False, False, True), ("7.5", False, False, False)])
def test_levels_run_where_their_architectures_allow(cc, hopper_runs, wmma_runs, naive_runs):
    assert registry.get("wgmma_tma").runs_on(cc) is hopper_runs
    assert registry.get("wmma").runs_on(cc) is wmma_runs
    assert registry.get("naive").runs_on(cc) is naive_runs


def entries(catalog: list[dict]) -> list[CatalogEntry]:
    return msgspec.convert(catalog, list[CatalogEntry])


def session(**fields):
    return of({"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {},
               **fields})


def test_cannot_run_names_each_level_the_gpu_skips_and_why():
    catalog = entries(registry.catalog())
    ids = [lv.id for lv in registry.ladder()]
    skipped = archs.cannot_run(ids, catalog, "8.9")
    assert "wgmma_tma" in skipped and "sm_90a" in skipped["wgmma_tma"]
    assert "sm_89" in skipped["wgmma_tma"]
    assert "naive" not in skipped and "cp_async" not in skipped
    assert archs.cannot_run(ids, catalog, "9.0") == {}
    # an old recording's catalog without archs leaves the decision to the runner
    old = entries([{k: v for k, v in e.items() if k != "archs"} for e in registry.catalog()])
    assert archs.cannot_run(ids, old, "8.9") == {}


def test_a_ladder_on_an_ada_gpu_skips_the_hopper_levels_with_a_line_and_keeps_the_rest():
    from gemmscope.kernels.drive.arch_skip import runnable_here
    from gemmscope.kernels.ladder.shape import Shape
    from gemmscope.kernels.protocol.plan import ladder_requests

    header = session(device={"name": "NVIDIA L4", "cc": "8.9"}, catalog=registry.catalog())
    runs = ladder_requests([lv.id for lv in registry.ladder()], Shape(1024, 1024, 1024))
    said: list[str] = []
    kept = runnable_here(header, runs, said.append)
    kept_ids = {r.level for r in kept}
    assert "naive" in kept_ids and "cp_async" in kept_ids
    assert not kept_ids & {"wgmma_tma", "fp8_block_scaled", "mma_sync"}
    assert len(said) == len(runs) - len(kept)
    assert all(line.startswith("skipped: ") for line in said)


def test_the_level_panel_says_what_a_level_needs_and_that_this_gpu_cannot_run_it(qtbot):
    from gemmscope.app.core.store import Change, SessionStore
    from gemmscope.app.widgets.ladder_panel import LadderPanel

    store = SessionStore()
    store.handle(session(catalog=registry.catalog(),
                         device={"name": "NVIDIA L4", "cc": "8.9", "sm_count": 58}))
    panel = LadderPanel()
    qtbot.addWidget(panel)
    panel.bind(store)
    panel.refresh({Change.HEADER, Change.LADDER})
    panel._show_detail("wgmma_tma")
    text = panel.detail.text()
    assert "Needs:</b> sm_90a only (Hopper)" in text and "cannot run on this GPU" in text
    assert "sm_89" in text
    panel._show_detail("naive")
    assert "Needs:</b> sm_80+" in panel.detail.text()
    assert "cannot run" not in panel.detail.text()


def test_levels_with_a_compute_capability_marks_what_that_gpu_cannot_run(capsys):
    from gemmscope.kernels.cli.main import main

    assert main(["levels", "--cc", "8.9"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "sm_90a only (Hopper)" in rows["wgmma_tma"]
    assert "[cannot run here: sm_89]" in rows["wgmma_tma"]
    assert "sm_80+" in rows["naive"] and "cannot run" not in rows["naive"]
