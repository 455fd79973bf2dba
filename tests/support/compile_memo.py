"""NVRTC's answers kept for one test run, shared by its workers (tests/conftest.py).

The suite compiles the same level for the same architecture in many tests: a level's
build events, its SASS checks, its access widths, its architectures, its trace build's
plain half (about 100 of the 310 s that compiles took on a two-core CI machine were
repeats). NVRTC gives one cubin for one input (tests/benchmarks/test_build_determinism.py
checks it, in processes of their own that this never reaches), so a run keeps each
successful compile under the hash of everything it was given (program name, source, name
expressions, options, architecture and the include folders found) in one folder of the
run, written whole or not at all; a failed compile is never kept and runs again. Only
:func:`gemmscope.kernels.toolchain.nvrtc.compile_source` in the test processes goes
through it: the app, the runner and the compile children are untouched."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

ENV = "GEMMSCOPE_TEST_COMPILES"  # the run's folder, made by the first process, inherited


def folder() -> Path:
    """The run's folder: the one the environment names, else a new one it then names (so
    pytest-xdist's workers, started after, share the controller's)."""
    if not os.environ.get(ENV):
        os.environ[ENV] = tempfile.mkdtemp(prefix="gemmscope-test-compiles-")
    return Path(os.environ[ENV])


def keeping(compile_source: Callable[..., Any], include_dirs: Callable[[], list[str]],
            answer: type, where: Path) -> Callable[..., Any]:
    """``compile_source`` answering from ``where`` what it answered before for the same
    input; ``answer``: the dataclass it returns (OfflineBuild), kept as MessagePack."""

    def compile_kept(program: str, source: str, names: list[str], given: tuple[str, ...],
                     arch: str) -> Any:
        key = hashlib.sha256(msgspec.json.encode(
            [program, source, list(names), list(given), arch, include_dirs()])).hexdigest()
        path = where / f"{key}.msgpack"
        try:
            return msgspec.msgpack.decode(path.read_bytes(), type=answer)
        except (OSError, msgspec.DecodeError):
            built = compile_source(program, source, names, given, arch)
            tmp = where / f".{key}.{os.getpid()}"
            tmp.write_bytes(msgspec.msgpack.encode(built))
            os.replace(tmp, path)  # whole or not at all: another worker may read it now
            return built

    return compile_kept
