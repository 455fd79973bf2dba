"""compile_level's cache in the process (kernels/toolchain/nvrtc.py): a build is reused only
for the same code, which a level's id and parameters alone do not name."""

from __future__ import annotations

import dataclasses
import shutil
import types

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import nvrtc


class FakeModule:
    def __init__(self, code: str, options: tuple[str, ...], name_expressions: list[str]):
        self.code = code

    def get_function(self, name: str) -> tuple[str, str]:
        return (name, self.code)


@pytest.fixture
def fake_cupy(monkeypatch):
    """A CuPy whose RawModule keeps the code it was given (no GPU, no compiler)."""
    built: list[str] = []

    def raw_module(code, options, name_expressions):
        built.append(code)
        return FakeModule(code, options, name_expressions)

    cp = types.SimpleNamespace(
        RawModule=raw_module, __version__="fake",
        cuda=types.SimpleNamespace(compiler=types.SimpleNamespace(CompileException=RuntimeError),
                                   nvrtc=types.SimpleNamespace(getVersion=lambda: (13, 0))))
    monkeypatch.setattr("gemmscope.kernels.device.gpu.require_cupy", lambda: cp)
    monkeypatch.setenv("CUPY_CACHE_IN_MEMORY", "1")
    monkeypatch.setattr(nvrtc, "_cache", {})
    return built


def test_a_variant_from_another_folder_is_built_from_its_own_source(fake_cupy, tmp_path):
    level = registry.get("fp8_deep")
    shutil.copy(registry.source_file(level), tmp_path / level.source)
    with open(tmp_path / level.source, "a", encoding="utf-8") as f:
        f.write("\n// an attempt: other code under the same id and parameters\n")
    variant = dataclasses.replace(level, source_dir=str(tmp_path))

    own = nvrtc.compile_level(level)
    other = nvrtc.compile_level(variant)
    assert len(fake_cupy) == 2
    assert "an attempt" in fake_cupy[1] and "an attempt" not in fake_cupy[0]
    assert other.code_key != own.code_key
    # each is reused for itself, not for the other
    assert nvrtc.compile_level(level) is own and nvrtc.compile_level(variant) is other
    assert len(fake_cupy) == 2


def test_other_parameters_or_the_trace_build_are_other_builds(fake_cupy):
    level = registry.get("fp8_deep")
    plain = nvrtc.compile_level(level)
    assert nvrtc.compile_level(level, {**level.params, "CL": 2}) is not plain
    assert nvrtc.compile_level(level, trace=True) is not plain
    assert nvrtc.compile_level(level) is plain
    assert len(fake_cupy) == 3
