"""Recordings for the tests of ``record --update`` (tests/kernels/cli/test_record_update*.py):
a session as the H200 runner writes one, written plain or gzip, the command run in this
process, a runner refused, and a profile event of a level."""

from __future__ import annotations

import gzip
import io

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.toolchain import nvrtc

COMPILER = "NVRTC 13.0 through CuPy 14.2.0"
ARCH, SMS = "sm_90", 132


def code_key_of(level_id: str) -> str:
    return nvrtc.expected_key(registry.BY_ID[level_id], ARCH, COMPILER)


def session_events(protocol_version: int = protocol.PROTOCOL_VERSION, params: dict | None = None):
    """A recording as the H200 runner writes one: naive and coalesced at 64³ burst and
    naive sustained, each with its run_start; cuBLAS FP32 beside them; a user's kernel;
    naive's build with its sources. ``params``: the catalog's, by level."""
    catalog = [{"id": lv, "params": (params or {}).get(lv, registry.BY_ID[lv].params)}
               for lv in ("naive", "coalesced")]
    header = {"type": "session", "t": 1.25, "protocol": protocol_version,
              "created": "2026-12-01T00:00:00+00:00", "levels": {}, "catalog": catalog,
              "device": {"name": "NVIDIA H200", "arch": ARCH, "sm_count": SMS}}
    out = [header, {"type": "ready", "t": 1.3}]
    t = 2.0

    def run(n: int, level: str, mode: str = "burst", seconds: float = 3.0, after: float = 0.0,
            **extra):
        nonlocal t
        code = {"code_key": code_key_of(level), "compiler": COMPILER} if level in (
            "naive", "coalesced") else {}
        sustained = ({"window_s": 1.5, "trials": 2, "cooldown_s": 1.0}
                     if mode == "sustained" else {})
        out.append({"type": "run_start", "t": t, "id": f"run-{n}", "level": level, "M": 64,
                    "N": 64, "K": 64, "repeats": 5, "warmup": 2, "mode": mode, **sustained})
        t += seconds
        out.append({"type": "result", "t": t, "id": f"run-{n}", "level": level, "M": 64,
                    "N": 64, "K": 64, "dtype": "fp32", "precision": "fp32",
                    "median_ms": 0.01, "tflops": 1.0, "verified": True, "rel_err": 1e-7,
                    "repeats": 5 if mode == "burst" else 2, "warmup": 2, "mode": mode,
                    **sustained, **code, **extra})
        out.append({"type": "done", "t": t, "id": f"run-{n}"})
        t += after  # its build event, before the next run starts

    run(1, "cublas_fp32", seconds=1.0)
    run(1, "naive", after=0.5, reference="cublas_fp32", reference_tflops=2.0)
    out.append({"type": "build", "t": t, "id": "run-1", "level": "naive", "variant": "vector",
                "code_key": code_key_of("naive"), "compiler": COMPILER,
                "sources": nvrtc.source_files(registry.BY_ID["naive"])})
    run(2, "coalesced", reference="cublas_fp32", reference_tflops=2.0)
    run(3, "cublas_fp32", mode="sustained", seconds=6.0)
    run(3, "naive", mode="sustained", seconds=7.0)
    out.append({"type": "kernel", "t": t, "id": "run-4", "level": "my_kernel",
                "file": "my_kernel.cu", "catalog": {"id": "my_kernel", "user": "my_kernel.cu"}})
    run(4, "my_kernel")
    return out


def write_recording(path, events) -> bytes:
    data = "".join(protocol.dumps(e) + "\n" for e in events).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
    return path.read_bytes()


def run_update(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["record", "--update", *map(str, argv)], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def forbid_runner(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a runner was started")

    monkeypatch.setattr(cli, "open_session", refuse)


def counters_event(level: str, t: float) -> dict:
    return {"type": "counters", "t": t, "level": level, "M": 256, "N": 256, "K": 256,
            "tool": "ncu", "metrics": {"smsp__inst_executed.sum": 1.0},
            "command": ["ncu", "(test)"]}
