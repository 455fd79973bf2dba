"""Build events on the H200: the runner emits one per compiled variant; the driver's
occupancy equals the calculator's; the resources of the recompiled cubin (whose SASS the
event carries) equal those of the kernel CuPy loaded."""

from __future__ import annotations

import pytest

from gemmscope.kernels.drive.session import RunnerSession, default_runner_command
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.decoding import decode, encode
from gemmscope.kernels.protocol.plan import RunRequest
from gemmscope.kernels.toolchain import build_event

pytestmark = pytest.mark.gpu


# cp_async's runs after its first, vector one: each variant and parameter set builds once
CP_ASYNC_AGAIN = [RunRequest("cp_async", Shape(1000, 999, 1001), 2, warmup=1,  # scalar
                             compare=False),
                  RunRequest("cp_async", Shape(512, 512, 512), 2, warmup=1, compare=False),  # again
                  RunRequest("cp_async", Shape(1024, 1024, 1024), 2, warmup=1, compare=False,
                             params={"STAGES": 2})]  # other parameters: another build


def test_runner_emits_one_build_event_per_compiled_variant():
    runs = [RunRequest(lv.id, Shape(1024, 1024, 1024), 2, warmup=1, compare=False)
            for lv in registry.ladder()]
    check_builds(runs + CP_ASYNC_AGAIN, len(registry.ladder()) + 2)


@pytest.mark.smoke
def test_one_level_gets_one_build_event_per_variant_and_parameters():
    """The quick tier's build events: cp_async's vector, scalar and STAGES=2 builds."""
    first = RunRequest("cp_async", Shape(1024, 1024, 1024), 2, warmup=1, compare=False)
    check_builds([first, *CP_ASYNC_AGAIN], 3)


def check_builds(runs: list[RunRequest], expected: int) -> None:
    seen: list = []
    client = RunnerSession(seen.append, default_runner_command(0))
    try:
        client.wait_ready()
        client.run(runs)
    finally:
        client.close()
    results = [e for e in seen if e.type == "result"]
    builds = [e for e in seen if e.type == "build"]
    assert all(r.verified for r in results)
    keys = [(b.level, b.variant, tuple(b.params.items())) for b in builds]
    assert len(keys) == len(set(keys)) == expected
    assert {(b.level, b.variant) for b in builds} == {
        (r.level, r.variant) for r in results}
    for b in builds:
        where = f"{b.level} {b.variant}"
        assert decode(encode(b)) == b  # as a recording holds it
        # the build event follows the first result of its variant and parameters
        first = next(r for r in results if (r.level, r.variant) == (
            b.level, b.variant) and (r.params or registry.get(r.level).params)
            == b.params)
        assert seen.index(first) < seen.index(b)
        assert (first.regs, first.smem_bytes) == (
            b.regs, b.smem_static_bytes + b.smem_dynamic_bytes), where
        occ = b.occupancy
        assert occ["source"] == "driver", (where, occ.get("driver_reason"))
        assert occ["driver_blocks_per_sm"] == occ["calculator_blocks_per_sm"] >= 1, where
        assert b.sass and b.main_loop, (where, b.sass_reason)
        assert b.sass_from["regs"] == b.regs, where
        # in a child, as the runner compiles (compile_cubin says why): after this test had
        # compiled in-process, `import torch` (the FP8 references) failed later in the
        # same pytest run (issue 17, round 6)
        offline = build_event.offline_event(registry.get(b.level).with_params(b.params),
                                            b.variant, arch=b.arch, isolated=True)
        assert (offline["regs"], offline["smem_static_bytes"], offline["local_bytes"]) == (
            b.regs, b.smem_static_bytes, b.local_bytes), where
