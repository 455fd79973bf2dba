"""docs/adding-a-level.md, followed: its three blocks (the kernel, the registry entry, the
access model) are read from the page, the level is built from them in a temporary folder
and added to the registry, and every CPU check a ladder level meets runs on it
(tests/support/level_checks.py). The page cannot go stale without this failing."""

from __future__ import annotations

import dataclasses
import re

import level_checks
import places
import pytest

from gemmscope.kernels.ladder import registry

DOC = places.REPO / "docs" / "adding-a-level.md"
BLOCK = re.compile(r"^```(\w+) ([^\n]+)\n(.*?)^```$", re.M | re.S)


def _blocks() -> dict[str, str]:
    """The page's fenced blocks by their titles (```cuda example_tiled.cu ...)."""
    return {title.strip(): body for _lang, title, body in BLOCK.findall(DOC.read_text())}


@pytest.fixture
def new_level(tmp_path, monkeypatch) -> registry.Level:
    """The page's level, as a newcomer would add it: the .cu saved, the entry in the
    registry (a copy: the real ladder is left as it is), the model class defined."""
    blocks = _blocks()
    assert {"example_tiled.cu", "registry entry", "model"} <= set(blocks), sorted(blocks)
    (tmp_path / "example_tiled.cu").write_text(blocks["example_tiled.cu"])
    # the entry is evaluated where LEVELS is written, with registry.py's names (the page is
    # this repository's own, not outside input)
    entry = eval(blocks["registry entry"], dict(vars(registry)))
    level = dataclasses.replace(entry, source_dir=str(tmp_path))
    monkeypatch.setattr(registry, "LEVELS", (*registry.LEVELS, level))
    monkeypatch.setattr(registry, "BY_ID", {**registry.BY_ID, level.id: level})
    exec(blocks["model"], {"__name__": "example_model"})
    return level


def test_the_page_has_a_kernel_an_entry_and_a_model_of_one_level():
    blocks = _blocks()
    assert "sgemm_example_tiled" in blocks["example_tiled.cu"]
    assert 'id="example_tiled"' in blocks["registry entry"]
    assert 'level_id = "example_tiled"' in blocks["model"]


def test_the_pages_level_is_in_the_ladder_and_has_its_model(new_level):
    from gemmscope.kernels.models import model_for

    assert registry.get("example_tiled") is new_level
    assert new_level in registry.ladder()
    model = model_for("example_tiled")
    assert type(model).level_id == "example_tiled" and model.params == {"TILE": 16}


@pytest.mark.parametrize("check", level_checks.ENTRY_CHECKS, ids=lambda c: c.__name__)
def test_the_pages_level_meets_the_registry_rules(new_level, check):
    check(new_level)


@pytest.mark.parametrize("check", level_checks.MODEL_CHECKS, ids=lambda c: c.__name__)
def test_the_pages_model_meets_the_model_rules(new_level, check):
    check(new_level.id)


def test_the_pages_level_compiles_for_sm90a_without_a_gpu(new_level):
    pytest.importorskip("cuda.bindings.nvrtc", reason="the nvrtc extra is not installed")
    level_checks.compiles_for_sm90a(new_level)


def test_the_pages_compiled_k_loop_is_what_its_model_says(new_level, tmp_path):
    from gemmscope.kernels.toolchain.sass_check import tools_missing

    if tools_missing() is not None:
        pytest.skip(str(tools_missing()))
    level_checks.compiled_k_loop_matches_the_model(new_level.id, tmp_path)
