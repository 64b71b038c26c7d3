"""The documented examples that start real Flink (`flipcheck flink run`), run as written:
exit codes as documented (the convention: tests/documented_commands.py)."""

import pytest

from documented_commands import assert_ran_as_documented, documented_examples, grouped

pytestmark = pytest.mark.flink

FLINK_EXAMPLES = grouped([e for e in documented_examples() if e.uses_flink])


def test_the_flink_examples_are_found():
    assert sum(len(examples) for examples in FLINK_EXAMPLES.values()) >= 3


@pytest.mark.parametrize("source", sorted(FLINK_EXAMPLES))
def test_flink_documented_examples_exit_as_documented(source, tmp_path, request):
    ran = assert_ran_as_documented(FLINK_EXAMPLES[source], tmp_path, request)
    assert len(ran) == len(FLINK_EXAMPLES[source])
