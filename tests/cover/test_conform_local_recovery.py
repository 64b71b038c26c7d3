"""Task-local recovery against real Flink (issue 25 item 2), on stored runs: no JVM.

The three scenarios of ``flipcheck flink run --local-recovery`` conform, each restoring from the
copy the model says; each altered log is rejected naming the rule it breaks."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from flipcheck.errors import InputError, UsageError
from flipcheck.flink.conform import conform_files, read_run_directory
from flipcheck.flink.conform_local_recovery import conform_local_recovery
from flipcheck.flink.logs import read_logs

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs"
COUNT = "b71731f1c0df9c3076c4a455334d0ad6"   # the keyed "count" vertex's Flink job vertex id


def _local(run: Path):
    return conform_local_recovery(read_logs([str(run / "flink.log")]), read_run_directory(run))


def _altered(name: str, tmp_path: Path, edit) -> Path:
    """A copy of stored run ``name`` whose log lines went through ``edit`` (a line -> line(s))."""
    out = tmp_path / name
    shutil.copytree(RUNS / name, out)
    log = out / "flink.log"
    lines = log.read_text().splitlines(keepends=True)
    changed = [edit(line) for line in lines]
    assert changed != lines, "the alteration changed nothing"
    log.write_text("".join(changed))
    return out


def _restores(result) -> dict[str, str]:
    """Which copy each keyed subtask's restore read, as the model check reports it."""
    detail = next(c.detail for c in result.checks if c.name == "local-recovery-model")
    return dict(re.findall(r"(count\[\d\]) checkpoint \d+ (local copy|primary)", detail))


@pytest.mark.parametrize("name, expected", [
    # A task failure: every subtask restarts in its slot and reads its local copy (A1, P1, P3).
    ("local-recovery-task", {"count[0]": "local copy", "count[1]": "local copy"}),
    # count[1]'s TaskManager is lost: it reads the primary in a fresh slot; count[0] stays local.
    ("local-recovery-taskmanager-loss", {"count[0]": "local copy", "count[1]": "primary"}),
    # Every local file deleted: the local alternative fails and both fall back to the primary.
    ("local-recovery-damaged-copy", {"count[0]": "primary", "count[1]": "primary"}),
    # The same scenario's first run, whose plan.json is empty (see the test below).
    ("local-recovery-empty-plan", {"count[0]": "primary", "count[1]": "primary"}),
    # A TaskManager loss whose discards at the job's end follow their slot's release (below).
    ("local-recovery-discard-after-release", {"count[0]": "local copy", "count[1]": "primary"}),
    # src[1], on the TaskManager being lost, logs its local store of checkpoint 10 after the loss
    # (Flink logs a store before it checks that the store is disposed; below).
    ("local-recovery-store-line-after-taskmanager-loss", {"count[0]": "local copy", "count[1]": "primary"}),
])
def test_a_stored_local_recovery_run_conforms_and_restores_from_the_copy_the_model_says(name, expected):
    result = _local(RUNS / name)
    assert result.conforms, (result.first_unexplained, [c for c in result.checks if not c.ok])
    assert [c.name for c in result.checks] == ["local-recovery-model", "keyed-state", "restored"]
    assert result.first_unexplained is None and result.events > 100
    assert _restores(result) == expected


@pytest.mark.parametrize("name", ["local-recovery-task", "local-recovery-taskmanager-loss", "local-recovery-damaged-copy",
                                  "local-recovery-discard-after-release", "local-recovery-store-line-after-taskmanager-loss"])
def test_a_local_recovery_run_conforms_to_flip_147_too(name):
    result = conform_files(str(RUNS / name / "plan.json"), [str(RUNS / name / "flink.log")])
    assert result.conforms, (result.first_unexplained, [c for c in result.checks if not c.ok])


