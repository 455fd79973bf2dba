"""One name for block-row grouping (issue 29 item 5): the SIMT and mma.sync levels' SWZ is
GM, as in the persistent levels, and what was recorded or written under the old name
still reads: a result's, build's, counters' and catalog's params, a run's params, and the
store's match of a result to its build."""

from __future__ import annotations

import json

import pytest

from gemmscope.app.core.levels import catalog_from_header
from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.level import RENAMED_PARAMS, current_params
from gemmscope.kernels.protocol.decoding import decode
from gemmscope.kernels.results.rows import params_ran

# cp_async's parameters as the bundled recordings (made before the rename) hold them
OLD = {"BM": 128, "BN": 256, "BK": 16, "WM": 64, "WN": 64, "WMITER": 4, "WNITER": 2,
       "TM": 4, "TN": 4, "STAGES": 3, "MINB": 1, "SWZ": 1}
HEADER = {"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {},
          "catalog": [{"id": "cp_async", "title": "cp.async", "precision": "fp32",
                       "kind": "level", "order": 9, "params": OLD}]}
RUN = {"level": "cp_async", "M": 4096, "N": 4096, "K": 4096}


def line(obj: dict) -> str:
    return json.dumps(obj)


def result(t: float, params: dict[str, int] | None) -> dict:
    ev = {"type": "result", "t": t, **RUN, "dtype": "fp32", "precision": "fp32",
          "median_ms": 3.0, "tflops": 45.8, "verified": True, "rel_err": 1e-7, "repeats": 20,
          "variant": "vector"}
    return ev if params is None else {**ev, "params": params}


def build(t: float, params: dict[str, int]) -> dict:
    return {"type": "build", "t": t, "level": "cp_async", "variant": "vector",
            "params": params, "regs": 255, "sass": f"/*0000*/ EXIT ; // {t}"}


def test_no_level_uses_an_old_parameter_name():
    for level in registry.ladder():
        assert not set(level.params) & set(RENAMED_PARAMS), level.id
    grouped = [lv.id for lv in registry.ladder() if "GM" in lv.params]
    assert {"warp_tiling", "cp_async", "cp_async_interior", "mma_sync", "mma_persistent",
            "wgmma_tma", "fp8_block_scaled"} <= set(grouped)


def test_the_old_name_reads_as_the_new_one_in_its_place():
    new = current_params(OLD)
    assert list(new) == [*list(OLD)[:-1], "GM"] and new["GM"] == 1
    assert current_params({"SWZ": 8, "BK": 16}) == {"GM": 8, "BK": 16}
    # SWZ = 0 walked the grid row by row, as GM = 1 does (GM counts rows)
    assert current_params({"SWZ": 0}) == {"GM": 1}
    # both names: the new one's value
    assert current_params({"SWZ": 4, "GM": 2}) == {"GM": 2}
    unchanged = {"BK": 8}
    assert current_params(unchanged) is unchanged


def test_a_run_given_the_old_name_runs_the_new_parameter():
    level = registry.get("mma_sync").with_params({"SWZ": 4})
    assert level.params["GM"] == 4 and "SWZ" not in level.params
    assert level.launch_geometry().group_rows == 4
    assert level.name_expression(True).endswith(", 4, 4, true>")  # STAGES, GM, VEC
    assert registry.get("cp_async").with_params({"SWZ": 0}).params["GM"] == 1
    with pytest.raises(ValueError, match="GM=0 is out of range"):
        registry.get("cp_async").with_params({"GM": 0})


def test_events_recorded_with_the_old_name_decode_with_the_new_one():
    res = decode(line(result(1.0, {**OLD, "SWZ": 8})))
    assert res.params is not None and res.params["GM"] == 8 and "SWZ" not in res.params
    assert params_ran(res) == "GM=8"
    b = decode(line(build(2.0, OLD)))
    assert b.params == current_params(OLD)
    counters = decode(line({"type": "counters", "t": 3.0, **RUN, "tool": "ncu",
                            "metrics": {"x": 1.0}, "params": OLD}))
    assert counters.params == current_params(OLD)
    header = decode(line(HEADER))
    assert header.catalog[0].params == current_params(OLD)
    assert catalog_from_header(header)[0].params_text() == ", ".join(
        f"{k}={v}" for k, v in current_params(OLD).items())


def test_a_recording_with_the_old_name_finds_the_build_its_results_ran():
    """A result with the level's own parameters (none given) and one run with SWZ=8 each
    find the build of their parameters, recorded under the old name."""
    store = SessionStore()
    for ev in (HEADER, build(1.0, OLD), build(2.0, {**OLD, "SWZ": 8})):
        store.handle(decode(line(ev)))
    store.handle(decode(line(result(3.0, None))))
    own = store.build_for("cp_async")
    assert own is not None and own.sass is not None and own.sass.endswith("1.0")
    store.handle(decode(line(result(4.0, {**OLD, "SWZ": 8}))))
    grouped = store.build_for("cp_async")
    assert grouped is not None and grouped.sass is not None and grouped.sass.endswith("2.0")
