"""A stand-in runner for tests: a real subprocess that speaks the protocol.

    python fake_runner.py MODE [STATE_FILE]

MODE: ok (answers runs with a result), crash (exits in the middle of a run), hang (stops
answering in the middle of a run). With STATE_FILE the misbehaviour happens once: the
file is created, and later processes behave like ``ok``.
"""

from __future__ import annotations

import json
import os
import sys
import time

mode = sys.argv[1]
state = sys.argv[2] if len(sys.argv) > 2 else None
if state and os.path.exists(state):
    mode = "ok"
t0 = time.monotonic()


def emit(ev: dict) -> None:
    ev.setdefault("t", round(time.monotonic() - t0, 6))
    sys.stdout.write(json.dumps(ev) + "\n")
    sys.stdout.flush()


emit({"type": "session", "t": 0.0, "protocol": 1, "created": "now", "levels": {},
      "device": {"name": "Fake GPU"}})
emit({"type": "ready"})
for line in sys.stdin:
    cmd = json.loads(line)
    cid = cmd.get("id")
    if cmd["cmd"] == "quit":
        emit({"type": "bye", "id": cid})
        break
    if cmd["cmd"] != "run":
        emit({"type": "done", "id": cid})
        continue
    where = {"id": cid, "level": cmd["level"], "M": cmd["M"], "N": cmd["N"], "K": cmd["K"]}
    emit({"type": "run_start", **where, "repeats": 1})
    if mode in ("crash", "hang"):
        if state:
            open(state, "w").close()
        if mode == "crash":
            sys.exit(3)
        time.sleep(3600)
    emit({"type": "result", **where, "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0,
          "verified": True, "rel_err": 0.0, "repeats": 1})
    emit({"type": "done", "id": cid})
