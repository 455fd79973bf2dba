"""A stand-in for NVIDIA's ``ncu_report`` module (the ``ncu`` extra), for tests: the part of
its documented API that app/core/ncu_report.py calls (``load_report`` -> IContext ->
IRange -> IAction: ``name``, ``metric_names``, ``metric_by_name``, ``sass_by_pc``,
``source_info``, ``source_files``; IMetric: ``value``, ``unit``, ``num_instances``,
``has_correlation_ids``, ``correlation_ids``), reading what the test wrote with
:func:`write_report` (JSON: the stand-in's own file, not Nsight Compute's format).

FORMAT SAMPLE, NOT A MEASUREMENT OF THE MODULE: :func:`h200_kernel` makes a kernel from
the H200 source pages of register_2d (tests/fixtures/ncu_source/), its per-instruction
counts and stall samples as ncu printed them, under the metric names the adapter reads;
its launch metrics are made up.

Install it for a test with ``install(monkeypatch)``: it becomes ``sys.modules["ncu_report"]``;
or name it (``module="fake_ncu_report"``) to the child process that reads a report
(app/core/ncu_report_process.py): the child's path is the test's.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import places

PAGES = places.FIXTURES / "ncu_source"
CU = "kernels/cuda/register_2d.cu"
# the page's column -> the source-correlated metric the stand-in names it by
PAGE_METRICS = {"Instructions Executed": "inst_executed",
                "Warp Stall Sampling (All Samples)": "smsp__pcsamp_sample_count",
                "L1 Wavefronts Shared": "memory_l1_wavefronts_shared",
                "L1 Wavefronts Shared Ideal": "memory_l1_wavefronts_shared_ideal",
                "L1 Wavefronts Shared Excessive":
                    "derived__memory_l1_wavefronts_shared_excessive"}
STALL = "smsp__pcsamp_warps_issue_stalled_"
LAUNCH = {"gpu__time_duration.sum": 812345.0, "launch__grid_dim_x": 8,
          "launch__grid_dim_y": 8, "launch__grid_dim_z": 1, "launch__block_dim_x": 256,
          "launch__block_dim_y": 1, "launch__block_dim_z": 1,
          "launch__registers_per_thread": 128, "launch__shared_mem_per_block_static": 8192,
          "launch__shared_mem_per_block_dynamic": 0,
          # as an H200 report of `ncu --set full` holds them: rates per elapsed cycle,
          # the cycles apart, and no plain count (nor "dram__bytes.sum")
          "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed": 2500.0,
          "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed": 5.0,
          "smsp__cycles_elapsed.avg": 400000.0,
          "dram__bytes_read.sum": 9.0e6, "dram__bytes_write.sum": 4.0e6}
UNITS = {"gpu__time_duration.sum": "ns"}  # as Nsight Compute 2025.3 names it


def _number(cell: str) -> float | None:
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None


def h200_kernel(**launch: float) -> dict[str, Any]:
    """A kernel of the stand-in's report made from the H200 pages (see the module doc)."""
    rows = list(csv.reader(io.StringIO((PAGES / "register_2d_sass.csv").read_text())))
    name, head = rows[0][1], rows[1]
    body = [r for r in rows[2:] if r and r[0].startswith("0x")]
    pcs: dict[str, dict[str, float]] = {}
    for column, metric in PAGE_METRICS.items():
        i = head.index(column)
        pcs[metric] = {str(int(r[0], 16)): v for r in body if (v := _number(r[i])) is not None}
    for i, column in enumerate(head):
        if column.startswith("stall_") and not column.endswith("(Not Issued)"):
            values = {str(int(r[0], 16)): v for r in body if (v := _number(r[i]))}
            if values:
                pcs[STALL + column[len("stall_"):]] = values
    where: dict[str, list[Any]] = {}
    both = list(csv.reader(io.StringIO((PAGES / "register_2d_cudasass.csv").read_text())))
    line = None
    for r in both:
        if r and r[0].strip().isdigit():
            line = int(r[0])
        elif r and r[0] == "" and len(r) > 3 and r[2].startswith("0x") and line:
            where[str(int(r[2], 16))] = ["/home/me/gemmscope/" + CU, line]
    return {"name": name, "metrics": {**LAUNCH, **launch},
            "units": dict(UNITS),
            "pcs": pcs, "sass": {str(int(r[0], 16)): r[1].strip() for r in body},
            "where": where,
            "files": {"/home/me/gemmscope/" + CU: (places.REPO / CU).read_text()}}


