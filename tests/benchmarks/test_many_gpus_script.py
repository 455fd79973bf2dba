"""What benchmarks/many_gpus.py found stays fixed: naming every GPU of a recording walks
the session's list of GPUs once, not once per GPU (its --smoke mode runs with the others',
tests/benchmarks/test_every_benchmark_has_a_smoke_mode.py)."""

from __future__ import annotations

import benchmark_script

from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.protocol.decoding import decode
from gemmscope.kernels.protocol.events import dumps


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
