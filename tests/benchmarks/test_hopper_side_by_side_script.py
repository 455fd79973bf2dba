"""benchmarks/hopper_side_by_side.py without a GPU: jobs run side by side per shape, a job that
kills its child process is reported and the jobs after it still run, and a candidate
with a wrong result at a check shape is left out of the timing."""

from __future__ import annotations

import io
import json
import time

import benchmark_script
import pytest

# a stand-in for the script's --child: answers each job, dies on the one labelled "crash"
FAKE_CHILD = '''
import json, sys
jobs = json.loads(sys.stdin.read())
for job in jobs:
    print("BEGIN " + json.dumps(job["key"]), flush=True)
    if job["key"]["label"] == "crash":
        sys.stderr.write("CUDA_ERROR_ILLEGAL_ADDRESS\\n")
        sys.exit(3)
    print("RESULT " + json.dumps({**job["key"], "tflops": 1.0, "verified": True}), flush=True)
'''


@pytest.fixture(scope="module")
def tune():
    return benchmark_script.load("hopper_side_by_side")


def test_jobs_put_every_entry_side_by_side_per_shape(tune):
    entries = [("ref", "cublas_bf16", {}), ("cand", "wgmma_tma", {"KPIPE": 0})]
    jobs = tune.make_jobs(entries, [(1, 2, 3), (4, 5, 6)], True)
    assert [(j["key"]["label"], j["shape"]) for j in jobs] == [
        ("ref", [1, 2, 3]), ("cand", [1, 2, 3]), ("ref", [4, 5, 6]), ("cand", [4, 5, 6])]
    assert jobs[1]["params"] == {"KPIPE": 0} and all(j["timed"] for j in jobs)


def test_a_crashing_job_is_reported_and_the_rest_still_run(tune, tmp_path, monkeypatch):
    fake = tmp_path / "fake_child.py"
    fake.write_text(FAKE_CHILD)
    monkeypatch.setattr(tune, "__file__", str(fake))
    entries = [("a", "x", {}), ("crash", "y", {}), ("b", "z", {})]
    jobs = tune.make_jobs(entries, [(8, 8, 8)], False)
    results = tune.run_jobs(jobs, 2, time.time() + 60, io.StringIO())
    by_label = {r["label"]: r for r in results}
    assert set(by_label) == {"a", "crash", "b"}
    assert by_label["a"]["tflops"] == 1.0 and by_label["b"]["tflops"] == 1.0
    assert "crashed" in by_label["crash"]["error"]
    assert "ILLEGAL_ADDRESS" in by_label["crash"]["error"]


def test_out_of_time_jobs_are_skipped_not_run(tune, tmp_path, monkeypatch):
    monkeypatch.setattr(tune, "__file__", str(tmp_path / "missing.py"))
    jobs = tune.make_jobs([("a", "x", {})], [(8, 8, 8)], True)
    results = tune.run_jobs(jobs, 2, time.time(), io.StringIO())
    assert results == [{**jobs[0]["key"], "skipped": "out of time"}]


def test_a_wrong_or_failing_candidate_is_left_out(tune):
    results = [
        {"label": "good", "M": 7, "N": 13, "K": 128, "tflops": 1.0, "verified": True},
        {"label": "wrong", "M": 7, "N": 13, "K": 128, "tflops": 1.0, "verified": False,
         "rel_err": 0.5, "deepgemm_diff": 0.1},
        {"label": "broken", "M": 7, "N": 13, "K": 128, "error": "CompileError: boom"},
        {"label": "picky", "M": 7, "N": 13, "K": 100, "refused": "needs K % 128"},
    ]
    bad = tune.failed_check(results)
    assert set(bad) == {"wrong", "broken"}
    assert "7x13x128" in bad["wrong"] and "boom" in bad["broken"]


def test_results_are_json_lines(tune, tmp_path, monkeypatch):
    fake = tmp_path / "fake_child.py"
    fake.write_text(FAKE_CHILD)
    monkeypatch.setattr(tune, "__file__", str(fake))
    log = io.StringIO()
    tune.run_jobs(tune.make_jobs([("a", "x", {})], [(8, 8, 8)], True), 2, time.time() + 60, log)
    rows = [json.loads(line) for line in log.getvalue().splitlines()]
    assert rows[0]["label"] == "a" and rows[0]["M"] == 8


HANGING_CHILD = '''
import json, sys, time
jobs = json.loads(sys.stdin.read())
for job in jobs:
    print("BEGIN " + json.dumps(job["key"]), flush=True)
    if job["key"]["label"] == "hang":
        time.sleep(60)
    print("RESULT " + json.dumps({**job["key"], "tflops": 2.0, "verified": True}), flush=True)
'''


def test_a_hanging_job_is_killed_and_the_rest_still_run(tune, tmp_path, monkeypatch):
    fake = tmp_path / "hanging_child.py"
    fake.write_text(HANGING_CHILD)
    monkeypatch.setattr(tune, "__file__", str(fake))
    jobs = tune.make_jobs([("hang", "x", {}), ("b", "y", {})], [(8, 8, 8)], True)
    t0 = time.time()
    results = tune.run_jobs(jobs, 2, time.time() + 50, io.StringIO(), job_timeout=2)
    assert time.time() - t0 < 30
    by_label = {r["label"]: r for r in results}
    assert "no output for 2 s" in by_label["hang"]["error"]
    assert by_label["b"]["tflops"] == 2.0