def write_report(path: Path, kernels: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"stand_in_ncu_report": 1, "kernels": kernels}))
    return path


class IMetric:
    ValueKind_DOUBLE = 4

    def __init__(self, name: str, value: Any = None, instances: list[Any] | None = None,
                 ids: list[int] | None = None, unit: str = ""):
        self._name, self._value, self._instances, self._ids = name, value, instances, ids
        self._unit = unit

    def name(self) -> str:
        return self._name

    def unit(self) -> str:
        return self._unit

    def value(self, idx: int | None = None) -> Any:
        return self._value if idx is None else (self._instances or [])[idx]

    def num_instances(self) -> int:
        return len(self._instances or [])

    def has_correlation_ids(self) -> bool:
        return self._ids is not None

    def correlation_ids(self) -> IMetric | None:
        return None if self._ids is None else IMetric(self._name + "_ids", None, self._ids)


class ISourceInfo:
    def __init__(self, file: str, line: int):
        self._file, self._line = file, line

    def file_name(self) -> str:
        return self._file

    def line(self) -> int:
        return self._line


class IAction:
    NameBase_FUNCTION, NameBase_DEMANGLED, NameBase_MANGLED = 0, 1, 2

    def __init__(self, data: dict[str, Any]):
        self._d = data

    def name(self, name_base: int = 0) -> str:
        return self._d["name"]

    def metric_names(self) -> tuple[str, ...]:
        return (*self._d["metrics"], *self._d["pcs"])

    def metric_by_name(self, name: str) -> IMetric | None:
        if name in self._d["metrics"]:
            return IMetric(name, self._d["metrics"][name],
                           unit=self._d.get("units", {}).get(name, ""))
        if name in self._d["pcs"]:
            items = sorted(self._d["pcs"][name].items(), key=lambda kv: int(kv[0]))
            return IMetric(name, None, [v for _, v in items], [int(a) for a, _ in items])
        return None

    def sass_by_pc(self, address: int) -> str:
        return self._d["sass"].get(str(address), "")

    def source_info(self, address: int) -> ISourceInfo | None:
        w = self._d["where"].get(str(address))
        return None if w is None else ISourceInfo(w[0], w[1])

    def source_files(self) -> dict[str, str]:
        return dict(self._d["files"])


class IRange:
    def __init__(self, actions: list[dict[str, Any]]):
        self._actions = [IAction(a) for a in actions]

    def num_actions(self) -> int:
        return len(self._actions)

    def action_by_idx(self, idx: int) -> IAction:
        return self._actions[idx]


class IContext:
    def __init__(self, ranges: list[IRange]):
        self._ranges = ranges

    def num_ranges(self) -> int:
        return len(self._ranges)

    def range_by_idx(self, idx: int) -> IRange:
        return self._ranges[idx]


CRASH, HANG = "STAND-IN: CRASH", "STAND-IN: HANG"  # what write_hostile writes


def write_hostile(path: Path, what: str) -> Path:
    """A file on which the stand-in does what a native reader may do on a hostile report:
    die of a segmentation fault (CRASH) or never return (HANG)."""
    path.write_text(what)
    return path


def load_report(file_name: str) -> IContext:
    """As the module does: a missing file raises; a file it cannot read gives no ranges."""
    path = Path(file_name)
    if not path.exists():
        raise FileNotFoundError(f"Could not load report file: {file_name} does not exist.")
    head = path.read_bytes()[:64]
    if head.startswith(CRASH.encode()):
        os.kill(os.getpid(), signal.SIGSEGV)
    if head.startswith(HANG.encode()):
        while True:
            time.sleep(60)
    try:
        data = json.loads(path.read_text())
        kernels = data["kernels"] if data.get("stand_in_ncu_report") else []
    except (ValueError, UnicodeDecodeError, KeyError, AttributeError):
        kernels = []
    return IContext([IRange(kernels)] if kernels else [])


def install(monkeypatch: Any) -> None:
    """Make this module ``import ncu_report`` for the test."""
    monkeypatch.setitem(sys.modules, "ncu_report", sys.modules[__name__])
