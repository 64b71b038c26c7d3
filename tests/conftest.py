"""Shared pytest configuration: hypothesis profiles, and the system programs tests need (dot, Chromium).

`HYPOTHESIS_PROFILE=thorough pytest` runs more examples; CI uses the default profile, whose
derandomised runs make failures reproducible.
"""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=200, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# -- tiers ----------------------------------------------------------------------------------------
# `make check` runs `-m "not slow and not spark and not browser"`; `make test` runs everything.
# A test is slow exactly when it lives under tests/slow/: this hook is the only place the marker
# is set (tests/quality/test_test_tiers.py fails on `mark.slow` anywhere else).

SLOW_DIRECTORY = Path(__file__).resolve().parent / "slow"
# The longest modules of tests/slow, longest first (measured 2026-11-26 on 2 cores): `make test`
# runs the slow tests first, longest first, so that the two xdist workers (--dist worksteal)
# finish together instead of one of them running a 3-minute test alone at the end.
LONGEST_FIRST = ("test_documented_commands_slow.py", "test_protocol_exhaustive.py", "test_reduction_sweep.py",
                 "test_long_hunts.py")


def _run_order(item) -> tuple[int, int]:
    if SLOW_DIRECTORY not in item.path.parents:
        return (1, 0)
    name = item.path.name
    return (0, LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST))


def pytest_collection_modifyitems(items):
    for item in items:
        if SLOW_DIRECTORY in item.path.parents:
            item.add_marker(pytest.mark.slow)
    items.sort(key=_run_order)   # stable: each module keeps its order


# -- system programs ----------------------------------------------------------------------------
# `make install` provides graphviz's dot and `make test` headless Chromium (scripts/provide-tools.sh).
# A test that needs one fails, with the line saying what to install, where the program is missing:
# nothing is skipped silently.

from flipcheck.system_tools import find_program, missing_program_message  # noqa: E402


def require_program(name: str) -> str:
    """The path of system program ``name``, or the test fails saying what to install."""
    path = find_program(name)
    if path is None:
        pytest.fail(missing_program_message(name), pytrace=False)
    return path


@pytest.fixture(scope="session")
def dot_program() -> str:
    """graphviz's dot, which every picture needs."""
    return require_program("dot")


@pytest.fixture(scope="session")
def chromium_program() -> str:
    """Headless Chromium, which the report test opens report.html in."""
    return require_program("chromium")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test that draws without dot fails with the one line naming the fix, not a traceback."""
    from flipcheck.render.core import DotNotFoundError

    try:
        return (yield)
    except DotNotFoundError as error:
        pytest.fail(str(error), pytrace=False)


# -- pinned manifests ---------------------------------------------------------------------------
# `make manifests` (FLIPCHECK_REGENERATE_MANIFESTS=1) rewrites the entries the tests measured
# (tests/manifest.py); under xdist each worker hands its records to the controller.

def pytest_sessionfinish(session):
    import manifest

    if manifest.REGENERATE:
        worker = getattr(session.config, "workerinput", {}).get("workerid")
        manifest.write_measured(worker)


# -- printed commands ---------------------------------------------------------------------------
# A replay line a report prints is a contract with the user: run it as they would, in a new
# process, from another folder than the one the report was made in.

@pytest.fixture
def run_printed_command(tmp_path_factory):
    """``run(command)``: the printed ``flipcheck ...`` command line, run by this venv's script in
    a fresh empty folder; the CompletedProcess (text)."""
    import shlex
    import subprocess
    import sys

    def run(command: str):
        argv = shlex.split(command)
        assert argv[0] == "flipcheck", command
        script = Path(sys.executable).with_name("flipcheck")
        return subprocess.run([str(script), *argv[1:]], cwd=tmp_path_factory.mktemp("elsewhere"),
                              capture_output=True, text=True, timeout=300)
    return run
