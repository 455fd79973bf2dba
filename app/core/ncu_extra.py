"""Whether the ``ncu`` extra (NVIDIA's ncu_report module) is installed, and what to install
where it is not: what the File menu needs at start-up, without loading the report reader
(app/core/ncu_report.py) or the GPU side's modules it uses."""

from __future__ import annotations

import importlib.util

MODULE = "ncu_report"
INSTALL = "pip install 'gemmscope[ncu]'"
MISSING = (f"Opening an Nsight Compute report needs NVIDIA's ncu-report package "
           f"(the ncu extra, not bundled: its licence does not allow it): {INSTALL}")


def missing(module: str = MODULE) -> str | None:
    """Why a report cannot be opened here (the package is not installed), or None.
    ``module``: another module of its API (a test's stand-in)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else MISSING
