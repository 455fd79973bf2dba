"""Issue 31 item 2 without a GPU: every result and build event names the code that ran.
A build's key (kernels.toolchain.nvrtc.code_key) is a function of what decides its machine
code (source, options, instantiations, compiler); offline build events carry the sha256 of
the cubin they disassembled; the row model and the tables show the key."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol.records import Build, Result
from gemmscope.kernels.results.rows import Column, Row
from gemmscope.kernels.results.table import COLUMNS
from gemmscope.kernels.toolchain import build_event, nvrtc

NAMES = ["k<1>"]


def test_code_key_changes_with_each_thing_that_decides_the_code():
    base = nvrtc.code_key("src", ("-std=c++17",), NAMES, "NVRTC 13.0 through CuPy 14.2.0")
    assert base == nvrtc.code_key("src", ("-std=c++17",), NAMES,
                                  "NVRTC 13.0 through CuPy 14.2.0")
    others = {nvrtc.code_key("src ", ("-std=c++17",), NAMES, "NVRTC 13.0 through CuPy 14.2.0"),
              nvrtc.code_key("src", ("-std=c++20",), NAMES, "NVRTC 13.0 through CuPy 14.2.0"),
              nvrtc.code_key("src", ("-std=c++17",), ["k<2>"], "NVRTC 13.0 through CuPy 14.2.0"),
              nvrtc.code_key("src", ("-std=c++17",), NAMES, "NVRTC 13.5 through CuPy 14.2.0"),
              # parts are delimited: moving text from one part to the next is another key
              nvrtc.code_key("sr", ("c-std=c++17",), NAMES, "NVRTC 13.0 through CuPy 14.2.0")}
    assert base not in others and len(others) == 5
    assert len(base) == 16 and int(base, 16) >= 0


def test_code_key_leaves_out_include_folders_so_every_machine_gets_the_same_key():
    here = nvrtc.code_key("src", ("-std=c++17", "-I/usr/local/cuda/include"), NAMES, "NVRTC 13.0")
    there = nvrtc.code_key("src", ("-std=c++17", "-I/opt/venv/nvidia/cu13/include"), NAMES,
                           "NVRTC 13.0")
    assert here == there == nvrtc.code_key("src", ("-std=c++17",), NAMES, "NVRTC 13.0")


def test_expected_key_matches_the_bundled_recordings_keys_without_a_gpu():
    """The key record --update compares with, made offline from this checkout, is the one
    the H200 runner gave each result whose sources are still as its build event recorded
    them (levels that include <mma.h> aside: their recorded keys hashed an include
    folder, the rule before)."""
    import places

    from gemmscope.kernels.protocol import recording
    from gemmscope.kernels.protocol import records as rec

    session = recording.read_session(places.SESSIONS / "h200-ladder.jsonl.gz",
                                     only=(Result, Build))
    builds = {e.code_key: e for e in session.events if isinstance(e, Build) and e.code_key}
    header, matched, compared = None, set(), set()
    for e in session.events:
        if isinstance(e, rec.Session):
            header = e
        elif isinstance(e, Result) and e.code_key in builds and e.level in registry.BY_ID:
            level = registry.BY_ID[e.level]
            sources = nvrtc.source_files(level)
            if ("<mma.h>" in next(iter(sources.values()))
                    or builds[e.code_key].sources != sources):
                continue
            fitted = level.for_shape(e.M, e.N, e.K, header.device.sm_count)
            compared.add(e.level)
            if nvrtc.expected_key(fitted, header.device.arch, e.compiler) == e.code_key:
                matched.add(e.level)
    assert compared and matched == compared


@pytest.mark.skipif(build_event.nvrtc_missing() is not None,
                    reason=str(build_event.nvrtc_missing()))
def test_offline_build_event_carries_the_sha256_of_its_cubin():
    level = registry.get("cp_async")
    event = build_event.offline_event(level)
    built = nvrtc.compile_offline(level, arch=build_event.OFFLINE_ARCH)
    assert event["cubin_sha256"] == hashlib.sha256(built.cubin).hexdigest()
    record = msgspec.convert({**event, "t": 0.0}, Build)
    assert record.cubin_sha256 == event["cubin_sha256"]


def test_result_names_its_code_in_the_row_and_the_tables():
    r = msgspec.convert({"type": "result", "t": 1.0, "id": "r", "level": "cp_async",
                         "M": 4096, "N": 4096, "K": 4096, "dtype": "fp32", "median_ms": 2.9,
                         "tflops": 47.0, "verified": True, "rel_err": 1e-6, "repeats": 20,
                         "code_key": "0123456789abcdef",
                         "compiler": "NVRTC 13.0 through CuPy 14.2.0"}, Result)
    assert r.code_key == "0123456789abcdef" and r.compiler.startswith("NVRTC 13.0")
    assert Row.of(r).texts()[Column.CODE] == "01234567"
    assert Column.CODE in COLUMNS
    old = msgspec.convert({"type": "result", "t": 1.0, "id": "r", "level": "cp_async",
                           "M": 64, "N": 64, "K": 64, "dtype": "fp32", "median_ms": 0.1,
                           "tflops": 1.0, "verified": True, "rel_err": 1e-6, "repeats": 5},
                          Result)
    assert Row.of(old).texts()[Column.CODE] == "–"  # a file from before the field
