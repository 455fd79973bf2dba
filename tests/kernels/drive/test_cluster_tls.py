"""The cluster over TLS on loopback, end to end: ``gemmscope scheduler`` and ``gemmscope
worker`` with a throwaway CA's certificates, ``record --cluster tls://...`` through them
with a stand-in runner; every listening socket on loopback, no dashboard; a client that
speaks plain tcp:// or holds another CA's certificate is refused.

Every process is started and stopped here, every wait has a deadline."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import places
import pytest

from gemmscope.kernels.protocol import recording

distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")
tls_certs = pytest.importorskip("tls_certs")  # needs the cryptography package

FAKE = places.FAKE_RUNNER
LIMIT_S = 90.0
GEMMSCOPE = [sys.executable, "-m", "gemmscope.kernels"]


def _tls_args(pem) -> list[str]:
    return ["--tls-ca-file", str(pem.ca), "--tls-cert", str(pem.cert),
            "--tls-key", str(pem.key)]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _security(pem):
    from distributed.security import Security

    return Security(require_encryption=True, tls_ca_file=str(pem.ca),
                    tls_client_cert=str(pem.cert), tls_client_key=str(pem.key))


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """A TLS scheduler and one TLS worker on loopback, started as the docs say; yields
    (address, certificates, [scheduler, worker] processes)."""
    folder = tmp_path_factory.mktemp("tls")
    pem = tls_certs.make_ca_and_cert(folder)
    file = folder / "scheduler.json"
    scheduler = subprocess.Popen([*GEMMSCOPE, "scheduler", "--port", "0", "--scheduler-file",
                                  str(file), *_tls_args(pem)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    procs = [scheduler]
    try:
        deadline = time.monotonic() + LIMIT_S
        while not (file.exists() and file.stat().st_size):
            assert scheduler.poll() is None, scheduler.stderr.read()
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        worker = subprocess.Popen([*GEMMSCOPE, "worker", address, *_tls_args(pem)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(worker)
        with distributed.Client(address, security=_security(pem), timeout=LIMIT_S) as client:
            client.wait_for_workers(1, timeout=LIMIT_S)
        yield address, pem, procs
    finally:
        for proc in reversed(procs):
            _stop(proc)
        scheduler.stderr.close()


def _sockets(proc) -> list:
    return [(c.laddr.ip, c.laddr.port) for c in proc.net_connections("inet")
            if c.status == psutil.CONN_LISTEN]


def _listening(pid: int) -> list[tuple[str, int]]:
    """What the process and its descendants listen on. The process itself must be alive;
    a descendant that exits (or is a zombie) between listing and reading listens nowhere."""
    top = psutil.Process(pid)
    found = _sockets(top)
    for child in top.children(recursive=True):
        try:
            found += _sockets(child)
        except psutil.NoSuchProcess:  # ZombieProcess is one
            continue
    return found


def test_the_scheduler_and_worker_listen_on_loopback_only_over_tls(tls_cluster):
    address, _pem, procs = tls_cluster
    assert address.startswith("tls://127.0.0.1:")
    for proc in procs:
        sockets = _listening(proc.pid)
        assert sockets, "each process listens somewhere"
        assert all(ip in ("127.0.0.1", "::1") for ip, _ in sockets), sockets
    # no dashboard: Dask's default ports are not taken
    assert not any(port in (8787, 8788) for proc in procs for _, port in _listening(proc.pid))


def test_record_runs_through_a_tls_cluster(tls_cluster, tmp_path):
    address, pem, _ = tls_cluster
    out = tmp_path / "tls.jsonl"
    done = subprocess.run([*GEMMSCOPE, "record", "-o", str(out), "--cluster", address,
                           *_tls_args(pem), "--runner", f"{sys.executable} {FAKE}",
                           "-l", "naive,coalesced", "-s", "16", "-r", "2", "--no-compare"],
                          capture_output=True, text=True, timeout=LIMIT_S)
    assert done.returncode == 0, done.stderr
    session = recording.read_session(out)
    assert sorted(r.level for r in session.results) == ["coalesced", "naive"]
    assert all(d.worker.startswith("tls://127.0.0.1:") for d in session.header.devices)


def test_a_plain_tcp_client_is_refused_by_the_tls_scheduler(tls_cluster):
    address = tls_cluster[0]
    plain = address.replace("tls://", "tcp://")
    with pytest.raises(OSError):  # TimeoutError included: no answer to plain Dask
        distributed.Client(plain, timeout=5)


def test_a_client_with_another_cas_certificate_is_refused(tls_cluster, tmp_path):
    address = tls_cluster[0]
    rogue = tls_certs.make_ca_and_cert(tmp_path, "rogue")
    with pytest.raises(OSError):
        distributed.Client(address, security=_security(rogue), timeout=5)


def test_record_without_the_certificates_is_refused_before_connecting(tls_cluster, tmp_path):
    done = subprocess.run([*GEMMSCOPE, "record", "-o", str(tmp_path / "r.jsonl"),
                           "--cluster", tls_cluster[0], "-l", "naive", "-s", "16"],
                          capture_output=True, text=True, timeout=LIMIT_S)
    assert done.returncode == 2
    assert "needs certificates" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())
