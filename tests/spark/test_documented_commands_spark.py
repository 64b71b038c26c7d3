"""The documented examples that start Spark (sweep, demo), run as written on embedded Spark:
exit codes as documented (the convention: tests/documented_commands.py)."""

import pytest

from documented_commands import assert_ran_as_documented, documented_examples, grouped

pytestmark = pytest.mark.spark

SPARK_EXAMPLES = grouped([e for e in documented_examples() if e.uses_spark])


@pytest.mark.parametrize("source", sorted(SPARK_EXAMPLES))
def test_spark_documented_examples_exit_as_documented(source, tmp_path, request):
    ran = assert_ran_as_documented(SPARK_EXAMPLES[source], tmp_path, request)
    assert len(ran) == len(SPARK_EXAMPLES[source])
