"""A user's own swizzle, typed as an integer expression and parsed safely.

The text is parsed with :mod:`ast` and evaluated by walking the tree; only integer
constants, the names in ``NAMES`` and the operators ``^ & | << >> + - * // %`` (and unary
minus) are allowed. Nothing is passed to ``eval``. A bad expression raises
:class:`ExpressionError` with a message meant for the user.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

NAMES = ("row", "col", "addr", "width")
MAX_SHIFT = 62
MAX_LENGTH = 200

_BINOPS: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.BitXor: operator.xor, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Add: operator.add,
    ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_SYMBOL = {ast.BitXor: "^", ast.BitAnd: "&", ast.BitOr: "|", ast.LShift: "<<",
           ast.RShift: ">>", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
           ast.FloorDiv: "//", ast.Mod: "%"}


class ExpressionError(ValueError):
    """The expression cannot be used; ``str()`` says why, for the user."""


@dataclass(frozen=True, slots=True)
class ColumnExpression:
    """``text`` gives the physical column of element (row, col); names: row, col,
    addr (= row * width + col, the logical element offset) and width (elements per row)."""

    text: str
    tree: ast.Expression
    width: int

    def __call__(self, row: np.ndarray, col: np.ndarray) -> np.ndarray:
        r = np.asarray(row, np.int64)
        c = np.asarray(col, np.int64)
        env: dict[str, np.ndarray | np.int64] = {"row": r, "col": c,
                                                 "addr": r * self.width + c,
                                                 "width": np.int64(self.width)}
        out = np.broadcast_to(np.asarray(_eval(self.tree.body, env), np.int64), r.shape)
        return out


def parse_column_expression(text: str, width: int) -> ColumnExpression:
    text = text.strip()
    if not text:
        raise ExpressionError("type an expression, e.g. col ^ (row % 8)")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"syntax error at column {exc.offset}: {exc.msg}") from None
    _check(tree.body)
    expr = ColumnExpression(text, tree, width)
    # one trial evaluation, so errors such as a negative shift show up now
    probe = np.arange(8)
    expr(probe[:, None] + np.zeros((1, width), np.int64), np.arange(width)[None, :]
         + np.zeros((8, 1), np.int64))
    return expr


def _check(node: ast.AST) -> None:
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise ExpressionError(f"operator {type(node.op).__name__} is not allowed; "
                                  f"use {' '.join(_SYMBOL.values())}")
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.USub | ast.UAdd):
            raise ExpressionError("only unary minus is allowed")
        _check(node.operand)
    elif isinstance(node, ast.Name):
        if node.id not in NAMES:
            raise ExpressionError(f"unknown name {node.id!r}; use {', '.join(NAMES)}")
    elif isinstance(node, ast.Constant):
        if type(node.value) is not int:
            raise ExpressionError(f"only integer constants are allowed, not {node.value!r}")
    else:
        raise ExpressionError(f"{type(node).__name__} is not allowed in an expression")


def _eval(node: ast.AST, env: Mapping[str, np.ndarray | np.int64]
          ) -> np.ndarray | np.int64:
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, int)  # the parser admits integer constants only
        return np.int64(node.value)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else v
    assert isinstance(node, ast.BinOp)
    left = np.asarray(_eval(node.left, env), np.int64)
    right = np.asarray(_eval(node.right, env), np.int64)
    op = type(node.op)
    if op in (ast.LShift, ast.RShift) and (np.any(right < 0) or np.any(right > MAX_SHIFT)):
        raise ExpressionError(f"shift by {int(np.max(np.abs(right)))} is out of range "
                              f"(0 to {MAX_SHIFT})")
    if op in (ast.FloorDiv, ast.Mod) and np.any(right == 0):
        raise ExpressionError("division or modulo by zero")
    with np.errstate(over="ignore"):
        return _BINOPS[op](left, right)
