"""The documented examples that run for a while (tests/documented_commands.py, SLOW), run as
written: exit codes as documented."""

import pytest

from documented_commands import assert_ran_as_documented, documented_examples, grouped

SLOW_EXAMPLES = grouped([e for e in documented_examples() if not e.uses_spark and not e.uses_flink and e.is_slow])


@pytest.mark.parametrize("source", sorted(SLOW_EXAMPLES))
def test_slow_documented_examples_exit_as_documented(source, tmp_path, request):
    ran = assert_ran_as_documented(SLOW_EXAMPLES[source], tmp_path, request)
    assert len(ran) == len(SLOW_EXAMPLES[source])