def test_a_store_line_after_its_taskmanager_was_lost_is_a_late_store_the_model_discards():
    """A real run (make test, 2026-11-26): the fault line that terminates the TaskManager of
    count[1] and src[1] comes first (the model disposes its stores there, L4); src[1]'s snapshot
    of checkpoint 10 is still finishing and its "Stored local state" line follows. Flink logs that
    line before storeLocalState looks at ``disposed`` (2.3.0 bytecode), and the model discards a
    store that comes after the disposal at once (L4): a behaviour of the model. conform asked for
    a live store and rejected the run; the search stays as small as before (one state a line)."""
    run = RUNS / "local-recovery-store-line-after-taskmanager-loss"
    log = (run / "flink.log").read_text().splitlines()
    line = lambda text: next(n for n, t in enumerate(log, 1) if text in t)  # noqa: E731
    lost = line("flipcheck fault lose-taskmanager: terminating TaskManager")
    stored = line("Stored local state for checkpoint 10 in subtask (cefce378265f26fef7e9e5be9dcd8a58 - "
                  "f362c87ffabe89c8a91fa7d0a523ba6c - 1)")
    assert lost < stored
    result = _local(run)
    assert result.conforms, (result.first_unexplained, [c for c in result.checks if not c.ok])
    assert f"({result.events + 1} states)" in result.checks[0].detail


def test_the_empty_plan_is_the_jobs_initializing_placeholder_and_conform_says_so():
    """The finding of the first damaged-copy run: the job builder fetched /jobs/<id>/plan while the
    job was INITIALIZING, when the REST API serves a sparse graph with an empty plan
    (JobMasterServiceLeadershipRunner.requestJob); FlipcheckJob.java now waits for RUNNING."""
    run = RUNS / "local-recovery-empty-plan"
    assert json.loads((run / "plan.json").read_text())["plan"]["nodes"] == []
    with pytest.raises(InputError, match="no nodes"):
        conform_files(str(run / "plan.json"), [str(run / "flink.log")])


def test_a_discard_may_follow_its_stores_disposal():
    """TaskLocalStateStoreImpl.dispose discards the copies it held on the discard executor, after
    the release line: the stored run shows it, and the model explains it (L4)."""
    from flipcheck.flink.conform_local_recovery import observations_of

    observed = [o for o, _ in observations_of(read_logs([str(RUNS / "local-recovery-discard-after-release" / "flink.log")]))]
    slots = {(o[1], o[2]): o[4] for o in observed if o[0] == "deploy"}   # each subtask's latest slot
    released = {o[1]: i for i, o in enumerate(observed) if o[0] == "released"}
    late = [o for i, o in enumerate(observed) if o[0] == "discarded" and released.get(slots[(o[1], o[2])], len(observed)) < i]
    assert late, "no discard after its slot's release: the run no longer shows the case"
    assert _local(RUNS / "local-recovery-discard-after-release").conforms


def test_a_run_without_local_recovery_holds_no_line_of_the_design():
    assert _local(RUNS / "union-state") is None
    assert _local(RUNS / "chain-failover-burned-id") is None


def _rejected(run: Path, rule: str, check: str = "local-recovery-model") -> dict:
    result = _local(run)
    assert not result.conforms
    assert [c.name for c in result.checks if not c.ok] == [check]
    if check == "local-recovery-model":
        assert result.first_unexplained["why"].startswith(rule), result.first_unexplained
        assert result.first_unexplained["file"].endswith("flink.log") and result.first_unexplained["line"] > 0
    return result.first_unexplained


def test_a_local_restore_after_the_taskmanager_was_lost_is_rejected_by_l3(tmp_path):
    """The lost TaskManager took count[1]'s store with it: its new slot's store is empty."""
    lost = f"Did not find registered local state for checkpoint 10 in subtask (c28a8aba57764edc68290a4a061d3710 - {COUNT} - 1)"
    run = _altered("local-recovery-taskmanager-loss", tmp_path,
                   lambda line: line.replace(lost, lost.replace("Did not find", "Found")))
    first = _rejected(run, "L3")
    assert "count[1]" in first["why"] and "holds no copy of checkpoint 10" in first["why"]


