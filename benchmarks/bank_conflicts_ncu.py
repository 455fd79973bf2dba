"""Shared-memory bank conflicts and wavefronts: the access model against Nsight Compute.

For every SIMT level (default) at M = N = K = 1024, runs the level once under

    ncu --clock-control none --metrics <the four metrics> --csv --page raw
        -k regex:<kernel> -c 1 python3 benchmarks/launch_one.py LEVEL M N K

and prints model vs measured with the difference in percent (plus the plain 4-phase
model's value, without the uniform-pair rule for 128-bit reads), and writes JSON. Unless
--core-only, it also asks for the shared ld/st and cp.async instruction counts (and
cp.async's shared wavefronts and conflicts), which check the modelled instruction
stream; if ncu rejects those names it retries with the four core metrics.

    python3 benchmarks/bank_conflicts_ncu.py [--size 1024] [--levels a,b] [--ncu ncu]
                                             [--json out/bank_conflicts_ncu.json]
    python3 benchmarks/bank_conflicts_ncu.py --from-dir out   # CSVs of ncu_levels.sh

Needs a GPU, CuPy and ncu (profiling counters allowed for the user). Imports no Qt.
cp.async's shared writes are not STS: the model reports them apart (``cp_async`` in the
JSON) and compares only ld/st.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gemmscope.kernels import registry
from gemmscope.kernels.models import SIMT_LEVELS, model_for, totals
from gemmscope.kernels.models.banks import PHASES_ONLY
from gemmscope.kernels.models.level_model import NCU_EXTRA_METRICS, NCU_METRICS
from gemmscope.kernels.models.ncu_compare import (
    NcuParseError,
    compare,
    format_table,
    parse_raw_csv,
)

LAUNCHER = Path(__file__).with_name("launch_one.py")


def ncu_command(ncu: str, level_id: str, M: int, N: int, K: int, extra: bool = False
                ) -> list[str]:
    kernel = registry.get(level_id).kernel
    metrics = [*NCU_METRICS.values(), *(NCU_EXTRA_METRICS.values() if extra else ())]
    return [ncu, "--clock-control", "none", "--metrics", ",".join(metrics),
            "--csv", "--page", "raw", "-k", f"regex:{kernel}", "-c", "1",
            sys.executable, str(LAUNCHER), level_id, str(M), str(N), str(K)]


def profile(ncu: str, level_id: str, M: int, N: int, K: int, timeout_s: float,
            extra: bool = True) -> dict[str, Any]:
    """Run ncu once; with ``extra``, retry with the four core metrics alone if the run
    with the extra ones gave no row (an unknown metric name, say)."""
    out = _profile_once(ncu, level_id, M, N, K, timeout_s, extra)
    if extra and "row" not in out:
        retry = _profile_once(ncu, level_id, M, N, K, timeout_s, False)
        retry["first_try"] = {k: v for k, v in out.items() if k != "row"}
        return retry
    return out


def _profile_once(ncu: str, level_id: str, M: int, N: int, K: int, timeout_s: float,
                  extra: bool) -> dict[str, Any]:
    cmd = ncu_command(ncu, level_id, M, N, K, extra)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"command": cmd, "error": f"ncu ran past {timeout_s} s"}
    out: dict[str, Any] = {"command": cmd, "returncode": proc.returncode,
                           "seconds": round(time.perf_counter() - t0, 1),
                           "extra_metrics": extra, "stderr_tail": proc.stderr[-2000:]}
    try:
        rows = parse_raw_csv(proc.stdout)
    except NcuParseError as exc:
        rows = []
        out["error"] = str(exc)
    if not rows:
        out.setdefault("error", "ncu profiled no kernel")
        out["stdout_tail"] = proc.stdout[-2000:]
        return out
    out.pop("error", None)
    out["kernel"] = rows[0].kernel
    out["measured"] = rows[0].values
    out["units"] = rows[0].units
    out["row"] = rows[0]
    return out


def from_file(path: Path) -> dict[str, Any]:
    """A profile read from a CSV that ncu wrote earlier (same layout as its stdout)."""
    out: dict[str, Any] = {"file": str(path)}
    try:
        rows = parse_raw_csv(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, NcuParseError) as exc:
        out["error"] = str(exc)
        return out
    if not rows:
        out["error"] = "no profiled kernel in the file"
        return out
    out.update(kernel=rows[0].kernel, measured=rows[0].values, units=rows[0].units,
               row=rows[0])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1024, help="M = N = K (default 1024)")
    ap.add_argument("--levels", default=",".join(SIMT_LEVELS),
                    help="comma-separated level ids (default: every SIMT level)")
    ap.add_argument("--ncu", default="ncu", help="the ncu executable")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per level")
    ap.add_argument("--json", default="out/bank_conflicts_ncu.json", help="where to write")
    ap.add_argument("--core-only", action="store_true",
                    help="ask only for the four bank-conflict and wavefront metrics")
    ap.add_argument("--from-dir", default=None,
                    help="do not run ncu: read DIR/ncu_<level>.csv, as written by "
                         "benchmarks/ncu_levels.sh")
    args = ap.parse_args(argv)
    if args.from_dir is None and shutil.which(args.ncu) is None:
        print(f"ncu not found ({args.ncu!r}); pass --ncu /path/to/ncu", file=sys.stderr)
        return 2
    M = N = K = args.size
    rows = []
    report: dict[str, Any] = {"M": M, "N": N, "K": K, "metrics": list(NCU_METRICS.values()),
                              "extra_metrics": list(NCU_EXTRA_METRICS.values()),
                              "levels": {}}
    for level_id in [s.strip() for s in args.levels.split(",") if s.strip()]:
        model = totals(level_id, M, N, K)
        phases_only = model_for(level_id).totals(M, N, K, PHASES_ONLY)
        if args.from_dir is not None:
            prof = from_file(Path(args.from_dir) / f"ncu_{level_id}.csv")
        else:
            prof = profile(args.ncu, level_id, M, N, K, args.timeout, not args.core_only)
        cmp_rows = compare(model, prof.pop("row", None), phases_only)
        rows += cmp_rows
        report["levels"][level_id] = {**prof, "model": model.as_dict(),
                                      "model_phases_only": phases_only.as_dict(),
                                      "comparison": [r.as_dict() for r in cmp_rows]}
        if "error" in prof:
            print(f"{level_id}: {prof['error']}\n{prof.get('stderr_tail', '')}",
                  file=sys.stderr)
    print(format_table(rows))
    for level_id, entry in report["levels"].items():
        if entry["model"]["caveat"]:
            print(f"{level_id}: {entry['model']['caveat']}")
        cp = entry["model"]["cp_async"]
        if cp["instructions"]:
            print(f"{level_id}: cp.async shared writes (model only, not in st): "
                  f"{cp['wavefronts']:,} wavefronts, {cp['conflicts']:,} conflicts")
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
