"""Things defined once and read from there: the version (package metadata) and the list
of GPU-side subcommands (kernels.cli, named in kernels.subcommands)."""

from __future__ import annotations

import argparse
import io
import json
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import gemmscope.kernels as kernels
from gemmscope.app import main as app_main
from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.cli import subcommands
from gemmscope.kernels.cli.quick import quick
from gemmscope.kernels.engine.runner import Runner


def test_the_runner_header_carries_the_installed_version():
    out = io.StringIO()
    runner = Runner(out, telemetry_hz=0)
    runner.start()
    try:
        header = json.loads(out.getvalue().splitlines()[0])
    finally:
        runner.stop()
    assert header["type"] == "session"
    assert header["gemmscope"]["version"] == metadata.version("gemmscope") == kernels.__version__


def test_an_uninstalled_checkout_reads_its_pyproject(monkeypatch):
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    pyproject = Path(kernels.__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.exists():  # a checkout (or an editable install)
        want = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    else:  # an installed copy has no pyproject beside it
        want = "unknown"
    assert kernels._version() == want


def test_the_app_routes_exactly_the_subcommands_the_cli_parses(monkeypatch):
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(cli.COMMANDS) == list(subcommands.NAMES)
    seen = []
    monkeypatch.setattr(cli, "main", lambda argv: seen.append(argv) or 0)
    for name in cli.COMMANDS:
        if quick(name) is None:
            assert app_main.main([name, "--help"]) == 0
            continue
        with pytest.raises(SystemExit) as done:  # runner, report, compare: their own entry
            app_main.main([name, "--help"])
        assert done.value.code == 0
    assert [argv[0] for argv in seen] == [n for n in cli.COMMANDS if quick(n) is None]
    assert [n for n in cli.COMMANDS if quick(n) is not None] == ["runner", "report", "compare"]
