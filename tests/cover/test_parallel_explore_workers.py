"""One exploration on several processes of this machine (flipcheck/parallel_explore/workers.py):
the graph the driver builds is the single-process explorer's, number for number, so the pinned
counts, the coverage and every counterexample are too; the CLI gives the same JSON whatever
--workers is."""

import json

import pytest

import manifest
from flipcheck.cli import main
from flipcheck.errors import UsageError
from flipcheck.generators.protocol import example_graph
from flipcheck.parallel_explore.workers import WorkersReport, explore_job_on_workers, job_from_spec, job_spec
from flipcheck.properties.protocol_explore import explore_job


def _spec(entry):
    options = dict(entry["config"])
    graph = example_graph(options.pop("graph"), options.pop("parallelism", 1))
    if options["records"] is None:
        del options["records"]     # the graph's per-source flags
    return job_spec(graph, "flip-147", options)


SMALL = [e for e in manifest.entries("protocol") if e["distinct_states"] <= 3_500]


@pytest.mark.parametrize("entry", SMALL[:3], ids=manifest.entry_id)
def test_two_workers_give_the_pinned_counts(entry):
    spec = _spec(entry)
    unreduced = explore_job_on_workers(spec, workers=2, min_level=1)
    assert (unreduced.states, unreduced.transitions) == (entry["distinct_states"], entry["transitions"])
    assert unreduced.complete and unreduced.counterexamples == []
    reduced = explore_job_on_workers(spec, workers=3, reduction="all", min_level=50)   # more workers than cores
    assert reduced.states == entry["all_states"] and reduced.complete


def _traces(result):
    return [(c.property, c.message, c.labels, c.cycle) for c in result.counterexamples]


@pytest.mark.parametrize("graph, variant, options, reduction", [
    ("twin", "trigger-sources-only", {"records": 0}, "all"),        # a deadlock and an after-abort witness
    ("pair", "pre-flip-147", {"records": 1}, "por"),                # step and end-of-job violations
])
def test_a_mutant_has_the_single_process_graph_and_counterexamples(graph, variant, options, reduction):
    spec = job_spec(example_graph(graph), variant, options)
    report = WorkersReport(2)
    spread = explore_job_on_workers(spec, workers=2, reduction=reduction, coverage=True, report=report, min_level=1)
    alone = explore_job(job_from_spec(spec), store="fingerprints", reduction=reduction, coverage=True)
    assert (spread.states, spread.transitions, spread.graph.reduced) == (alone.states, alone.transitions,
                                                                         alone.graph.reduced)
    assert list(spread.graph.parent) == list(alone.graph.parent)
    assert list(spread.graph.targets) == list(alone.graph.targets)
    assert _traces(spread) == _traces(alone) and spread.counterexamples
    assert spread.coverage.as_json() == alone.coverage.as_json()
    # states owned by the other worker crossed (in the reduced search and the full model's)
    assert report.states_moved > 0 and report.workers_cpu_seconds > 0


def test_a_small_search_forks_no_process_and_a_larger_one_hands_its_level_over():
    spec = job_spec(example_graph("pair"), "cancel-pending-on-finish", {"records": 1})
    alone = explore_job(job_from_spec(spec), store="fingerprints", coverage=True)
    for min_level, forked in ((10_000, False), (20, True)):    # levels of this job: at most a few hundred
        report = WorkersReport(2)
        spread = explore_job_on_workers(spec, workers=2, coverage=True, report=report, min_level=min_level)
        assert (report.workers_cpu_seconds > 0) == forked and (report.states_moved > 0) == forked
        assert list(spread.graph.targets) == list(alone.graph.targets) and _traces(spread) == _traces(alone)
        assert spread.coverage.as_json() == alone.coverage.as_json()   # the driver's and the workers', once


def test_a_new_state_stays_with_its_maker_and_only_the_balance_of_a_level_moves():
    spec = job_spec(example_graph("pair"), "flip-147", {"mode": "unaligned", "records": 1, "failures": 1})
    report = WorkersReport(2)
    spread = explore_job_on_workers(spec, workers=2, report=report, min_level=50)
    assert spread.states == explore_job(job_from_spec(spec), store="fingerprints").states
    assert report.imbalance <= 1                           # every level shared out evenly
    assert 0 < report.states_moved < spread.states / 10    # by moving few: most stay where they were made


