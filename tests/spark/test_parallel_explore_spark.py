"""One exploration spread over Spark (flipcheck/parallel_explore/spark.py): the graph the driver builds
is the single-process explorer's, number for number, so the counts and the counterexamples are
too; the CLI's --master gives the same JSON as without it."""

import json
import subprocess

import pytest

from flipcheck.parallel_explore.spark import explore_job_on_spark, job_from_spec, job_spec
from flipcheck.generators.protocol import example_graph
from flipcheck.properties.protocol_explore import explore_job

pytestmark = pytest.mark.spark


def _traces(result):
    return [(c.property, c.message, c.labels, c.cycle) for c in result.counterexamples]


@pytest.mark.parametrize("graph, variant, options", [
    ("pair", "flip-147", {"mode": "unaligned", "records": 1, "failures": 1}),
    ("twin", "trigger-sources-only", {"records": 0}),            # a deadlock and an after-abort witness
    ("chain", "pre-flip-147", {"records": 1}),                   # step and end-of-job violations
])
@pytest.mark.parametrize("reduction", ["none", "por", "all"])
def test_spark_builds_the_single_process_graph(spark, graph, variant, options, reduction):
    spec = job_spec(example_graph(graph), variant, options)
    spread = explore_job_on_spark(spec, spark, partitions=3, reduction=reduction)
    alone = explore_job(job_from_spec(spec), store="fingerprints", reduction=reduction)
    assert (spread.states, spread.transitions, spread.complete) == (alone.states, alone.transitions, alone.complete)
    assert spread.graph.reduced == alone.graph.reduced and (reduction != "none") == (alone.graph.reduced > 0)
    assert list(spread.graph.targets) == list(alone.graph.targets)
    assert list(spread.graph.parent) == list(alone.graph.parent)
    assert _traces(spread) == _traces(alone)
    assert (variant == "flip-147") == (spread.counterexamples == [])


def test_a_bounded_search_stops_where_the_single_process_one_does(spark):
    spec = job_spec(example_graph("pair"), "flip-147", {"mode": "unaligned", "records": 1, "failures": 1})
    spread = explore_job_on_spark(spec, spark, max_states=500)
    alone = explore_job(job_from_spec(spec), store="fingerprints", max_states=500)
    assert spread.states == alone.states == 500 and not spread.complete and not alone.complete


def test_the_cli_gives_the_same_answer_with_and_without_master(flipcheck_cli, cli_env, tmp_path):
    base = flipcheck_cli + ["explore", "examples/graphs/protocol-pair.json", "--variant", "pre-flip-147", "--json"]
    alone = subprocess.run(base, capture_output=True, text=True, env=cli_env, timeout=300)
    spread = subprocess.run(base + ["--master", "local[2]", "--spark-log", str(tmp_path / "spark.log")],
                            capture_output=True, text=True, env=cli_env, timeout=300)
    assert alone.returncode == spread.returncode == 1, spread.stderr[-500:]
    single, on_spark = json.loads(alone.stdout), json.loads(spread.stdout)
    # Rule coverage is counted by the single-process search only (docs/protocol.md): null on Spark.
    assert on_spark.pop("coverage") is None and single.pop("coverage")["rules"]
    assert single == on_spark


class _Killed(Exception):
    pass


def test_a_killed_run_resumes_from_its_last_level(spark, tmp_path):
    spec = job_spec(example_graph("pair"), "pre-flip-147", {"mode": "unaligned", "records": 1, "failures": 1})

    def kill(graph, seconds):
        if graph.depth[-1] >= 10:
            raise _Killed

    with pytest.raises(_Killed):
        explore_job_on_spark(spec, spark, resume_dir=str(tmp_path), progress=kill, progress_every=0)
    reports = []
    resumed = explore_job_on_spark(spec, spark, resume_dir=str(tmp_path), progress_every=0,
                                   progress=lambda graph, seconds: reports.append(len(graph)))
    alone = explore_job(job_from_spec(spec), store="fingerprints")
    assert reports[0] > 100          # it went on from level 10, not from the initial state
    assert (resumed.states, resumed.transitions, resumed.complete) == (alone.states, alone.transitions, True)
    assert list(resumed.graph.targets) == list(alone.graph.targets) and _traces(resumed) == _traces(alone)
    again = explore_job_on_spark(spec, spark, resume_dir=str(tmp_path))     # finished: read back, judged
    assert _traces(again) == _traces(alone)


def test_a_damaged_or_foreign_resume_dir_is_one_line(spark, tmp_path):
    from flipcheck.errors import InputError

    spec = job_spec(example_graph("pair"), "flip-147", {"records": 1})
    (tmp_path / "a-file").write_text("")
    with pytest.raises(InputError, match="cannot save the run there"):
        explore_job_on_spark(spec, spark, resume_dir=str(tmp_path / "a-file"))
    explore_job_on_spark(spec, spark, resume_dir=str(tmp_path))
    with pytest.raises(InputError, match="holds another exploration .differs in: spec"):
        explore_job_on_spark(job_spec(example_graph("pair"), "flip-147", {"records": 0}), spark, resume_dir=str(tmp_path))
    level = next(tmp_path.glob("round-*"))
    (level / "parent.bin").write_bytes((level / "parent.bin").read_bytes()[:-3])
    with pytest.raises(InputError, match="damaged"):
        explore_job_on_spark(spec, spark, resume_dir=str(tmp_path))
    (level / "parent.bin").write_bytes(b"")
    (level / "graph.json").write_text('{"labels": [{"n": "os.system", "f": []}]}')
    with pytest.raises(InputError, match="damaged"):
        explore_job_on_spark(spec, spark, resume_dir=str(tmp_path))
