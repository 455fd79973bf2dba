"""A stand-in runner for tests: a real subprocess that speaks the protocol, no GPU.
A run with a user's ``kernel`` object answers with its params (10 + their sum / 100
TFLOPS), or with its refusal as an error.

    python fake_runner.py [--mode ok|crash|hang|garbage|slow] [--state FILE] [--telemetry]
                          [--protocol N]

ok: every run answers run_start, repeats, result, done. crash: the first run of the
process exits mid-run (after two repeats). hang: the first run stops answering after
two repeats. hang_telemetry: like hang, but telemetry samples keep coming.
silent_start: never says anything. slow: every repeat takes 0.2 s (a run to cut off in
the middle). --protocol: the header's protocol version (999: a newer one). garbage:
writes a line that is not JSON before each run_start. With
--state, crash/hang happen only in the first process that uses the state file, so the
restarted runner serves normally (as a real runner would after a sticky CUDA error).
--telemetry: an NVML-like sample after every repeat (power capped, SwPowerCap), and
results that carry energy and ``throttled`` (invented numbers).
close_stdout: at the first run, closes its stdout and runs on. die_with_child: at the
first run, starts a child that keeps its pipes open, then exits. die_with_escaped_child:
the same, the child in a session of its own (outside the runner's process group). With
``$FAKE_RUNNER_PIDS`` set to a folder, the runner and such a child write their pids
there (``runner``, ``child``).

The GPU its parent gave it (``CUDA_VISIBLE_DEVICES``) names its device ("Fake GPU 1",
uuid "GPU-fake-1"; its results read 10 + N TFLOPS). With ``$FAKE_RUNNER_MARKS`` set to a
folder, each run writes the file ``LEVEL-M`` there at its start, holding this process's
parent's pid (the process that drives it: a cluster test kills that one mid-run). With
``$FAKE_RUNNER_TRITON_NAME`` set, the results of a user's Triton kernel name that as the
kernel that ran (the compiled name a real runner reports). With
``$FAKE_RUNNER_COMPILE_GATE`` set to a folder, each level's first run says it compiles (a
``phase`` ``compile`` after its ``run_start``) and waits for the file ``LEVEL`` in that
folder before it goes on; its result then carries ``compile_s`` and ``compile_cached``
(true where an earlier process built that level: the file ``LEVEL.built`` there).
With ``$FAKE_RUNNER_SMS`` set to SM counts by GPU ("132,114"), its device names its SM
count (GPU N the Nth; none otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

T0 = time.monotonic()


def emit(ev: dict) -> None:
    ev = {"t": round(time.monotonic() - T0, 6), **ev}
    sys.stdout.write(json.dumps(ev) + "\n")
    sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--state")
    ap.add_argument("--telemetry", action="store_true")
    ap.add_argument("--protocol", type=int, default=1)
    args = ap.parse_args()
    mode = args.mode
    if args.state:  # made exclusively: of runners started together, one is the first
        try:
            with Path(args.state).open("x") as fh:
                fh.write(str(os.getpid()))
        except FileExistsError:
            mode = "ok"
    if mode == "silent_start":  # never gets ready (e.g. stuck initialising the device)
        time.sleep(3600)
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES")
    device = {"name": "Fake GPU" + (f" {gpu}" if gpu else ""), "uuid": f"GPU-fake-{gpu or 0}"}
    sms = [int(n) for n in os.environ.get("FAKE_RUNNER_SMS", "").split(",") if n.strip()]
    if sms:
        device["sm_count"] = sms[min(int(gpu or 0), len(sms) - 1)]
    emit({"type": "session", "protocol": args.protocol, "created": "2026-11-29T12:00:00+00:00",
          "device": device, "levels": {}, "stand_in": True})
    emit({"type": "ready"})
    compiled_here: set[str] = set()  # levels "built" in this process (the gate)
    for line in sys.stdin:
        try:
            cmd = json.loads(line)
        except json.JSONDecodeError:
            emit({"type": "error", "kind": "bad_input", "message": "not JSON"})
            emit({"type": "done"})
            continue
        if cmd.get("cmd") == "ping":
            emit({"type": "pong"})
        elif cmd.get("cmd") == "quit":
            emit({"type": "bye"})
            return 0
        elif cmd.get("cmd") == "run":
            base = {"id": cmd.get("id"), "level": cmd["level"], "M": cmd["M"],
                    "N": cmd["N"], "K": cmd["K"]}
            kernel = cmd.get("kernel")  # a user's kernel: its variant's params, its refusal
            if isinstance(kernel, dict):
                base["params"] = kernel.get("params", {})
                emit({"type": "kernel", "id": cmd.get("id"), "level": cmd["level"],
                      "file": kernel.get("file"), "catalog": {"id": cmd["level"]}})
                if kernel.get("refused"):
                    emit({"type": "error", "kind": "refused", **base,
                          "message": f"{cmd['level']} was refused before launch: "
                                     f"{kernel['refused']}"})
                    emit({"type": "done", "id": cmd.get("id")})
                    continue
            if mode == "garbage":
                sys.stdout.write("this is not an event\n")
                sys.stdout.flush()
            marks = os.environ.get("FAKE_RUNNER_MARKS")
            if marks:
                Path(marks, f"{cmd['level']}-{cmd['M']}").write_text(str(os.getppid()))
            emit({"type": "run_start", **base, "dtype": "fp32", "precision": "fp32",
                  "repeats": cmd.get("repeats", 20), "warmup": 0})
            gate = os.environ.get("FAKE_RUNNER_COMPILE_GATE")
            built = {}
            if gate and cmd["level"] not in compiled_here:
                compiled_here.add(cmd["level"])
                emit({"type": "phase", **base, "mode": "burst", "phase": "compile",
                      "trial": 0})
                while not Path(gate, cmd["level"]).exists():
                    time.sleep(0.01)
                kept = Path(gate, cmd["level"] + ".built")  # a later process's "cache"
                built = {"compile_s": 0.02 if kept.exists() else 1.5,
                         "compile_cached": kept.exists()}
                kept.touch()
            pids = os.environ.get("FAKE_RUNNER_PIDS")
            if pids:
                Path(pids, "runner").write_text(str(os.getpid()))
            if mode == "close_stdout":
                sys.stdout.close()
                os.close(1)
                time.sleep(3600)
            if mode in ("die_with_child", "die_with_escaped_child"):
                import subprocess  # the child inherits stdout and stderr

                child = subprocess.Popen(
                    [sys.executable, "-c", "import time; time.sleep(3600)"],
                    start_new_session=mode == "die_with_escaped_child")
                if pids:
                    Path(pids, "child").write_text(str(child.pid))
                os._exit(4)
            for i in range(cmd.get("repeats", 20)):
                emit({"type": "repeat", **base, "i": i, "ms": 1.0, "tflops": 1.0 + i})
                if args.telemetry:
                    emit({"type": "telemetry", "sm_clock_mhz": 1755, "power_w": 700.0,
                          "power_limit_w": 700.0, "power_kind": "average",
                          "reasons": ["SwPowerCap"]})
                if mode == "slow":
                    time.sleep(0.2)
                if i == 1 and mode == "crash":
                    os._exit(3)
                if i == 1 and mode == "hang":
                    time.sleep(3600)
                if i == 1 and mode == "hang_telemetry":  # stuck, but the sampler goes on
                    while True:
                        emit({"type": "telemetry", "sm_clock_mhz": 1980, "power_w": 100.0})
                        time.sleep(0.05)
            # a user's Triton kernel: the compiled name its launch reports, where asked
            compiled = os.environ.get("FAKE_RUNNER_TRITON_NAME")
            named = ({"kernel": compiled} if compiled and isinstance(kernel, dict)
                     and kernel.get("language") == "triton" else {})
            emit({"type": "result", **base, **named, "dtype": "fp32", "precision": "fp32",
                  "median_ms": 1.0, "verified": True,
                  # a kernel's variant: TFLOPS from its parameters, so cells differ
                  "tflops": 10.0 + int(gpu or 0) + sum(base.get("params", {}).values()) / 100,
                  "rel_err": 0.0,
                  "repeats": cmd.get("repeats", 20), **built,
                  **({"energy_j": 0.7, "gflop_per_j": 2e-3 * cmd["M"] * cmd["N"] * cmd["K"]
                      / 1e9 / 0.7 * 1e3, "avg_power_w": 700.0, "throttled": ["SwPowerCap"]}
                     if args.telemetry else {})})
            emit({"type": "done", "id": cmd.get("id")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
