"""Every command against generated hostile input (issue 12).

Each example runs one command in a forked child limited to 2 GB of address space and a wall
timeout (forked_cli.py), and asserts what every input must get: exit code 0, 1 or 2; no
traceback; at most one line on stderr with exit 2; no MemoryError, no kill, no timeout; peak
resident memory under the limit.

Inputs: the example graphs and Flink plans mutated field by field (wrong types, huge,
negative and non-finite numbers, odd unicode with lone surrogates, control and bidi
characters, missing and extra fields, 10,000-deep nesting, truncated or injected bytes,
UTF-16); option values (huge numbers, NaN, digits of other scripts, text a shell can pass);
bad paths (directories, files where directories belong, missing directories, /dev/zero,
/proc). Commands that start Spark or run for minutes (sweep, demo, verify, mutants, bench) are
driven up to the end of their option checks: the function that starts their work is stubbed
(forked_cli.STOPPED).

Budget: FLIPCHECK_FUZZ_EXAMPLES examples per test (default 25, what `make test` runs; `make fuzz`
runs more, randomised).
"""

import json
import os
import shutil
from pathlib import Path

import pytest
from forked_cli import MEMORY_LIMIT, STOPPED
from hostile_strategies import (
    argv_text,
    bad_input_path,
    bad_output_path,
    mutated_json_bytes,
    number_text,
)
from hypothesis import event, given, settings
from hypothesis import strategies as st

from flipcheck.designs.mutants import catalogue
from flipcheck.reference_impl.barriers import HANDLERS
from flipcheck.reference_impl.plan import PLAN_ALGORITHMS
from flipcheck.reference_impl.protocol_variants import PROTOCOLS
from flipcheck.sweep.runner import plan_sweep
from flipcheck.designs import DESIGNS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("FLIPCHECK_FUZZ_EXAMPLES", "25"))
fuzz = settings(max_examples=EXAMPLES, deadline=None)

GRAPHS = {p.name: json.loads(p.read_text()) for p in sorted((ROOT / "examples" / "graphs").glob("*.json"))}
# prove and explore get the small graphs: a mutation can still make them as large as the bounds allow.
SMALL_GRAPHS = [doc for name, doc in GRAPHS.items() if name.startswith(("protocol-", "figure1", "pipeline-10."))]
FLINK_PLANS = [json.loads(p.read_text()) for p in sorted((ROOT / "tests" / "fixtures" / "flink_plans").glob("*.json"))]

# The functions that start the real work of the long-running commands.
HEAVY_WORK = ("flipcheck.sweep.runner:run_sweep", "flipcheck.sweep.spark:start_spark", "flipcheck.designs:verify_design",
              "flipcheck.designs.mutants:hunt", "flipcheck.bench.plan:bench_plan", "flipcheck.bench.sweep:bench_sweep",
              "flipcheck.properties.barriers_explore:explore_model", "flipcheck.properties.protocol_explore:explore_job",
              "flipcheck.parallel_explore.workers:explore_job_on_workers")


def assert_survives(result):
    """What every input must get, whatever it is."""
    event(f"exit {result.code}" + (" (stopped before work)" if STOPPED in result.err else ""))
    assert not result.timed_out, f"timed out\n{result.describe()}"
    assert result.signal is None, f"killed by signal {result.signal}\n{result.describe()}"
    assert result.code in (0, 1, 2), result.describe()
    assert "Traceback" not in result.err and "MemoryError" not in result.err, result.describe()
    if result.code == 2:
        assert len(result.err.splitlines()) <= 1, result.describe()
    assert result.peak_mb * 1024**2 < MEMORY_LIMIT, result.describe()


def option(name, values):
    """``[name, value]`` or nothing."""
    return st.one_of(st.just([]), values.map(lambda value: [name, value]))


def required(name, values):
    """``[name, value]``, now and then missing."""
    return mostly(values.map(lambda value: [name, value]), st.just([]))


def flag(name):
    return st.sampled_from([[], [name]])


def mostly(valid, hostile):
    """Seven valid values to one hostile one: with several options in one command line, most
    examples then still get past the option checks into the work."""
    return st.sampled_from(range(8)).flatmap(lambda k: hostile if k == 7 else valid)


def valid_or_hostile(valid):
    return mostly(st.sampled_from(valid), argv_text)


def count(valid_high):
    return mostly(st.integers(0, valid_high).map(str), number_text)


@st.composite
def argv(draw, head, *parts):
    """``head`` followed by the drawn option lists in a drawn order."""
    drawn = [draw(part) for part in parts]
    order = draw(st.permutations(range(len(drawn))))
    return [*head, *(token for n in order for token in drawn[n])]


