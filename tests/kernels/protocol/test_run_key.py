"""A compared run's reference echoes the command's id (docs/protocol.md, ``repeat``):
the events of the two runs are told apart by (id, level), ``Run.run_key``."""

from __future__ import annotations

import json

from fake_benches import SustainedBench, serve

from gemmscope.kernels.protocol.decoding import decode


def test_a_compared_runs_repeats_are_told_apart_from_its_references():
    wire = serve(SustainedBench(), {"cmd": "run", "level": "cp_async", "M": 256, "N": 256,
                                    "K": 256, "repeats": 3, "id": 7})
    events = [decode(json.dumps(e)) for e in wire]
    results = [e for e in events if e.type == "result"]
    assert [r.level for r in results] == ["cublas_fp32", "cp_async"]
    assert {r.id for r in results} == {7}  # one id for both runs: the id alone is not a run
    repeats = [e for e in events if e.type == "repeat"]
    assert {e.level for e in repeats} == {"cublas_fp32", "cp_async"}
    for r in results:
        own = [e for e in repeats if e.run_key == r.run_key]
        assert own and all(e.level == r.level for e in own)
        assert len(own) == len([e for e in repeats if e.id == r.id]) // 2
    starts = {e.run_key for e in events if e.type == "run_start"}
    assert starts == {r.run_key for r in results}


def test_the_run_key_takes_any_json_id():
    a = decode('{"type": "repeat", "t": 1.0, "id": [1, {"x": 2}], "level": "naive", '
               '"M": 1, "N": 1, "K": 1, "i": 0, "ms": 1.0, "tflops": 1.0}')
    b = decode('{"type": "result", "t": 2.0, "id": [1, {"x": 2}], "level": "naive", '
               '"M": 1, "N": 1, "K": 1, "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0, '
               '"verified": true, "rel_err": 0.0, "repeats": 1}')
    assert a.run_key == b.run_key and hash(a.run_key)
    assert {a.run_key: 1}[b.run_key] == 1
