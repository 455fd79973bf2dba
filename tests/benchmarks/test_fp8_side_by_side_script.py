"""benchmarks/fp8_side_by_side.py's parts that need no GPU: where it finds DeepGEMM, how
it names variants, which candidates it checks first, and the table it prints last."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import benchmark_script
import places
import pytest


@pytest.fixture(scope="module")
def sbs():
    # through the shared loader, which puts benchmarks/ on the path for the script's own
    # import of _smoke (run alone, this file failed at that import before it did so)
    return benchmark_script.load("fp8_side_by_side")


def test_deepgemm_is_found_in_a_folder_or_a_tarball_and_refused_elsewhere(sbs, tmp_path):
    (tmp_path / "src" / "deep_gemm").mkdir(parents=True)
    assert sbs.deepgemm_folder(str(tmp_path / "src")) == tmp_path / "src"
    tgz = tmp_path / "dg.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        data = b"# package\n"
        info = tarfile.TarInfo("deep_gemm/__init__.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert (sbs.deepgemm_folder(str(tgz)) / "deep_gemm" / "__init__.py").is_file()
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="no deep_gemm"):
        sbs.deepgemm_folder(str(tmp_path / "empty"))


def test_a_tarball_extracted_is_removed_when_the_process_exits(tmp_path):
    tgz = tmp_path / "dg.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        info = tarfile.TarInfo("deep_gemm/__init__.py")
        tar.addfile(info, io.BytesIO(b""))
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from _anchors import "
              "deepgemm_folder; print(deepgemm_folder(sys.argv[2]))")
    proc = subprocess.run([sys.executable, "-c", script, str(places.BENCHMARKS), str(tgz)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    extracted = Path(proc.stdout.strip())
    assert extracted.name.startswith("deepgemm-") and not extracted.exists()


def test_variants_keep_their_label_and_take_the_level_from_its_first_word(sbs):
    out = sbs.candidates(["fp8_deep"], ['fp8_deep CL=2={"CL": 2}'])
    assert out == [("fp8_deep", "fp8_deep", {}), ("fp8_deep CL=2", "fp8_deep", {"CL": 2})]


def test_new_levels_are_checked_first(sbs):
    args = type("A", (), {"levels": ["fp8_block_scaled", "fp8_deep"],
                          "variant": ['fp8_deep CL=2={"CL": 2}']})()
    assert sbs.checked(args) == ["fp8_deep", "fp8_deep CL=2"]


def test_table_states_bf16_marks_unverified_runs_and_compares_the_best_level(sbs):
    def row(name, tflops, ok=True):
        return {"shape": [4096, 4096, 4096], "candidate": name, "tflops": tflops,
                "sm_clock_mhz": 1980.0, "verified": ok, "verified_after": True}

    text = sbs.table([row("DeepGEMM", 1300.0), row("fp8_deep", 1170.0),
                      row("fp8_block_scaled", 1400.0, ok=False), row("cublaslt_fp8", 1320.0)])
    assert "BF16" in text.splitlines()[0]
    line = text.splitlines()[-1]
    assert "1400* (1980)" in line  # shown, marked, not counted as the best
    assert line.endswith("| 0.900 |")


def test_a_variant_source_must_name_a_variant_and_a_folder(sbs, tmp_path):
    labels = ["fp8_deep ring", "fp8_deep ring CL=2"]
    assert sbs.parse_sources([f"fp8_deep ring={tmp_path}", f"fp8_deep ring CL=2={tmp_path}"],
                             labels) == {"fp8_deep ring": tmp_path.resolve(),
                                         "fp8_deep ring CL=2": tmp_path.resolve()}
    with pytest.raises(SystemExit, match="no --variant is labelled 'fp8_deep rung'"):
        sbs.parse_sources([f"fp8_deep rung={tmp_path}"], labels)
    with pytest.raises(SystemExit, match="is not a folder"):
        sbs.parse_sources([f"fp8_deep ring={tmp_path / 'absent'}"], labels)
    with pytest.raises(SystemExit, match="give LABEL=DIR"):
        sbs.parse_sources(["fp8_deep ring"], labels)


def test_a_variant_with_its_own_source_is_built_from_it_and_checked_at_every_odd_shape(
        sbs, tmp_path):
    from gemmscope.kernels.ladder import registry

    level = registry.get("fp8_deep")
    sources = {"fp8_deep ring": tmp_path}
    with pytest.raises(SystemExit, match="does not exist"):
        sbs.built(level, "fp8_deep ring", sources)
    (tmp_path / level.source).write_text("// an attempt\n")
    ring = sbs.built(level, "fp8_deep ring", sources)
    assert ring.source_dir == str(tmp_path) and ring.params == level.params
    assert sbs.built(level, "fp8_deep", sources) is level
    assert sbs.check_shapes("fp8_deep ring", {}, sources) == sbs.CHECK_SHAPES
    assert sbs.check_shapes("fp8_deep CL=2", {"CL": 2}, sources) == sbs.VARIANT_CHECK_SHAPES


@pytest.mark.parametrize("variant", ['fp8_deep GW=8', 'fp8_deep GW=8={"GW": 8.5}',
                                     'fp8_deep GW=8={"GW": "8"}', '={"GW": 8}',
                                     'fp8_deep GW=8={"GW": 8'])
def test_a_variant_not_in_label_json_form_is_refused_in_one_line(sbs, variant):
    with pytest.raises(SystemExit, match="give 'LEVEL WORDS="):
        sbs.candidates([], [variant])


@pytest.mark.parametrize(("levels", "variant", "said"), [
    ([], 'GW=8={"GW": 8}', "unknown level 'GW=8'"),
    (["fp8_dep"], None, "unknown level 'fp8_dep'"),
    ([], 'fp8_deep GX={"GX": 8}', "fp8_deep has no parameter"),
])
def test_a_label_naming_no_level_or_a_missing_parameter_is_refused_before_any_child(
        sbs, levels, variant, said):
    args = type("A", (), {"levels": levels, "variant": [variant] if variant else []})()
    with pytest.raises(SystemExit, match=said):
        sbs.refuse_unmade(args)
    ok = type("A", (), {"levels": ["fp8_deep"], "variant": ['fp8_deep GW=8={"GW": 8}']})()
    assert sbs.refuse_unmade(ok) is None