def write(sandbox, name, data: bytes) -> str:
    path = os.path.join(sandbox, name)
    with open(path, "wb") as handle:
        handle.write(data)
    return name


algorithm = option("--algorithm", valid_or_hostile(sorted(PLAN_ALGORITHMS)))

GRAPH_COMMANDS = {
    "plan": lambda g: argv(["plan", g], algorithm, flag("--json"), st.sampled_from([[], ["figure1.json"]])),
    "prove": lambda g: argv(["prove", g], algorithm, option("--states", valid_or_hostile(["binary", "all"])),
                            flag("--no-shrink"), option("--render", bad_output_path)),
    "explore": lambda g: argv(["explore", g], st.integers(1, 30).map(lambda n: ["--max-states", str(n)]),
                              option("--mode", valid_or_hostile(["aligned", "unaligned", "at-least-once"])),
                              option("--records", count(3)), option("--checkpoints", count(2)),
                              option("--failures", count(1)), flag("--stop-with-savepoint"), flag("--json"),
                              option("--variant", valid_or_hostile(list(PROTOCOLS))), option("--render", bad_output_path)),
    "render": lambda g: argv(["render", g], required("--out", mostly(st.just("x.svg"), bad_output_path)), algorithm, flag("--compare"),
                             option("--title", argv_text)),
}
TIMEOUTS = {"prove": 150, "explore": 90}


@pytest.mark.parametrize("command", list(GRAPH_COMMANDS))
@fuzz
@given(data=st.data())
def test_graph_commands_survive_mutated_graphs(command, data, cli, sandbox):
    (Path(sandbox) / "figure1.json").write_text(json.dumps(GRAPHS["figure1.json"]))
    documents = SMALL_GRAPHS if command in ("prove", "explore") else list(GRAPHS.values())
    graph = write(sandbox, "g.json", data.draw(mutated_json_bytes(documents), label="graph bytes"))
    args = data.draw(GRAPH_COMMANDS[command](graph), label="argv")
    assert_survives(cli.run(args, cwd=sandbox, timeout=TIMEOUTS.get(command, 60)))


@fuzz
@given(plan=mutated_json_bytes(FLINK_PLANS), chain=st.booleans())
def test_import_plan_survives_mutated_flink_plans_and_its_output_is_a_graph(plan, chain, cli, sandbox):
    path = write(sandbox, "flink.json", plan)
    result = cli.run(["import-plan", *(["--chain"] if chain else []), path], cwd=sandbox)
    assert_survives(result)
    if result.code == 0:  # what import-plan writes, plan reads
        write(sandbox, "imported.json", result.out.encode("utf-8", "surrogateescape"))
        planned = cli.run(["plan", "imported.json"], cwd=sandbox)
        assert_survives(planned)
        assert planned.code == 0, planned.describe()


CONFORM_RUN = ROOT / "tests" / "fixtures" / "flink_runs" / "union-state"
CONFORM_LINES = (CONFORM_RUN / "flink.log").read_bytes().splitlines(keepends=True)


@st.composite
def mutated_log(draw):
    """A real Flink log with lines dropped, repeated, moved or replaced by generated bytes."""
    lines = list(CONFORM_LINES[draw(st.integers(0, 200)):])
    for _ in range(draw(st.integers(0, 6))):
        where = draw(st.integers(0, max(len(lines) - 1, 0)))
        action = draw(st.sampled_from(["drop", "repeat", "move", "replace"]))
        if not lines:
            break
        if action == "drop":
            del lines[where]
        elif action == "repeat":
            lines.insert(where, lines[where])
        elif action == "move":
            lines.insert(draw(st.integers(0, len(lines) - 1)), lines.pop(where))
        else:
            lines[where] = draw(st.binary(max_size=120)) + b"\n"
    return b"".join(lines[:draw(st.integers(0, len(lines)))])


@fuzz
@given(log=mutated_log(), plan=mostly(st.just((CONFORM_RUN / "plan.json").read_bytes()),
                                      mutated_json_bytes([json.loads((CONFORM_RUN / "plan.json").read_text()), *FLINK_PLANS])),
       data=st.data())
def test_conform_survives_mutated_logs_and_plans(log, plan, data, cli, sandbox):
    args = data.draw(argv(["conform"], st.just([write(sandbox, "flink.log", log)]),
                          st.just(["--plan", write(sandbox, "plan.json", plan)]),
                          option("--protocol", valid_or_hostile(sorted(PROTOCOLS))), flag("--json"),
                          option("--mode", valid_or_hostile(["aligned", "unaligned", "at-least-once"])),
                          option("--budget", mostly(st.sampled_from(["1000", "20000"]), number_text))), label="argv")
    assert_survives(cli.run(args, cwd=sandbox, timeout=120))


