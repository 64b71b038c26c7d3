"""The buggy rewrite: this test FAILS, on purpose, with flipcheck's report (README.md)."""

from my_checkpointing import VertexLevelTrigger


def test_vertex_level_trigger_keeps_every_property(flipcheck_checker, pipelines):
    # Every interleaving of the job (tasks, channels, coordinator), no records needed: the bug is
    # in which tasks a checkpoint reaches once src[0] finished and src[1] still runs.
    flipcheck_checker.explore(pipelines, VertexLevelTrigger, records=0)
