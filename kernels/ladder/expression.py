"""Integer expressions typed by a user, parsed and evaluated safely: one reader for every
kind (a kernel spec's launch geometry, ``spec_expression``; a swizzle's column,
``models/column_expression``), each kind a ``Grammar`` of what it allows.

The text is parsed with :mod:`ast` and evaluated by walking the tree; nothing is passed
to ``eval`` or ``exec``. Allowed: whole-number constants, the names given, the grammar's
binary operators, unary minus (and plus), parentheses and the grammar's calls. Anything
else (attributes, subscripts, other calls, keywords, comparisons, ...) is refused when the
text is read, with a message naming what was found. The text is bounded (``MAX_LENGTH``
characters, ``MAX_NODES`` tree nodes, constants within ``MAX_MAGNITUDE``); a grammar's
operators bound or wrap the values they make.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_LENGTH = 200  # characters of one expression
MAX_NODES = 100  # nodes of its tree
MAX_MAGNITUDE = 1 << 62  # no constant beyond this (an int64 stays exact)

SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
          ast.Div: "/", ast.Pow: "**", ast.BitXor: "^", ast.BitAnd: "&", ast.BitOr: "|",
          ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}


class ExpressionError(ValueError):
    """An expression that cannot be read or evaluated; ``str()`` says why, for the user."""


@dataclass(frozen=True, slots=True)
class Call:
    function: Callable[..., Any]
    least: int  # arguments
    most: int


@dataclass(frozen=True, slots=True)
class Grammar:
    """What one kind of expression allows and how its values combine: ``operators`` maps
    an :mod:`ast` operator to the function that applies it (it raises ExpressionError on
    a value it refuses), ``value`` takes a name's value in; ``example`` is shown when the
    text is empty."""

    operators: Mapping[type[ast.operator], Callable[[Any, Any], Any]]
    calls: Mapping[str, Call]
    example: str
    value: Callable[[Any], Any] = lambda v: v


@dataclass(frozen=True, slots=True)
class Expression:
    """One checked expression; call it with the values of its names."""

    text: str
    tree: ast.Expression
    names: frozenset[str]  # the names it uses
    grammar: Grammar

    def __call__(self, env: Mapping[str, Any]) -> Any:
        missing = sorted(self.names - set(env))
        if missing:
            raise ExpressionError(f"{self.text!r} needs {', '.join(missing)}")
        return _eval(self.tree.body, env, self.grammar)

    def __str__(self) -> str:
        return self.text


def parse(text: object, allowed: Iterable[str], grammar: Grammar) -> Expression:
    """Parse ``text`` (a str, or an int taken as its decimal text) into an Expression
    over the names ``allowed``; raises ExpressionError saying what is wrong."""
    if isinstance(text, bool) or not isinstance(text, str | int):
        raise ExpressionError(f"an expression is a string or a whole number, not "
                              f"{type(text).__name__}")
    text = str(text).strip()
    if not text:
        raise ExpressionError(f"the expression is empty: type an expression, e.g. "
                              f"{grammar.example}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{text!r} is not an expression (syntax error at column "
                              f"{exc.offset}: {exc.msg})") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise ExpressionError(f"{text!r} has {nodes} parts; at most {MAX_NODES}")
    names: set[str] = set()
    _Checker(frozenset(allowed), grammar, text, names).check(tree.body)
    return Expression(text, tree, frozenset(names), grammar)


@dataclass(slots=True)
class _Checker:
    allowed: frozenset[str]
    grammar: Grammar
    text: str
    names: set[str]

    def check(self, node: ast.AST) -> None:
        text, calls = self.text, self.grammar.calls
        if isinstance(node, ast.BinOp):
            if type(node.op) not in self.grammar.operators:
                sym = SYMBOL.get(type(node.op), type(node.op).__name__)
                hint = " (use // for whole-number division)" \
                    if isinstance(node.op, ast.Div) else ""
                use = " ".join(SYMBOL[op] for op in self.grammar.operators)
                raise ExpressionError(f"operator {sym} is not allowed in {text!r}{hint}; "
                                      f"use {use}")
            self.check(node.left)
            self.check(node.right)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.USub | ast.UAdd):
                raise ExpressionError(f"only unary minus is allowed in {text!r}")
            self.check(node.operand)
        elif isinstance(node, ast.Name):
            if node.id in calls:
                raise ExpressionError(f"{node.id} is a function in {text!r}: call it, "
                                      f"{node.id}(a, b)")
            if node.id not in self.allowed:
                raise ExpressionError(f"unknown name {node.id!r} in {text!r}; known: "
                                      f"{', '.join(sorted(self.allowed))}")
            self.names.add(node.id)
        elif isinstance(node, ast.Constant):
            if type(node.value) is not int:
                raise ExpressionError(f"only whole-number constants are allowed in "
                                      f"{text!r}, not {node.value!r}")
            if abs(node.value) > MAX_MAGNITUDE:
                raise ExpressionError(f"the constant {node.value} in {text!r} is too large")
        elif isinstance(node, ast.Call):
            self.check_call(node)
        else:
            raise ExpressionError(f"{type(node).__name__} is not allowed in an expression "
                                  f"({text!r})")

    def check_call(self, node: ast.Call) -> None:
        text, calls = self.text, self.grammar.calls
        if not isinstance(node.func, ast.Name) or node.func.id not in calls:
            if not calls:
                raise ExpressionError(f"calls are not allowed in {text!r}")
            raise ExpressionError(f"only the calls {', '.join(calls)} are allowed in "
                                  f"{text!r}")
        if node.keywords:
            raise ExpressionError(f"{node.func.id}() takes no keywords in {text!r}")
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise ExpressionError(f"{node.func.id}() takes no *arguments in {text!r}")
        call = calls[node.func.id]
        count = len(node.args)
        if not call.least <= count <= call.most:
            takes = f"{call.least}" if call.least == call.most else f"at least {call.least}"
            raise ExpressionError(f"{node.func.id} takes {takes} arguments, not {count}, "
                                  f"in {text!r}")
        for arg in node.args:
            self.check(arg)


def _eval(node: ast.AST, env: Mapping[str, Any], grammar: Grammar) -> Any:
    if isinstance(node, ast.Constant):
        assert type(node.value) is int  # the checker admits whole numbers only
        return node.value
    if isinstance(node, ast.Name):
        return grammar.value(env[node.id])
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, grammar)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)  # the checker admits named calls only
        args = [_eval(a, env, grammar) for a in node.args]
        return grammar.calls[node.func.id].function(*args)
    assert isinstance(node, ast.BinOp)  # the checker admits nothing else
    left, right = _eval(node.left, env, grammar), _eval(node.right, env, grammar)
    return grammar.operators[type(node.op)](left, right)