number = mostly(st.integers(1, 3).map(str), number_text)
channel = mostly(st.integers(0, 3).map(str), number_text)
barrier_event = st.one_of(
    st.tuples(st.sampled_from("BBBCA"), number, channel).map(lambda t: f"{t[0]}{t[1]}@{t[2]}"),
    st.tuples(st.sampled_from("EDDD"), channel).map(lambda t: f"{t[0]}@{t[1]}"),
    number.map(lambda n: f"T{n}"),
    st.just("TIMEOUT"),
)


@st.composite
def barrier_trace(draw, channels):
    """A trace the model can replay (data, then barriers of increasing ids on every channel, then
    EndOfPartition), with now and then a token replaced by a generated one."""
    tokens = []
    for checkpoint in range(1, draw(st.integers(1, 3)) + 1):
        for channel in draw(st.permutations(range(channels))):
            tokens += [f"D@{channel}"] * draw(st.integers(0, 1)) + [f"B{checkpoint}@{channel}"]
    tokens += [f"E@{channel}" for channel in range(draw(st.integers(0, channels)))]
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        tokens[draw(st.integers(0, len(tokens) - 1))] = draw(st.one_of(barrier_event, argv_text))
    return tokens


@fuzz
@given(channels=st.integers(1, 4), data=st.data())
def test_barriers_survives_generated_event_traces(channels, data, cli, sandbox):
    args = data.draw(argv(["barriers"], barrier_trace(channels),
                          mostly(st.just(["--channels", str(channels)]), option("--channels", number_text)),
                          mostly(st.sampled_from(["aligned", "unaligned", "at-least-once"]).map(lambda m: ["--mode", m]),
                                 option("--mode", argv_text)),
                          option("--alignment-timeout", count(3)), flag("--no-checkpoints-after-tasks-finished"),
                          flag("--json"), option("--handler", valid_or_hostile(["model", *sorted(HANDLERS)])),
                          option("--render", bad_output_path)), label="argv")
    assert_survives(cli.run(args, cwd=sandbox))


output_dir = mostly(st.sampled_from(["out", "out/nested"]), bad_output_path)
budget = option("--budget", mostly(st.sampled_from(["0.1", "1", "5"]), number_text))
SUITE_NAMES = list(DESIGNS)
OPTION_COMMANDS = {
    "bench": argv(["bench"], st.lists(valid_or_hostile(["plan", "barriers", "explore", "sweep"]), min_size=1, max_size=1),
                  option("--algorithms", valid_or_hostile(["flink,naive", "wiki-a", ",", "spec,,flink"])), budget,
                  flag("--json"), option("--repeat", count(3)),
                  option("--suites", valid_or_hostile(["plan,barriers", "plan", ","]))),
    "verify": argv(["verify"], required("--suite", valid_or_hostile(SUITE_NAMES)), budget,
                   option("--variant", valid_or_hostile(["wiki-b", "eop-not-aligned", "flink"])), flag("--json"),
                   option("--out", output_dir)),
    "mutants": argv(["mutants"], budget, st.lists(option("--only", valid_or_hostile(list(catalogue())[:5])), max_size=2)
                    .map(lambda lists: [t for tokens in lists for t in tokens]),
                    option("--suite", valid_or_hostile(SUITE_NAMES)), option("--gallery", output_dir),
                    flag("--json")),
    "sweep": argv(["sweep"], required("--suite", valid_or_hostile([*SUITE_NAMES, "all"])),
                  st.one_of(option("--algorithm", valid_or_hostile(["flink", "wiki-b"])),
                            option("--variant", valid_or_hostile(["wiki-b", "eop-not-aligned"]))),
                  st.one_of(st.tuples(count(1000), valid_or_hostile(["1", "x"])).map(lambda c: ["--cases", c[0], "--seed", c[1]]),
                            st.tuples(option("--max-vertices", count(4)), option("--max-parallelism", count(3)))
                            .map(lambda bounds: ["--exhaustive", *bounds[0], *bounds[1]]),
                            st.sampled_from([["--exhaustive", "--cases", "5"], [], ["--cases", "5", "--max-vertices", "3"]])),
                  option("--conf", mostly(st.just("spark.x=1"), st.one_of(argv_text, st.sampled_from(["spark.", "=", "x=y"])))),
                  option("--batch-size", count(100)), required("--out", output_dir)),
    "demo": argv(["demo"], option("--out", output_dir), option("--cases", count(1000)),
                 option("--seed", valid_or_hostile(["1", "demo"])),
                 option("--max-vertices", count(5)), option("--max-parallelism", count(3))),
}


