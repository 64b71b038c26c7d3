"""Shared pytest configuration: hypothesis profiles.

`HYPOTHESIS_PROFILE=thorough pytest` runs more examples; CI uses the default profile, whose
derandomised runs make failures reproducible.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=200, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
