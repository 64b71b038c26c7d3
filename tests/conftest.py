"""Shared pytest configuration: hypothesis profiles, and require_dot() for tests that draw.

`HYPOTHESIS_PROFILE=thorough pytest` runs more examples; CI uses the default profile, whose
derandomised runs make failures reproducible.
"""

import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=200, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def require_dot() -> str:
    """The path of graphviz's ``dot``; a test that draws FAILS without it (never skips), with one
    line saying what to install: `make install` is promised to provide it."""
    dot = shutil.which("dot")
    if dot is None:
        pytest.fail("graphviz's dot is missing: run `make install` (apt-get install graphviz)", pytrace=False)
    return dot


@pytest.fixture
def dot_program() -> str:
    """require_dot() as a fixture: the test fails up front when graphviz's dot is missing."""
    return require_dot()