@pytest.mark.parametrize("command", list(OPTION_COMMANDS))
@fuzz
@given(data=st.data())
def test_long_running_commands_check_their_options_before_any_work(command, data, cli, sandbox):
    result = cli.run(data.draw(OPTION_COMMANDS[command], label="argv"), cwd=sandbox, timeout=60, stop_at=HEAVY_WORK)
    assert_survives(result)
    if STOPPED in result.err:  # the options passed: nothing may have been refused before
        assert result.err.splitlines()[-1] == STOPPED, result.describe()


case_id = st.one_of(
    st.tuples(valid_or_hostile([*SUITE_NAMES, "plan"]), st.one_of(st.integers(0, 3).map(str), argv_text),
              st.one_of(st.integers(0, 50).map(str), number_text)).map(":".join),
    argv_text,
)


@fuzz
@given(args=argv(["replay"], case_id.map(lambda c: [c]),
                 st.one_of(option("--algorithm", valid_or_hostile(["flink", "wiki-b"])),
                           option("--variant", valid_or_hostile(["eop-not-aligned", "wiki-b-trigger"]))),
                 st.sampled_from([["--no-render"], ["--no-render"], []]), option("--render", bad_output_path),
                 flag("--minimise"), flag("--json")))
def test_replay_survives_generated_case_ids(args, cli, sandbox):
    assert_survives(cli.run(args, cwd=sandbox, timeout=90))


RESUME = ["sweep", "--suite", "plan", "--cases", "1000", "--seed", "1", "--batch-size", "10", "--out", "resume"]
MANIFEST = plan_sweep(["plan"], None, cases=1000, seed="1", batch_size=10).manifest()


@fuzz
@given(manifest=mutated_json_bytes([MANIFEST]), marker=st.one_of(st.none(), mutated_json_bytes([{"violations": 0}])),
       chunk=st.sampled_from(["chunk=00000", "chunk=00012", "chunk=00013", "chunk=abc", "chunk=\u0661", "chunk=",
                              "chunk=99999999999999999999"]))
def test_sweep_resume_survives_a_damaged_sweep_directory(manifest, marker, chunk, cli, sandbox):
    """A sweep directory is the sweep's own log (manifest, committed-chunk markers): a damaged
    one is refused in one line before Spark starts."""
    out = Path(sandbox) / "resume"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    (out / "manifest.json").write_bytes(manifest)
    if marker is not None:
        (out / "cases.parquet" / chunk).mkdir(parents=True)
        (out / "cases.parquet" / chunk / "_chunk.json").write_bytes(marker)
    assert_survives(cli.run(RESUME, cwd=sandbox, timeout=60, stop_at=("flipcheck.sweep.spark:start_spark",)))


COMMANDS = ["plan", "prove", "barriers", "explore", "render", "import-plan", "bench", "verify", "mutants", "sweep",
            "replay", "demo", "no-such-command"]
TOKENS = st.one_of(argv_text, number_text, bad_input_path, bad_output_path, st.sampled_from(
    ["--json", "--help", "--out", "--render", "--channels", "--mode", "--budget", "--records", "--max-states", "--suite",
     "--cases", "--algorithm", "--variant", "--only", "--gallery", "--no-render", "--chain", "--states", "=", "-",
     "--", "-h", "protocol-pair.json", "B1@0", "E@1", "plan:1:1"]))


@fuzz
@given(command=st.sampled_from(COMMANDS), tokens=st.lists(TOKENS, max_size=6))
def test_any_command_line_gets_an_answer(command, tokens, cli, sandbox):
    (Path(sandbox) / "protocol-pair.json").write_text(json.dumps(GRAPHS["protocol-pair.json"]))
    # explore may search without --max-states here: its search is stubbed, its set-up is not.
    assert_survives(cli.run([command, *tokens], cwd=sandbox, timeout=90, stop_at=HEAVY_WORK))


FILE_READERS = {
    "plan": lambda path: ["plan", path],
    "prove": lambda path: ["prove", path],
    "explore": lambda path: ["explore", path, "--max-states", "5"],
    "render": lambda path: ["render", path, "--out", "x.svg"],
    "import-plan": lambda path: ["import-plan", path],
}


@pytest.mark.parametrize("command", list(FILE_READERS))
@fuzz
@given(path=bad_input_path)
def test_bad_input_paths_are_one_line_errors(command, path, cli, sandbox):
    result = cli.run(FILE_READERS[command](path), cwd=sandbox)
    assert_survives(result)
    assert result.code == 2, result.describe()