def test_two_alternatives_without_a_local_copy_are_rejected_by_p1(tmp_path):
    primary = f"StreamMap_{COUNT}_(2/2) and restoring with state from alternative (1/1)"
    run = _altered("local-recovery-taskmanager-loss", tmp_path,
                   lambda line: line.replace(primary, primary.replace("(1/1)", "(1/2)")))
    assert "no local copy" in _rejected(run, "P1")["why"]


def test_a_restart_into_the_other_subtasks_slot_is_rejected_by_a1(tmp_path):
    """count[0] and count[1] swap slots on the restart after a task failure, as chain-failover-burned-id
    showed with local recovery off: with it on, each must get its own free previous slot."""
    text = (RUNS / "local-recovery-task" / "flink.log").read_text()
    slot = {int(m.group(1)): m.group(2) for m in re.finditer(
        r"Deploying count \((\d)/2\) \(attempt #1\).* with allocation id (\w+)", text)}

    def swap(line: str) -> str:
        if "Deploying count (1/2) (attempt #1)" in line:
            return line.replace(slot[1], slot[2])
        if "Deploying count (2/2) (attempt #1)" in line:
            return line.replace(slot[2], slot[1])
        return line

    first = _rejected(_altered("local-recovery-task", tmp_path, swap), "A1")
    assert "count[0] did not get its free previous slot" in first["why"]


def test_a_local_copy_found_for_a_checkpoint_never_stored_is_rejected_by_l3(tmp_path):
    found = re.compile(rf"(Found registered local state for checkpoint )12( in subtask \(\w+ - {COUNT} - 0\))")
    run = _altered("local-recovery-task", tmp_path, lambda line: found.sub(r"\g<1>99\2", line))
    assert "holds no copy of checkpoint 99" in _rejected(run, "L3")["why"]


def test_a_failed_local_alternative_without_damage_is_rejected_by_p3(tmp_path):
    """Without the fault's lines nothing damaged the copies: the model reads the local alternative."""
    run = _altered("local-recovery-damaged-copy", tmp_path,
                   lambda line: "" if "flipcheck fault damage-local-copy" in line else line)
    assert "which the model reads" in _rejected(run, "P3")["why"]


def test_a_restore_that_reads_a_damaged_copy_is_rejected_by_p3(tmp_path):
    run = _altered("local-recovery-damaged-copy", tmp_path,
                   lambda line: "" if "Exception while restoring keyed state backend" in line
                   or ("restoring with state from alternative (2/2)" in line) else line)
    assert "the model reads alternative 2" in _rejected(run, "P3")["why"]


def test_a_discarded_copy_the_store_keeps_is_rejected_by_l1(tmp_path):
    """A copy is discarded only after the store let it go; checkpoint 12's copy is the one restored."""
    text = (RUNS / "local-recovery-task" / "flink.log").read_text()
    restore_line = next(i for i, line in enumerate(text.splitlines()) if "Found registered local state for checkpoint 12"
                        in line and f"- {COUNT} - 0)" in line)
    discard = (text.splitlines()[restore_line][:24] + " DEBUG org.apache.flink.runtime.state.TaskLocalStateStoreImpl"
               "       [] - Discarding local task state snapshot Optional.empty of checkpoint 12 for subtask "
               f"(dc71920eac863a3c8912fda748063d2a - {COUNT} - 0).\n")
    counter = iter(range(10**6))
    run = _altered("local-recovery-task", tmp_path,
                   lambda line: line + discard if next(counter) == restore_line else line)
    assert "discarded its copy of checkpoint 12" in _rejected(run, "L1")["why"]


