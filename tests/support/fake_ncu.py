"""A stand-in for Nsight Compute in tests: an executable that prints ncu's raw CSV.

FORMAT SAMPLE, NOT MEASURED DATA: the CSV imitates the layout of ``ncu --csv --page raw``
output (==PROF== lines, the program's own prints, a header row, a units row, quoted
numbers with thousands separators, n/a) with made-up values.

    write_fake_ncu(path)                       prints FORMAT_SAMPLE whatever it is asked
    write_fake_ncu(path, values={...})         a row of these metric values for the kernel
                                               named by ``-k regex:NAME``
    write_fake_ncu(path, mode="fail")          exits 1 with a permission error, no CSV
    write_fake_ncu(path, mode="reject_extra")  refuses the smsp__ metrics (an older ncu)
    write_fake_ncu(path, log=FILE)             appends each command line (JSON) to FILE

The source page (``record --ncu-source``): a profiling run (``-o REPORT``) prints the
launch's JSON line and writes REPORT.ncu-rep; ``-i REPORT --page source`` prints the page
file given as ``source_page`` (``--print-source sass``) or ``cuda_page`` (``cuda,sass``),
real pages of the H200 from tests/fixtures/ncu_source/ by default. ``--version`` prints
VERSION. Modes for the source page: ``timeout`` (the profiling run sleeps a minute),
``garbled`` (the page is not CSV), ``no_report`` (ncu profiles no kernel: no report),
``slow_page`` (printing the page sleeps a minute). The launch is not run: its JSON
line is made of its command (a user's kernel's too: ``cli/user_launch.py``).

A reference's call (``record --ncu``: ``--profile-from-start off``, a reference's level
id): the report remembers the level, ``-i REPORT --page raw`` prints LIBRARY_KERNELS (a
split-K reduction, then the GEMM: made-up names, times and resources) and the source page
is ``library_page`` (tests/fixtures/ncu_source/library_call_sass.csv). Mode
``raw_garbled``: the raw page is not CSV.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import places

from gemmscope.kernels.models.level_model import NCU_METRICS

PAGES = places.FIXTURES / "ncu_source"
SOURCE_PAGE = PAGES / "register_2d_sass.csv"
CUDA_PAGE = PAGES / "register_2d_cudasass.csv"
LIBRARY_PAGE = PAGES / "library_call_sass.csv"  # a reference's call: two kernels
VERSION = "2099.1.0.0"  # made up: the stand-in's version

LD_C, ST_C = NCU_METRICS["ld_conflicts"], NCU_METRICS["st_conflicts"]
LD_W, ST_W = NCU_METRICS["ld_wavefronts"], NCU_METRICS["st_wavefronts"]
KERNEL_SAMPLE = ("void sgemm_register_2d<128, 128, 8, 8, 8, true>(int, int, int, "
                 "const float *, const float *, float *)")
HEAD = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
        "Block Size", "Grid Size", "Device", "CC"]


def raw_csv(kernel: str, values: dict[str, str]) -> str:
    """ncu's stdout for one profiled kernel with these metric cells (as ncu prints them)."""
    def row(cells: list[str]) -> str:
        return ",".join(f'"{c}"' for c in cells)

    fixed = ["0", "4242", "python3.12", "127.0.0.1", kernel, "1", "7", "(256, 1, 1)",
             "(8, 8, 1)", "0", "9.0"]
    return "\n".join([
        "==PROF== Connected to process 4242 (/usr/bin/python3.12)",
        "launching 1024 1024 1024",
        '==PROF== Profiling "kernel": 0%....50%....100% - 3 passes',
        "==PROF== Disconnected from process 4242",
        row(HEAD + list(values)),
        row([""] * (len(HEAD) + len(values))),
        row(fixed + list(values.values())), ""])


# FORMAT SAMPLE, NOT MEASURED: a library call's kernels as the raw page lists them
LIBRARY_KERNELS = [
    {"Kernel Name": "format_sample_splitk_reduce_kernel(float *, const float *, int)",
     "Block Size": "(128, 1, 1)", "Grid Size": "(64, 1, 1)",
     "gpu__time_duration.sum": "4,096", "launch__registers_per_thread": "32",
     "launch__shared_mem_per_block_static": "0",
     "launch__shared_mem_per_block_dynamic": "0"},
    {"Kernel Name": "format_sample_gemm_kernel_sm90_256x128x64_warpspecialized",
     "Block Size": "(384, 1, 1)", "Grid Size": "(132, 1, 1)",
     "gpu__time_duration.sum": "1,234,567", "launch__registers_per_thread": "168",
     "launch__shared_mem_per_block_static": "1,024",
     "launch__shared_mem_per_block_dynamic": "232,448"}]
LIBRARY_UNITS = {"gpu__time_duration.sum": "nsecond",
                 "launch__registers_per_thread": "register/thread",
                 "launch__shared_mem_per_block_static": "byte",
                 "launch__shared_mem_per_block_dynamic": "byte"}