@pytest.mark.parametrize("per_message", [1, 7])
def test_a_level_numbered_part_by_part_as_the_workers_send_it_is_the_single_process_graph(monkeypatch, per_message):
    import flipcheck.parallel_explore.workers as workers

    monkeypatch.setattr(workers, "STREAM_STATES", per_message)   # many parts, read in any order
    spec = job_spec(example_graph("pair"), "cancel-pending-on-finish", {"mode": "unaligned", "records": 1, "failures": 1})
    alone = explore_job(job_from_spec(spec), store="fingerprints")
    spread = explore_job_on_workers(spec, workers=3, min_level=20)
    assert list(spread.graph.parent) == list(alone.graph.parent)
    assert list(spread.graph.targets) == list(alone.graph.targets) and _traces(spread) == _traces(alone)


def test_a_bounded_search_stops_where_the_single_process_one_does():
    spec = job_spec(example_graph("pair"), "flip-147", {"mode": "unaligned", "records": 1, "failures": 1})
    spread = explore_job_on_workers(spec, workers=2, max_states=500, min_level=1)
    alone = explore_job(job_from_spec(spec), store="fingerprints", max_states=500)
    assert spread.states == alone.states == 500 and not spread.complete and not alone.complete


def test_a_users_variant_that_raises_is_one_line_as_in_one_process(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("import flipcheck\n\n\nclass Mine(flipcheck.Protocol):\n    name = 'mine'\n\n"
                    "    def may_finish(self, job, state, t):\n        raise RuntimeError('my rule is broken')\n")
    spec = job_spec(example_graph("pair"), f"{path}:Mine", {"records": 0})
    with pytest.raises(UsageError, match=r"RuntimeError: my rule is broken \(at .*mine.py:8, in may_finish\)"):
        explore_job_on_workers(spec, workers=2, min_level=1)


def _cli(capsys, *args):
    code = main(["explore", "examples/graphs/protocol-pair.json", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("args, expected", [([], 2), (["--workers", "1"], 1), (["--workers", "3"], 3),
                                            (["--store", "states"], 1), (["--property", "exactly_once"], 1)])
def test_the_cli_explores_on_every_core_unless_told_or_searching_in_one_process(capsys, monkeypatch, args, expected):
    import flipcheck.parallel_explore.workers as workers_module

    asked = []
    monkeypatch.setattr(workers_module, "default_workers", lambda: 2)   # as on a 2-core machine
    spread = workers_module.explore_job_on_workers
    monkeypatch.setattr(workers_module, "explore_job_on_workers",
                        lambda spec, **options: asked.append(options["workers"]) or spread(spec, **options))
    code, out, _ = _cli(capsys, "--records", "1", "--json", *args)
    assert code == 0 and json.loads(out)["complete"]
    assert asked == ([expected] if expected > 1 else [])


def test_the_cli_gives_the_same_json_whatever_the_workers(capsys):
    answers = [_cli(capsys, "--variant", "pre-flip-147", "--json", "--workers", n) for n in ("1", "2")]
    (code_one, one, _), (code_two, two, _) = answers
    assert code_one == code_two == 1 and json.loads(one)["violations"] and one == two


@pytest.mark.parametrize("reduction", ["none", "all"])
def test_a_search_cut_by_max_states_ends_where_the_single_process_one_does(reduction):
    """The state that meets the bound is the last one expanded, in both: before, the workers
    expanded the rest of its level (join aligned cut at 50,000: 146,612 transitions, one process
    129,917)."""
    spec = job_spec(example_graph("pair"), "cancel-pending-on-finish", {"records": 2})
    alone = explore_job(job_from_spec(spec), store="fingerprints", max_states=300, reduction=reduction)
    spread = explore_job_on_workers(spec, workers=2, min_level=1, max_states=300, reduction=reduction)
    assert (spread.states, spread.transitions, spread.complete) == (alone.states, alone.transitions, False)
    assert spread.graph.expanded == alone.graph.expanded < spread.states
    assert list(spread.graph.targets) == list(alone.graph.targets) and list(spread.graph.parent) == list(alone.graph.parent)
    assert _traces(spread) == _traces(alone)


def test_a_bound_met_early_in_a_level_stops_the_workers_before_the_rest_of_it():
    """Once the bound is met the driver tells the workers to stop after the part they are on:
    they expand about what one process expands, not the rest of the level (at 2,000,000 states of
    the hidden join, unaligned, 2 checkpoints, that rest was 264,000 expansions, 16 % more)."""
    spec = job_spec(example_graph("pair"), "flip-147", {"mode": "unaligned", "records": 2, "checkpoints": 2,
                                                        "failures": 1})
    first = explore_job_on_workers(spec, workers=2, max_states=70_000, liveness=False)
    depths = list(first.graph.depth)
    numbered = max(depths) - 1   # the deepest level numbered in full
    widest = max(range(1, numbered + 1), key=depths.count)
    through_widest = sum(1 for d in depths if d <= widest)
    report = WorkersReport(2)
    # Bound met by the first new state one level deeper: one process expands a few of the widest
    # level's states; before, the workers expanded all of them.
    cut = explore_job_on_workers(spec, workers=2, max_states=through_widest + 1, liveness=False, report=report)
    assert not cut.complete and cut.graph.depth[len(cut.graph) - 1] == widest + 1
    assert cut.graph.expanded <= report.states_expanded < through_widest


class _Killed(Exception):
    pass


def _killed_at(depth):
    def progress(graph, _seconds):
        if graph.depth[len(graph) - 1] >= depth:
            raise _Killed
    return progress


@pytest.mark.parametrize("reduction", ["none", "all"])
def test_a_killed_search_resumed_from_its_saved_level_is_the_whole_search(tmp_path, monkeypatch, reduction):
    import flipcheck.parallel_explore.workers as workers_module

    monkeypatch.setattr(workers_module, "fixed_hash_seed", lambda: True)   # one process: one seed throughout
    spec = job_spec(example_graph("pair"), "cancel-pending-on-finish", {"records": 2})
    whole = explore_job_on_workers(spec, workers=2, min_level=20, reduction=reduction)
    saved = str(tmp_path / "saved")
    with pytest.raises(_Killed):
        explore_job_on_workers(spec, workers=2, min_level=20, reduction=reduction, resume_dir=saved,
                               progress=_killed_at(8), progress_every=0, save_every=0)
    report = WorkersReport(2)
    resumed = explore_job_on_workers(spec, workers=2, min_level=20, reduction=reduction, resume_dir=saved,
                                     report=report)
    assert report.resumed_at is not None and report.resumed_at >= 8
    assert (resumed.states, resumed.transitions, resumed.complete) == (whole.states, whole.transitions, True)
    assert _traces(resumed) and _traces(resumed) == _traces(whole)
    assert resumed.graph.parent == whole.graph.parent and resumed.graph.targets == whole.graph.targets
    again = explore_job_on_workers(spec, workers=2, min_level=20, reduction=reduction, resume_dir=saved)
    assert (again.states, again.transitions, _traces(again)) == (whole.states, whole.transitions, _traces(whole))


def test_a_saved_search_is_continued_only_by_the_same_search(tmp_path, monkeypatch):
    import flipcheck.parallel_explore.workers as workers_module
    from flipcheck.errors import InputError

    monkeypatch.setattr(workers_module, "fixed_hash_seed", lambda: True)
    saved = str(tmp_path / "saved")
    explore_job_on_workers(job_spec(example_graph("pair"), "flip-147", {"records": 1}), workers=2, resume_dir=saved)
    with pytest.raises(InputError, match="holds another exploration .differs in: spec"):
        explore_job_on_workers(job_spec(example_graph("pair"), "flip-147", {"records": 2}), workers=2,
                               resume_dir=saved)
    monkeypatch.setattr(workers_module, "fixed_hash_seed", lambda: False)
    with pytest.raises(UsageError, match="PYTHONHASHSEED"):
        explore_job_on_workers(job_spec(example_graph("pair"), "flip-147", {"records": 1}), workers=2,
                               resume_dir=saved)


def test_the_command_line_resumes_under_a_hash_seed_it_sets_itself(tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    command = [sys.executable, "-m", "flipcheck.cli", "explore", "examples/graphs/protocol-pair.json", "--records", "2",
               "--variant", "pre-flip-147", "--resume-dir", str(tmp_path / "saved")]
    first = subprocess.run(command, env=env, capture_output=True, text=True)
    second = subprocess.run(command, env=env, capture_output=True, text=True)
    assert first.returncode == second.returncode == 1 and first.stdout.splitlines()[0] == second.stdout.splitlines()[0]
    assert json.loads((tmp_path / "saved" / "meta.json").read_text())["hash_seed"] == "0"
    assert "went on from level" in second.stderr and "went on" not in first.stderr


@pytest.mark.parametrize("args, named", [
    (["--resume-dir", "unused", "--property", "exactly_once"], "--property"),
    (["--resume-dir", "unused", "--workers", "1", "--store", "states"], "--store states"),
    (["--workers", "0"], "--workers"),
    (["--workers", "2", "--store", "states"], "--store states"),
    (["--workers", "2", "--property", "exactly_once"], "--property"),
    (["--workers", "2", "--master", "local[1]"], "--master"),
    # the seen-set on the executors: refused before a JVM starts
    (["--seen", "executors"], "need --master"),
    (["--master", "local[1]", "--seen", "executors"], "--reduction none or symmetry"),
    (["--master", "local[1]", "--seen", "executors", "--reduction", "none", "--max-states", "5"], "--max-states"),
])
def test_workers_options_that_cannot_hold_are_one_line_exit_2(capsys, args, named):
    code, out, err = _cli(capsys, *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and named in err


def test_resuming_from_a_function_call_needs_a_hash_seed_set_before_python_started(capsys, monkeypatch, tmp_path):
    import flipcheck.parallel_explore.workers as workers_module

    monkeypatch.setattr(workers_module, "fixed_hash_seed", lambda: False)
    code, out, err = _cli(capsys, "--resume-dir", str(tmp_path / "saved"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "PYTHONHASHSEED" in err


def test_the_bench_row_compares_one_process_and_two_workers_on_a_pinned_configuration():
    from flipcheck.bench.explore_workers import configurations, measure, report_line

    smallest = min(configurations(min_states=0), key=lambda c: c["states"])
    row = measure(smallest, min_level=1)
    assert row["states"] == smallest["states"] and row["workers"] == 2 and row["reduction"] == "none"
    assert 0 < row["driver_cpu_share"] < 1 and 0 < row["moved_per_state"] < 1
    assert row["projected_speedup"] > 0 and str(row["states"]) in report_line(row)
    assert all(c["states"] > 50_000 for c in configurations())


def test_a_repeated_bench_row_is_the_pair_with_the_median_speedup():
    from flipcheck.bench.explore_workers import configurations, measure, report_line

    smallest = min(configurations(min_states=0), key=lambda c: c["states"])
    row = measure(smallest, min_level=1, reduction="all", repeat=3)
    assert row["runs"] == 3 and len(row["speedups"]) == 3 and row["speedups"] == sorted(row["speedups"])
    assert row["speedup"] == row["speedups"][1] and row["reduction"] == "all"
    assert report_line(row).endswith(" ".join(f"{x:.2f}" for x in row["speedups"]))


@pytest.mark.parametrize("argv, named", [(["bench", "explore", "--tables", "stores,nope"], "'nope'"),
                                         (["bench", "plan", "--tables", "workers"], "does not apply"),
                                         (["bench", "explore", "--tables", "stores", "--repeat", "3"], "--repeat"),
                                         (["bench", "explore", "--tables", "spark", "--repeat", "3"], "workers table")])
def test_bench_tables_bad_input_is_one_line_exit_2(capsys, argv, named):
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and len(captured.err.strip().splitlines()) == 1 and named in captured.err


@pytest.mark.parametrize("variant, reduction", [("flip-147", "none"), ("cancel-pending-on-finish", "all")])
def test_a_worker_that_ends_early_expands_half_of_what_another_has_left(monkeypatch, variant, reduction):
    import os
    import time

    import flipcheck.parallel_explore.workers as workers

    expand, driver, expanded_in = workers.expand, os.getpid(), set()

    def odd_fingerprints_slow(text, items):   # a worker's first level: worker 1 holds the odd ones
        first = os.getpid() != driver and os.getpid() not in expanded_in
        expanded_in.add(os.getpid())

        def slowed():
            for item in items:
                if first and item[0] % 2:
                    time.sleep(0.002)
                yield item
        return expand(text, slowed())

    monkeypatch.setattr(workers, "expand", odd_fingerprints_slow)
    monkeypatch.setattr(workers, "STREAM_STATES", 10)
    monkeypatch.setattr(workers, "GIVE_AT", 20)
    spec = job_spec(example_graph("pair"), variant, {"mode": "unaligned", "records": 1, "failures": 1})
    report = WorkersReport(2)
    spread = explore_job_on_workers(spec, workers=2, reduction=reduction, report=report, min_level=50)
    alone = explore_job(job_from_spec(spec), store="fingerprints", reduction=reduction)
    assert report.states_given > 0
    assert (spread.states, spread.transitions) == (alone.states, alone.transitions)
    assert list(spread.graph.parent) == list(alone.graph.parent)
    assert list(spread.graph.targets) == list(alone.graph.targets) and _traces(spread) == _traces(alone)
    assert (_traces(spread) != []) == (variant != "flip-147")
