"""The kernel spec's expressions: read by walking an AST whitelist, never executed."""

from __future__ import annotations

import ast
import builtins
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gemmscope.kernels.ladder.spec_expression import (
    MAX_LENGTH,
    ExpressionError,
    parse_expression,
)

NAMES = ("M", "N", "K", "BM", "BN")
values = st.integers(min_value=-10**6, max_value=10**6)
positive = st.integers(min_value=1, max_value=10**6)


@st.composite
def expressions(draw, depth=0):
    """A random allowed expression and the value Python's own arithmetic gives it."""
    env = draw(st.fixed_dictionaries({n: values for n in NAMES}))
    text, value = draw(_terms(env, depth))
    return text, env, value


def _terms(env, depth):
    leaf = st.one_of(values.map(lambda v: (f"({v})", v)),
                     st.sampled_from(NAMES).map(lambda n: (n, env[n])))
    if depth > 3:
        return leaf

    @st.composite
    def node(draw):
        kind = draw(st.sampled_from(["leaf", "+", "-", "*", "//", "%", "min", "max",
                                     "ceil_div", "neg"]))
        if kind == "leaf":
            return draw(leaf)
        a_text, a = draw(_terms(env, depth + 1))
        if kind == "neg":
            return f"-({a_text})", -a
        b_text, b = draw(_terms(env, depth + 1))
        if kind in ("//", "%", "ceil_div") and b == 0:
            b_text, b = "1", 1
        if kind == "min":
            return f"min({a_text}, {b_text})", min(a, b)
        if kind == "max":
            return f"max({a_text}, {b_text})", max(a, b)
        if kind == "ceil_div":
            return f"ceil_div({a_text}, {b_text})", -(-a // b)
        ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
               "//": lambda: a // b, "%": lambda: a % b}
        return f"({a_text} {kind} {b_text})", ops[kind]()

    return node()


@given(expressions())
def test_expression_evaluates_as_integer_arithmetic_does(case):
    text, env, value = case
    if len(text) > MAX_LENGTH:
        with pytest.raises(ExpressionError, match="longer than"):
            parse_expression(text, NAMES)
        return
    try:
        expr = parse_expression(text, NAMES)
    except ExpressionError as exc:  # a tree over the node bound: said, not evaluated
        assert "parts" in str(exc)
        return
    if abs(value) > 1 << 62:
        with pytest.raises(ExpressionError, match="bound"):
            expr(env)
    else:
        assert expr(env) == value


@given(positive, positive)
def test_ceil_div_is_the_smallest_count_of_blocks_that_cover(n, b):
    blocks = parse_expression("ceil_div(N, BN)", NAMES)({"N": n, "BN": b})
    assert blocks * b >= n > (blocks - 1) * b
    assert blocks == math.ceil(n / b)


@given(st.text(max_size=60))
def test_any_text_is_either_an_expression_or_one_error(text):
    try:
        expr = parse_expression(text, NAMES)
    except ExpressionError as exc:
        assert "\n" not in str(exc).strip() or "not an expression" in str(exc)
        return
    tree = ast.parse(expr.text, mode="eval")
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Constant, ast.Call,
               ast.Load, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.USub,
               ast.UAdd)
    assert all(isinstance(n, allowed) for n in ast.walk(tree))
    assert expr.names <= set(NAMES)


@pytest.mark.parametrize("text, says", [
    ("__import__('os').system('true')", "only the calls"),
    ("BM.bit_length()", "only the calls"),
    ("(lambda: 1)()", "only the calls"),
    ("[1][0]", "Subscript"),
    ("BM ** 2", "operator **"),
    ("BM / 2", "use //"),
    ("BM if N else BN", "IfExp"),
    ("BM < BN", "Compare"),
    ("1.5 * BM", "whole-number constants"),
    ("'a' * 3", "whole-number constants"),
    ("TILE * 2", "unknown name 'TILE'"),
    ("min", "is a function"),
    ("max(BM)", "at least 2"),
    ("ceil_div(N, BN, 3)", "takes 2 arguments"),
    ("min(*[1, 2])", "no *arguments"),
    ("max(BM, key=BN)", "no keywords"),
    ("BM and BN", "BoolOp"),
    ("~BM", "unary minus"),
    ("", "empty"),
    ("BM +", "not an expression"),
    ("x" * (MAX_LENGTH + 1), "longer than"),
    ("+".join(["1"] * 60), "parts"),
])
def test_anything_outside_the_whitelist_is_refused_with_its_name(text, says):
    with pytest.raises(ExpressionError, match=says.replace("*", r"\*").replace("(", r"\(")):
        parse_expression(text, NAMES)


def test_expressions_never_reach_eval_or_exec(monkeypatch):
    def forbidden(*_a, **_k):
        raise AssertionError("eval or exec was called")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    expr = parse_expression("ceil_div(M, BM) * max(BN, 2) - N % 7", NAMES)
    assert expr({"M": 100, "BM": 32, "BN": 8, "N": 9}) == 4 * 8 - 2


def test_division_by_zero_is_a_message_not_a_crash():
    expr = parse_expression("N // BN", NAMES)
    with pytest.raises(ExpressionError, match="division by zero"):
        expr({"N": 4, "BN": 0})
    with pytest.raises(ExpressionError, match="ceil_div by zero"):
        parse_expression("ceil_div(N, BN)", NAMES)({"N": 4, "BN": 0})


def test_growth_past_the_bound_is_refused():
    expr = parse_expression("M * M * M * M * M", NAMES)
    with pytest.raises(ExpressionError, match="bound"):
        expr({"M": 1 << 20})


def test_a_name_missing_at_evaluation_is_named():
    with pytest.raises(ExpressionError, match="needs BN"):
        parse_expression("ceil_div(N, BN)", NAMES)({"N": 4})
