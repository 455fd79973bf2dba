"""What a runner's ``session`` event says of it: the protocol, when it started, its
version and the sources' commit, its device and GPU, its levels' source hashes and
catalog, and its telemetry (docs/protocol.md, session).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path
from typing import Any

from .. import __version__
from ..device.gpu_select import VISIBLE
from ..device.telemetry import Nvml
from ..ladder import registry
from ..protocol import events


def git_commit() -> str | None:
    """The commit of the sources: $GEMMSCOPE_COMMIT, else the checkout this runs from."""
    if os.environ.get("GEMMSCOPE_COMMIT"):
        return os.environ["GEMMSCOPE_COMMIT"]
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def session_header(device: dict[str, Any] | None, no_gpu_reason: str | None, nvml: Nvml,
                   telemetry_hz: float, unavailable: list[str]) -> dict[str, Any]:
    """The session event's fields; ``unavailable``: the references this runner cannot
    run (runner.unavailable_here), left out of its catalog."""
    return {
        "protocol": events.PROTOCOL_VERSION,
        "created": dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds"),
        "gemmscope": {"version": __version__, "commit": git_commit()},
        "device": device, "no_gpu_reason": no_gpu_reason,
        # the GPU its parent gave it (kernels/device/gpu_select.py), as nvidia-smi counts
        "gpu": os.environ.get(VISIBLE),
        "levels": registry.source_hashes(),
        "catalog": registry.catalog(unavailable=unavailable),
        "telemetry": {"available": nvml.available, "reason": nvml.reason,
                      "hz": telemetry_hz},
    }
