"""Where the tests' shared things are, for tests in any folder of tests/."""

from __future__ import annotations

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent  # the shared fakes and helpers (this folder)
TESTS = SUPPORT.parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"  # recorded pages and files the tests read
FAKE_RUNNER = SUPPORT / "fake_runner.py"  # a runner without a GPU (tests/support)
BENCHMARKS = REPO / "benchmarks"
SESSIONS = REPO / "resources" / "sessions"  # the bundled recordings
