"""What the sandbox tests need of the host: a working bubblewrap, or a skip that says why (a failure in CI, which
sets RUMMY_REQUIRE_SANDBOX=1 and installs it)."""

from __future__ import annotations

import os

import pytest

from tournaments.sandbox import bwrap_problem


def need_bwrap() -> None:
    problem = bwrap_problem()
    if problem is not None:
        if os.environ.get("RUMMY_REQUIRE_SANDBOX"):
            pytest.fail(f"RUMMY_REQUIRE_SANDBOX=1 but {problem}")
        pytest.skip(problem)
