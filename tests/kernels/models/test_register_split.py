"""The warp-specialised levels' register split (setmaxnreg) as their models state it is
the one their sources set: the pipeline picture says the producer's count, and it once
said 40 for fp8_deep, whose producer takes 56."""

from __future__ import annotations

import ast
import operator
import re

import places
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import model_for
from gemmscope.kernels.models.hopper import WarpSpecialized

CUDA = places.REPO / "kernels" / "cuda"
SPECIALISED = [lv.id for lv in registry.ladder()
               if isinstance(model_for(lv.id), WarpSpecialized)]


def constant(source: str, name: str, params: dict[str, int]) -> int:
    """A setmaxnreg argument: a literal, a level parameter, or a constexpr int of the
    source (a literal, or the conditional expression tf32_wgmma's CREG is)."""
    if name.isdigit():
        return int(name)
    if name in params:
        return params[name]
    m = re.search(rf"\b{name}\s*=\s*([^,;]+)[,;]", source)
    assert m is not None, f"{name} is not defined in the source"
    expr = " ".join(m.group(1).split())
    if expr.isdigit():
        return int(expr)
    cond = re.fullmatch(r"(.+?)\s*>\s*(\d+)\s*\?\s*(\d+)\s*:\s*(.+)", expr)
    assert cond is not None, f"{name} = {expr}: not a form this test reads"
    value = c_int(cond.group(1), params)
    return int(cond.group(3)) if value > int(cond.group(2)) else c_int(cond.group(4), params)


def c_int(expr: str, params: dict[str, int]) -> int:
    """An integer expression of literals, parameters, + - * / and parentheses, with C's
    integer division (of non-negative values: floor division)."""
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.floordiv}

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in params:
            return params[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](value(node.left), value(node.right))
        raise AssertionError(f"{expr}: not a form this test reads")

    return value(ast.parse(expr, mode="eval").body)


def source_split(level_id: str) -> tuple[int, int]:
    level = registry.get(level_id)
    source = (CUDA / level.source).read_text(encoding="utf-8")
    dec = re.findall(r"gs_setmaxnreg_dec<(\w+)>", source)
    inc = re.findall(r"gs_setmaxnreg_inc<(\w+)>", source)
    assert len(dec) == 1 and len(inc) == 1, (dec, inc)
    return constant(source, dec[0], level.params), constant(source, inc[0], level.params)


def test_every_warp_specialised_level_is_checked():
    assert {"wgmma_tma", "fp8_block_scaled", "fp8_deep", "tf32_wgmma"} <= set(SPECIALISED)


@pytest.mark.parametrize("level_id", SPECIALISED)
def test_the_model_states_the_register_split_its_source_sets(level_id):
    model = model_for(level_id)
    assert (model.producer_regs, model.consumer_regs) == source_split(level_id)


def test_fp8_deep_producer_keeps_56_registers():
    assert source_split("fp8_deep") == (56, 224)
