"""``flipcheck verify``: one suite's properties with all its drivers.

Each suite is a function ``(budget_seconds, variant) -> [{"name", "cases", "violations",
"driver"}]`` named here by module path, so a suite's heavy imports happen only when it runs.
"""

from __future__ import annotations

import importlib

__all__ = ["SUITES", "run_suite", "suite_runner"]

SUITES = {
    "plan": "flipcheck.designs.plan:run_plan_suite",
    "barriers": "flipcheck.designs.barriers:run_barriers_suite",
    "protocol": "flipcheck.designs.protocol:run_protocol_suite",
    "approximate-recovery": "flipcheck.designs.approximate_recovery:run_approximate_recovery_suite",
    "local-recovery": "flipcheck.designs.local_recovery:run_local_recovery_suite",
    "split-assignment": "flipcheck.designs.split_assignment:run_split_assignment_suite",
    "batch-recovery": "flipcheck.designs.batch_recovery:run_batch_recovery_suite",
}


class SuiteUnavailable(LookupError):
    pass


def suite_runner(name: str):
    module_name, function_name = SUITES[name].split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name:
            raise SuiteUnavailable(f"suite {name!r} is not available in this build") from None
        raise
    return getattr(module, function_name)


def run_suite(name: str, budget_seconds: float, variant: str | None = None) -> dict:
    rows = suite_runner(name)(budget_seconds, variant)
    return {"suite": name, "properties": rows, "violations": sum(row["violations"] for row in rows)}
