"""Two GPUs (run on a machine with two H200s): a ladder split across both, one runner per
GPU, and each runner's NVML on the GPU its CUDA runs on. Needs no Dask."""

from __future__ import annotations

import io

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.device import gpu_select
from gemmscope.kernels.protocol import recording

pytestmark = pytest.mark.gpu

LEVELS = "naive,coalesced,smem_tiled,register_2d,vectorized,cp_async,wmma,mma_sync"


def nvml_bus_ids() -> list[str]:
    """NVML's PCI bus id of each GPU, by NVML index (nvidia-smi's order)."""
    pynvml = pytest.importorskip("pynvml")
    pynvml.nvmlInit()
    try:
        ids = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            bus = pynvml.nvmlDeviceGetPciInfo(pynvml.nvmlDeviceGetHandleByIndex(i)).busId
            ids.append(bus.decode() if isinstance(bus, bytes) else bus)
        return ids
    finally:
        pynvml.nvmlShutdown()


@pytest.fixture(scope="module")
def two_gpus() -> list[str]:
    ids = nvml_bus_ids()
    if len(ids) < 2:
        pytest.skip(f"needs two GPUs, NVML sees {len(ids)}")
    return ids


def record(path, *options: str) -> recording.Session:
    err = io.StringIO()
    code = cli.main(["record", "-o", str(path), *options], stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    return recording.read_session(path)


def test_a_ladder_split_across_two_gpus_is_verified_on_both(two_gpus, tmp_path):
    session = record(tmp_path / "split.jsonl", "--devices", "0,1", "--split", "-l", LEVELS,
                     "-s", "1024", "-s", "1000x999x1024", "-r", "5")
    assert session.problem is None and not session.errors
    levels = [(r.level, r.M) for r in session.results
              if not r.level.startswith("cublas")]
    assert sorted(levels) == sorted((lv, m) for lv in LEVELS.split(",") for m in (1024, 1000))
    assert all(r.verified for r in session.results)
    assert {r.device for r in session.results} == {0, 1}
    # each runner sampled its own GPU: two GPUs, two uuids, and NVML's bus id of each
    # uuid is the bus id CUDA ran on
    entries = session.header.devices
    assert [e.gpu for e in entries] == ["0", "1"]
    assert len({e.uuid for e in entries}) == 2 and all(e.uuid for e in entries)
    for entry in entries:
        assert gpu_select.same_bus_id(entry.pci_bus_id, two_gpus[int(entry.gpu)])
    sampled = {e.device for e in session.events if e.type == "telemetry"}
    assert sampled == {0, 1}


def test_device_1_is_the_gpu_nvidia_smi_calls_1(two_gpus, tmp_path):
    session = record(tmp_path / "one.jsonl", "--device", "1", "-l", "cp_async", "-s", "2048",
                     "-r", "5", "--no-compare")
    [entry] = session.header.devices
    assert entry.gpu == "1" and gpu_select.same_bus_id(entry.pci_bus_id, two_gpus[1])
    assert [r.verified for r in session.results] == [True]
    assert any(e.type == "telemetry" for e in session.events)
