"""Read an Nsight Compute report through the app's reader (app/core/ncu_report.py) and
print what the Code view and the roofline would show of each kernel, and the report's
source-correlated metric names (to check the names the reader looks for):

    PYTHONPATH=<ncu>/extras/python python3 benchmarks/ncu_report_read.py REPORT.ncu-rep
    python3 benchmarks/ncu_report_read.py --smoke  # CI: the module's stand-in, a made-up report

Needs ncu_report (the ncu extra, or Nsight Compute's extras/python); no GPU. ``--smoke``
reads a report of tests/support/fake_ncu_report.py (the module's stand-in, its own file
format; one kernel from the H200 source pages, launch metrics made up)."""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path

import _smoke

from gemmscope.app.core import ncu_report, ncu_report_process


def stand_in_report() -> str:
    """A report of the stand-in module (tests/support/fake_ncu_report.py), one kernel."""
    fake = _smoke.support("fake_ncu_report")  # on the path of the reader's child too

    print("smoke: ncu_report is a stand-in (tests/support/fake_ncu_report.py)")
    return str(fake.write_report(Path(tempfile.mkdtemp()) / "smoke.ncu-rep",
                                 [fake.h200_kernel()]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", nargs="?", help="the .ncu-rep file")
    ap.add_argument("--module", default=ncu_report.MODULE, help="the reader module's name")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if args.smoke:
        args.report, args.module = stand_in_report(), "fake_ncu_report"
    elif args.report is None:
        ap.error("the report to read is needed")
    path = args.report
    try:  # as the app reads it: in a child process
        report = ncu_report_process.read_report(path, module=args.module)
    except ncu_report.ReportError as exc:
        print(f"not read: {exc}")
        return 1
    for k in report.kernels:
        lk = k.kernel
        print(f"{k.key}: {lk.kernel}")
        print(f"  grid {lk.grid} block {lk.block} regs {lk.regs} smem {lk.smem_static_bytes}"
              f" + {lk.smem_dynamic_bytes} B, {lk.ms} ms")
        lines = k.lines
        print(f"  SASS lines {0 if lk.sass is None else lk.sass.count('*/ ')}, main loop "
              f"{lk.main_loop}, sass_reason {lk.sass_reason}")
        print(f"  per-line fields {sorted((lines.columns or {}) if lines else [])}, rows "
              f"{len(lines.lines or []) if lines else 0}, stall reasons "
              f"{list((lines.stall_totals or {}) if lines else {})[:6]}")
        print(f"  sources {list(lk.sources or {})} ({lk.sources_reason})")
        print(f"  executed mix { {c: v for c, v in (lk.executed_mix or {}).items() if v} }")
        print(f"  flops {lk.flops} ({lk.flops_from}), dram bytes {lk.dram_bytes}, "
              f"precision {k.precision}, TFLOPS {report.tflops(k)}")
    module = importlib.import_module(args.module)
    action = module.load_report(path).range_by_idx(0).action_by_idx(0)
    correlated = sorted(n for n in action.metric_names()
                        if (m := action.metric_by_name(n)) is not None
                        and m.has_correlation_ids())
    print(f"correlated metrics of the first kernel ({len(correlated)}):")
    print("  " + ", ".join(correlated))
    return 0


if __name__ == "__main__":
    sys.exit(main())
