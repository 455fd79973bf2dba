"""The cluster engine (kernels/drive/cluster.py) on a local Dask cluster of CPU worker processes,
each driving a stand-in runner: every run merged once with its host and device, and a
worker killed in the middle of a run loses that run only, said as an error event.

``gemmscope record --cluster`` runs as a subprocess, so every wait has a timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import places
import pytest

from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import recording

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

FAKE = places.FAKE_RUNNER
LEVELS = ["naive", "coalesced", "smem_tiled"]
LIMIT_S = 90.0


@pytest.fixture(scope="module", autouse=True)
def resource_tracker():
    """multiprocessing's resource tracker, which the worker processes start and which
    lives as long as this process: started before any test counts its children."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()


@pytest.fixture
def cluster():
    """Two worker processes under nannies (a killed one is started again), each offering
    one GPU resource; closed within the test, so no process outlives it."""
    # no silent retry on another worker: a lost run is said (docs/cluster.md). The
    # scheduler's HTTP server listens even with no dashboard, on 8787 unless told: a
    # free loopback port, so two clusters of parallel test workers never meet there.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                         resources={"GPU": 1}, host="127.0.0.1",
                                         dashboard_address="127.0.0.1:0",
                                         scheduler_kwargs={"dashboard": False})
    try:
        yield local
    finally:
        local.close(timeout=30)


def record_command(address: str, out: Path, runner: str, sizes: list[str],
                   repeats: int) -> list[str]:
    sizes_args = [a for n in sizes for a in ("-s", n)]
    return [sys.executable, "-m", "gemmscope.kernels", "record", "-o", str(out),
            "--cluster", address, "--runner", runner, "-l", ",".join(LEVELS), *sizes_args,
            "-r", str(repeats), "--no-compare"]


def places(session: recording.Session) -> dict[int, str]:
    """device index -> worker, from the header's devices and later device events."""
    seen = {d.id: d.worker for d in session.header.devices}
    seen.update({e.device: e.worker for e in session.events if e.type == "device"})
    return seen


def test_the_cluster_merges_every_run_once_with_its_host_and_device(cluster, tmp_path):
    out = tmp_path / "cluster.jsonl"
    done = subprocess.run(record_command(cluster.scheduler_address, out,
                                         f"{sys.executable} {FAKE}", ["16", "32"], 3),
                          capture_output=True, text=True, timeout=LIMIT_S)
    assert done.returncode == 0, done.stderr
    session = recording.read_session(out)
    assert session.problem is None and session.header.protocol == protocol.PROTOCOL_VERSION
    expected = sorted((lv, n) for lv in LEVELS for n in (16, 32))
    assert sorted((r.level, r.M) for r in session.results) == expected
    workers = places(session)
    assert set(workers.values()) <= set(cluster.scheduler_info["workers"])
    for event in session.events[1:]:
        if event.type == "device":
            continue
        assert event.host and workers[event.device] == event.worker
    # each run's events stay together, on one device, in order
    for r in session.results:
        start = next(e for e in session.events if e.type == "run_start"
                     and e.id == r.id and e.device == r.device)
        assert start.t <= r.t


def test_a_worker_killed_mid_run_loses_only_that_run(cluster, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    out = tmp_path / "lost.jsonl"
    # slow runs (5 repeats of 0.2 s); each writes LEVEL-M with its worker's pid at its start
    runner = f"env FAKE_RUNNER_MARKS={marks} {sys.executable} {FAKE} --mode slow"
    proc = subprocess.Popen(record_command(cluster.scheduler_address, out, runner,
                                           ["16", "32"], 5),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + LIMIT_S
        while not any(marks.iterdir()):
            assert time.monotonic() < deadline and proc.poll() is None, "no run started"
            time.sleep(0.02)
        first = next(marks.iterdir())
        level, size = first.name.rsplit("-", 1)
        os.kill(int(first.read_text()), signal.SIGKILL)  # the worker, mid-run
        _, err = proc.communicate(timeout=LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert proc.returncode == 1 and "1 run(s) lost with their worker" in err
    session = recording.read_session(out)
    [lost] = session.errors
    assert lost.kind == "worker_lost" and (lost.level, lost.M) == (level, int(size))
    assert lost.worker and lost.worker in lost.message
    expected = sorted((lv, n) for lv in LEVELS for n in (16, 32) if (lv, n) != (level, int(size)))
    assert sorted((r.level, r.M) for r in session.results) == expected


def test_no_scheduler_is_said_at_once(tmp_path):
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "gemmscope.kernels", "record", "-o",
                           str(tmp_path / "r.jsonl"), "--cluster", "tcp://127.0.0.1:9",
                           "-l", "naive", "-s", "16"],
                          capture_output=True, text=True, timeout=LIMIT_S)
    assert done.returncode == 2 and "no Dask scheduler answered" in done.stderr
    assert time.monotonic() - started < LIMIT_S
    assert not list(tmp_path.iterdir())


def test_a_gemmscope_worker_is_one_dask_worker_with_one_gpu():
    """One process, one thread, one GPU resource, the GPU chosen by its environment; and
    where told to (--host, --insecure: a plain tcp:// scheduler beyond loopback) it
    listens on that address only, its dashboard off (kernels/drive/cluster_serve.py)."""
    from gemmscope.kernels.cli import main as cli
    from gemmscope.kernels.cli.options import worker_options
    from gemmscope.kernels.drive.cluster_serve import worker_command

    argv, env = worker_command(worker_options(cli.build_parser().parse_args(
        ["worker", "tcp://sched:8786", "--device", "3", "--host", "10.0.0.5", "--insecure"])))
    assert argv[:4] == [sys.executable, "-m", "distributed.cli.dask_worker", "tcp://sched:8786"]
    options = argv[4:]
    assert options[options.index("--nworkers") + 1] == "1"
    assert options[options.index("--nthreads") + 1] == "1"
    assert options[options.index("--resources") + 1] == "GPU=1"
    assert options[options.index("--name") + 1].startswith("gpu3@")
    assert options[options.index("--host") + 1] == "10.0.0.5"
    assert "--no-dashboard" in options
    assert env["CUDA_VISIBLE_DEVICES"] == "3" and env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
