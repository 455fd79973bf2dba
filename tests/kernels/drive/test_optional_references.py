"""A reference whose library the runner cannot import (DeepGEMM's, issue 31 item 5) is not
listed: the runner leaves it out of its catalog, and a ladder planned from the registry
skips it with one line instead of sending a run that can only be refused."""

from __future__ import annotations

from gemmscope.kernels.drive.arch_skip import runnable_here
from gemmscope.kernels.engine import runner
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.plan import ladder_requests


def session(catalog):
    return of({"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {},
               "device": {"name": "NVIDIA H200", "cc": "9.0", "sm_count": 132},
               "catalog": catalog})


def every_id() -> list[str]:
    return [lv.id for lv in (*registry.references(), *registry.ladder())]


def test_a_runner_without_deep_gemm_leaves_its_reference_out_of_the_catalog(monkeypatch):
    monkeypatch.setattr(runner, "deep_gemm_missing", lambda: "the deep_gemm package is not "
                                                            "importable")
    left_out = runner.unavailable_here()
    assert left_out == ["deepgemm_fp8"]
    ids = [e["id"] for e in registry.catalog(unavailable=left_out)]
    assert "deepgemm_fp8" not in ids and "cublaslt_fp8_blocks" in ids
    assert len(ids) == len(registry.LEVELS) - 1


def test_a_runner_with_deep_gemm_lists_it_beside_cublaslt(monkeypatch):
    monkeypatch.setattr(runner, "deep_gemm_missing", lambda: None)
    assert runner.unavailable_here() == []
    ids = [e["id"] for e in registry.catalog(unavailable=runner.unavailable_here())]
    assert {"deepgemm_fp8", "cublaslt_fp8_blocks", "cublaslt_fp8"} <= set(ids)


def test_a_ladder_skips_the_reference_its_runner_did_not_list_and_keeps_the_rest():
    catalog = registry.catalog(unavailable=["deepgemm_fp8"])
    runs = ladder_requests(every_id(), Shape(4096, 4096, 4096))
    said: list[str] = []
    kept = runnable_here(session(catalog), runs, said.append)
    assert [r.level for r in kept] == [i for i in every_id() if i != "deepgemm_fp8"]
    assert len(said) == 1 and said[0].startswith("skipped: deepgemm_fp8")


def test_a_runner_that_lists_deepgemm_runs_it():
    runs = ladder_requests(every_id(), Shape(4096, 4096, 4096))
    said: list[str] = []
    kept = runnable_here(session(registry.catalog()), runs, said.append)
    assert "deepgemm_fp8" in {r.level for r in kept} and said == []


def test_the_deepgemm_reference_claims_hopper_only_and_keeps_cublaslt_as_the_fp8_reference():
    level = registry.get("deepgemm_fp8")
    assert level.archs == ("sm_90a",)
    assert registry.REFERENCE_FOR[registry.Precision.FP8] == "cublaslt_fp8"
    assert level.shape_refusal(4096, 2112, 7168) is None
    assert "multiple of 64" in (level.shape_refusal(4096, 2100, 7168) or "")
    assert "multiple of 128" in (level.shape_refusal(4096, 2112, 7000) or "")
