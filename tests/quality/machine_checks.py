"""Running a hypothesis state machine until it fails: the "the stateful machine catches variant X"
tests of every suite share this."""

from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

# Derandomised runs are reproducible, but which examples a budget reaches changes with the
# hypothesis version, so a single fixed budget is a bet. Escalate instead: a variant the machine
# catches stops the search at its first failure, so the larger budgets cost time only when it
# is hard to reach.
BUDGETS = (200, 1000, 5000)


def machine_failure(make_machine, base: settings) -> AssertionError | None:
    """The first property failure of ``make_machine()`` under ``base`` with growing budgets, or
    ``None`` if none of the budgets finds one."""
    for examples in BUDGETS:
        try:
            run_state_machine_as_test(make_machine(), settings=settings(base, max_examples=examples))
        except AssertionError as failure:
            return failure
    return None