def library_raw_csv(kernels: list[dict[str, str]], units: dict[str, str]) -> str:
    """ncu's raw page of a report holding these kernels (cells as ncu prints them)."""
    def row(cells: list[str]) -> str:
        return ",".join(f'"{c}"' for c in cells)

    metrics = [m for m in kernels[0] if "__" in m]
    head = ["ID", "Kernel Name", "Block Size", "Grid Size", *metrics]
    lines = [row(head), row(["", "", "", "", *(units.get(m, "") for m in metrics)])]
    for i, k in enumerate(kernels):
        lines.append(row([str(i), k["Kernel Name"], k["Block Size"], k["Grid Size"],
                          *(k[m] for m in metrics)]))
    return "\n".join(lines) + "\n"


FORMAT_SAMPLE = raw_csv(KERNEL_SAMPLE, {LD_C: "4,194,304", ST_C: "12", LD_W: "12,582,912",
                                        ST_W: "n/a"})

_SCRIPT = '''#!{python}
import json, sys
args = sys.argv[1:]
if {log!r}:
    with open({log!r}, "a") as fh:
        fh.write(json.dumps(args) + "\\n")
mode = {mode!r}
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion {version} (build 0)")
    sys.exit(0)
if "-i" in args:  # printing a report's source page
    with open(args[args.index("-i") + 1]) as fh:
        made_for = fh.read()
    library = made_for.startswith("stand-in report of cublas")
    if library and "raw" in args:
        if mode == "raw_garbled":
            print("this is not a raw page")
            sys.exit(0)
        sys.stdout.write(library_raw_csv({library_kernels!r}, {library_units!r}))
        sys.exit(0)
    if library:
        with open({library_page!r}, newline="") as fh:
            sys.stdout.write(fh.read())
        sys.exit(0)
    if mode == "slow_page":
        import time
        time.sleep(60)
    if mode == "garbled":
        print("this is not a source page")
        sys.exit(0)
    page = {source_page!r} if args[-1] == "sass" else {cuda_page!r}
    with open(page, newline="") as fh:
        sys.stdout.write(fh.read())
    sys.exit(0)
if mode == "fail":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA "
          "GPU Performance Counters on the target device 0.", file=sys.stderr)
    sys.exit(1)
if mode == "reject_extra" and "smsp__" in " ".join(args):
    print('==ERROR== Failed to find metric smsp__inst_executed_op_ldgsts.sum', file=sys.stderr)
    sys.exit(1)
if "-o" in args:  # a profiling run writing a report
    import time
    if mode == "timeout":
        time.sleep(60)
    print("==PROF== Connected to process 4242 (/usr/bin/python3.12)")
    module = next(a for a in args if a.startswith("gemmscope.kernels."))  # the launch's
    launch = args[args.index(module) + 1:]
    variant = launch[0].split("_")[0] if launch[0].startswith("cublas") else "vector"
    print(json.dumps({{"level": launch[0], "M": int(launch[1]), "variant": variant,
                      "verified": True}}))
    if mode == "no_report":
        print("==WARNING== No kernels were profiled.")
        sys.exit(0)
    with open(args[args.index("-o") + 1] + ".ncu-rep", "w") as fh:
        fh.write("stand-in report of " + launch[0])
    print("==PROF== Report: " + args[args.index("-o") + 1] + ".ncu-rep")
    sys.exit(0)
values = {values!r}
if values is None:
    sys.stdout.write({sample!r})
    sys.exit(0)
kernel = next(a.split(":", 1)[1] for a in args if a.startswith("regex:"))
asked = args[args.index("--metrics") + 1].split(",")
sys.stdout.write(raw_csv("void " + kernel + "<...>(int, int, int)",
                         {{m: values.get(m, "n/a") for m in asked}}))
'''


def write_fake_ncu(path: Path, mode: str = "ok", values: dict[str, str] | None = None,
                   log: Path | None = None, source_page: Path = SOURCE_PAGE,
                   cuda_page: Path = CUDA_PAGE, library_page: Path = LIBRARY_PAGE,
                   library_kernels: list[dict[str, str]] | None = None) -> Path:
    import inspect

    source = (inspect.getsource(raw_csv) + inspect.getsource(library_raw_csv)
              + f"HEAD = {HEAD!r}\n" +
              _SCRIPT.format(python=sys.executable, log=str(log) if log else "", mode=mode,
                             values=values, sample=FORMAT_SAMPLE, version=VERSION,
                             source_page=str(source_page),
                             cuda_page=str(cuda_page), library_page=str(library_page),
                             library_kernels=library_kernels or LIBRARY_KERNELS,
                             library_units=LIBRARY_UNITS).split("\n", 1)[1])
    path.write_text(f"#!{sys.executable}\n" + source, encoding="utf-8")
    path.chmod(0o755)
    return path


def logged_commands(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]
