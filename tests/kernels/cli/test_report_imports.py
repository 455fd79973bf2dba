"""`gemmscope report` starts in a fraction of a second (issue 29 item 9): it imports the
recording reader, the row model, the table and the ladder's data, and nothing of the GUI,
the GPU side, numpy, or the hashing and temporary-file machinery only writers need."""

from __future__ import annotations

import subprocess
import sys

import places

CODE = """
import io, sys
from gemmscope.app.main import main
sys.stdout = io.StringIO()
code = main(["report", sys.argv[1]])
sys.stdout = sys.__stdout__
print(code)
for name in sorted(sys.modules):
    print(name)
"""

# (kernels.faces: the packages' faces, each loading a module at first use of a name of it)
ALLOWED = ("gemmscope.kernels.cli", "gemmscope.kernels.protocol", "gemmscope.kernels.results",
           "gemmscope.kernels.ladder", "gemmscope.kernels.files", "gemmscope.kernels.faces")
NEVER = ("numpy", "PySide6", "pyqtgraph", "cupy", "pynvml", "dask", "hashlib", "secrets",
         "tomllib")


def test_a_report_imports_only_what_it_reads_with():
    out = subprocess.run([sys.executable, "-c", CODE,
                          str(places.SESSIONS / "h200-ladder.jsonl.gz")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    code, *modules = out.stdout.split()
    assert code == "0"
    ours = [m for m in modules if m.startswith("gemmscope.")]
    assert "gemmscope.kernels.protocol.recording" in ours
    assert [m for m in ours if m not in ("gemmscope.app", "gemmscope.app.main",
                                         "gemmscope.kernels")
            and not m.startswith(ALLOWED)] == []
    assert [m for m in modules if m.split(".")[0] in NEVER] == []
