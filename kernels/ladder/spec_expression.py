"""Integer expressions of a kernel spec (launch grid, block, dynamic shared memory, rules):
the spec's grammar of the one safe expression reader (``ladder/expression.py``).

A spec says ``grid = ["ceil_div(N, BN)", "ceil_div(M, BM)"]``: text from a file the user
wrote. Allowed: whole-number constants, the names the spec declares (M, N, K and its
parameters), ``+ - * // %``, unary minus, parentheses, and the calls ``min(a, b, ...)``,
``max(a, b, ...)`` and ``ceil_div(a, b)``. Anything else (``**``, ``/``, bit operators,
other calls, ...) is refused when the spec is read, with a message naming what was found.
Values are bounded: an intermediate result beyond ``MAX_MAGNITUDE`` is refused rather than
grown without end.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from .expression import MAX_LENGTH, MAX_MAGNITUDE, Call, Expression, ExpressionError, Grammar
from .expression import parse as _parse

__all__ = ["FUNCTIONS", "MAX_LENGTH", "MAX_MAGNITUDE", "SHAPE_NAMES", "Expression",
           "ExpressionError", "ceil_div", "parse_expression"]

SHAPE_NAMES = ("M", "N", "K")


def _bounded(v: int) -> int:
    if abs(v) > MAX_MAGNITUDE:
        raise ExpressionError(f"a value reaches {v:.3g}, beyond the bound of 2^62")
    return v


def _floordiv(a: int, b: int) -> int:
    if b == 0:
        raise ExpressionError("division by zero")
    return a // b


def _mod(a: int, b: int) -> int:
    if b == 0:
        raise ExpressionError("modulo by zero")
    return a % b


def ceil_div(a: int, b: int) -> int:
    if b == 0:
        raise ExpressionError("ceil_div by zero")
    return -(-a // b)


def _checked(f: Callable[..., int]) -> Callable[..., int]:
    return lambda *args: _bounded(f(*args))


SPEC = Grammar(
    operators={ast.Add: _checked(lambda a, b: a + b), ast.Sub: _checked(lambda a, b: a - b),
               ast.Mult: _checked(lambda a, b: a * b), ast.FloorDiv: _checked(_floordiv),
               ast.Mod: _checked(_mod)},
    calls={"min": Call(_checked(min), 2, 16), "max": Call(_checked(max), 2, 16),
           "ceil_div": Call(_checked(ceil_div), 2, 2)},
    example="ceil_div(N, BN)",
    value=lambda v: _bounded(int(v)),
)
FUNCTIONS = tuple(SPEC.calls)


def parse_expression(text: object, allowed: Iterable[str]) -> Expression:
    """Parse ``text`` (a str, or an int taken as its decimal text) into an Expression
    over the names ``allowed``; raises ExpressionError saying what is wrong."""
    return _parse(text, allowed, SPEC)
