"""app/core/ must not import Qt (the import-linter contract in pyproject says the same)."""

from __future__ import annotations

import subprocess
import sys

CORE = ["levels", "store", "replay", "runs", "gpu_probe", "export"]


def test_core_modules_import_without_qt():
    code = ("import sys\n"
            + "".join(f"import gemmscope.app.core.{m}\n" for m in CORE)
            + "bad = [m for m in sys.modules if m.split('.')[0] in "
              "('PySide6', 'pyqtgraph', 'superqt', 'cupy')]\n"
            + "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == ""
