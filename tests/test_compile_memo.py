"""The test run's kept NVRTC answers (tests/support/compile_memo.py): the same input is
answered from the folder with the same build, another input or another include folder
compiles, a failure is never kept, and a damaged entry compiles again."""

from __future__ import annotations

import compile_memo
import pytest

from gemmscope.kernels.toolchain.nvrtc import CompileError, OfflineBuild


class Counting:
    """A stand-in for compile_source that counts its calls and fails on "bad" sources."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, program, source, names, given, arch):
        self.calls.append(source)
        if "bad" in source:
            raise CompileError(f"{program}: NVRTC ({arch}): error")
        return OfflineBuild(program, arch, 3, {n: f"_Z{n}" for n in names}, "log", given,
                            b"\x7fEL" + source.encode())


@pytest.fixture
def kept(tmp_path):
    fake, includes = Counting(), ["/usr/local/cuda/include"]
    run = compile_memo.keeping(fake, lambda: list(includes), OfflineBuild, tmp_path)
    return fake, includes, run


def test_the_same_input_is_answered_from_the_folder_with_the_same_build(kept):
    fake, _, run = kept
    first = run("lvl", "src", ["k<1>"], ("-arch=sm_90a",), "sm_90a")
    again = run("lvl", "src", ["k<1>"], ("-arch=sm_90a",), "sm_90a")
    assert fake.calls == ["src"]
    assert again == first and again.cubin == b"\x7fELsrc" and again.lowered == {"k<1>": "_Zk<1>"}


def test_another_source_option_arch_or_include_folder_compiles_again(kept):
    fake, includes, run = kept
    run("lvl", "src", [], ("-arch=sm_90a",), "sm_90a")
    run("lvl", "src2", [], ("-arch=sm_90a",), "sm_90a")
    run("lvl", "src", [], ("-arch=sm_90",), "sm_90")
    run("lvl", "src", [], ("-arch=sm_90a", "-lineinfo"), "sm_90a")
    includes.append("/opt/cuda/include")
    run("lvl", "src", [], ("-arch=sm_90a",), "sm_90a")
    assert len(fake.calls) == 5


def test_a_failed_compile_is_never_kept(kept, tmp_path):
    fake, _, run = kept
    for _ in range(2):
        with pytest.raises(CompileError):
            run("lvl", "bad", [], (), "sm_90a")
    assert fake.calls == ["bad", "bad"] and not list(tmp_path.iterdir())


def test_a_damaged_entry_compiles_again(kept, tmp_path):
    fake, _, run = kept
    run("lvl", "src", [], (), "sm_90a")
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(entry.read_bytes()[:5])
    assert run("lvl", "src", [], (), "sm_90a").cubin == b"\x7fELsrc"
    assert len(fake.calls) == 2