def test_a_wrong_keyed_count_after_the_restore_fails_the_keyed_state_check(tmp_path):
    """State lost in the restore: count[0] restarts a key's count at 0, so its block's first id is
    committed twice and its last one never."""
    out = tmp_path / "run"
    shutil.copytree(RUNS / "local-recovery-taskmanager-loss", out)
    file = sorted((out / "output" / "sink" / "committed").iterdir())[-1]
    ids = file.read_text().split()
    ids[-1] = str(int(ids[-1]) // 8 * 8)
    file.write_text("\n".join(ids) + "\n")
    result = _local(out)
    assert not result.conforms and [c.name for c in result.checks if not c.ok] == ["keyed-state"]
    assert "counted wrong after a restore" in next(c.detail for c in result.checks if c.name == "keyed-state")


def test_keyed_state_is_built_only_on_a_keyed_operator():
    from flipcheck.flink.engine import FailAt, job_spec
    from flipcheck.model.graph_json import load_graph

    graph = load_graph("examples/graphs/flink/chain.json")
    bad = graph.__class__(tuple(v.__class__(v.id, v.parallelism, {**v.extra, "keyed_state": v.id == "map"})
                                for v in graph.vertices), graph.edges, graph.states, graph.checkpoints_after_tasks_finished)
    with pytest.raises(UsageError, match="keyed_state needs an operator with one ALL_TO_ALL input"):
        job_spec(bad, out=Path("unused"))
    keyed = load_graph("examples/graphs/flink/keyed.json")
    with pytest.raises(UsageError, match="--lose-taskmanager: needs --local-recovery"):
        job_spec(keyed, out=Path("unused"), fail=FailAt("count", 1, 120, "taskmanager"))
    spec = job_spec(keyed, out=Path("unused"), local_recovery=True, fail=FailAt("count", 1, 120, "damage-local-copy"))
    assert spec["taskmanagers"] == 2 and spec["fail"]["how"] == "damage-local-copy"
    assert [v["keyed_state"] for v in spec["vertices"]] == [False, True, False]


def test_local_recovery_switches_keys_as_each_release_names_them():
    from flipcheck.flink.engine import flink_configuration

    spec = {"interval_ms": 100, "mode": "aligned", "checkpoints_after_tasks_finished": True, "restart_attempts": 3,
            "local_recovery": True, "out": "/tmp/run"}
    new, old = flink_configuration(spec, "2.3.0"), flink_configuration(spec, "1.20.0")
    assert new["execution.state-recovery.from-local"] == new["execution.checkpointing.local-backup.enabled"] == "true"
    assert new["execution.checkpointing.local-backup.dirs"] == "/tmp/run/local-state"
    assert new["execution.checkpointing.storage"] == "filesystem"
    assert new["execution.checkpointing.dir"] == "file:///tmp/run/checkpoints"
    assert old["state.backend.local-recovery"] == "true" and old["taskmanager.state.local.root-dirs"] == "/tmp/run/local-state"
    assert "execution.state-recovery.from-local" not in flink_configuration({**spec, "local_recovery": False}, "2.3.0")


def test_run_json_names_the_designs_a_run_exercised():
    assert json.loads((RUNS / "local-recovery-task" / "run.json").read_text())["designs"] == ["protocol", "local-recovery"]


@pytest.mark.parametrize("argv, message", [
    (["--lose-taskmanager", "count:1@120"], "--lose-taskmanager: needs --local-recovery"),
    (["--damage-local-copy", "count:9@120", "--local-recovery"], "--damage-local-copy: subtask 9 is outside 0..1"),
    (["--fail", "count:1@5", "--lose-taskmanager", "count:1@6"], "not allowed with argument"),
])
def test_bad_fault_options_exit_2_with_one_line(tmp_path, capsys, argv, message):
    from flipcheck.cli import main

    try:
        code = main(["flink", "run", "examples/graphs/flink/keyed.json", "--out", str(tmp_path / "out"), *argv])
    except SystemExit as exit_info:   # argparse's own errors
        code = exit_info.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
