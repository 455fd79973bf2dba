"""benchmarks/many_gpus.py still measures what it says (its --smoke mode: a row per GPU
count, a number in each; no speed asserted), and what it found stays fixed: naming every
GPU of a recording walks the session's list of GPUs once, not once per GPU."""

from __future__ import annotations

import subprocess
import sys

import benchmark_script
import places

from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.protocol.decoding import decode
from gemmscope.kernels.protocol.events import dumps

SCRIPT = places.BENCHMARKS / "many_gpus.py"


def test_the_smoke_mode_prints_a_row_per_gpu_count(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--smoke"], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    head, *rows = [line.split() for line in proc.stdout.splitlines() if line.strip()]
    assert head[:2] == ["GPUs", "events"] and "window" in head
    assert [int(r[0]) for r in rows] == [2, 8]
    assert all(float(cell) >= 0 for r in rows for cell in r[2:])
    assert int(rows[1][1]) == 4 * int(rows[0][1]) - 3  # the same events per GPU


class _Walks(list):
    """A list that counts the walks over it."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        type(self).walks += 1
        return super().__iter__()


def test_naming_every_gpu_walks_the_list_of_gpus_once():
    many = benchmark_script.load("many_gpus")
    for gpus in (10, 300, 1000):
        header = next(many.events(gpus))
        store = SessionStore()
        store.handle(decode(dumps(header), 1))
        store.devices = _Walks(store.devices)
        _Walks.walks = 0
        names = [store.device_text(d) for d in store.device_ids()]
        assert len(set(names)) == gpus
        assert _Walks.walks <= 2, (gpus, _Walks.walks)  # device_ids' walk, the index's
