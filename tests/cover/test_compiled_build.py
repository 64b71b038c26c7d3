"""The optional mypyc build (flipcheck/compiled.py, docs/compiled.md) explores exactly what the
pure-Python modules explore: the same counts, violations and trace lengths, a variant's override
of a switch honoured, and the pinned counts unchanged. Each comparison explores in fresh
processes (flipcheck.bench.builds), once with FLIPCHECK_PURE_PYTHON=1; the tests that need the
compiled modules skip, naming what is missing, where none were built."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import manifest
from flipcheck.bench.builds import measure_in_fresh_process
from flipcheck.compiled import (COMPILED_MODULES, PURE_PYTHON_VARIABLE, RECORD_REPLACE_MODULE, active_modules,
                                stale_sources)
from flipcheck.flink.suite import alter_run

ROOT = Path(__file__).resolve().parents[2]


def _compiler() -> str | None:
    return shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0])


def _missing_build() -> str | None:
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return f"{PURE_PYTHON_VARIABLE} is set"
    if _compiler() is None:
        return "no C compiler"
    if len(active_modules()) != len(COMPILED_MODULES):
        return "no compiled build in build/compiled (make install; needs mypy)"
    return None


needs_compiled = pytest.mark.skipif(_missing_build() is not None, reason=f"compiled build: {_missing_build()}")


def _config(graph: str, mode: str, records, checkpoints: int, failures: int, **more) -> dict:
    return {"graph": graph, "mode": mode, "records": records, "checkpoints": checkpoints, "failures": failures,
            "stop_with_savepoint": False, **more}


def _verdict(run: dict) -> tuple:
    return run["states"], run["transitions"], run["complete"], run["violated"], run["trace_lengths"]


def test_pure_python_variable_turns_the_compiled_build_off():
    env = {**os.environ, PURE_PYTHON_VARIABLE: "1"}
    done = subprocess.run([sys.executable, "-m", "flipcheck.cli", "--version"], env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == f"flipcheck 0.1.0, pure Python ({PURE_PYTHON_VARIABLE} is set)"


def test_without_a_c_compiler_one_line_says_the_explorer_runs_uncompiled():
    """A fresh clone on a machine without cc/gcc still installs: the build step says so and succeeds."""
    env = {**os.environ, "PATH": "/nonexistent"}   # neither cc nor gcc; the interpreter's path is absolute
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_compiled.py")], env=env,
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0
    assert done.stdout.splitlines() == [done.stdout.strip()] and done.stderr == ""
    assert "no C compiler" in done.stdout and done.stdout.strip().endswith("the explorer runs uncompiled (pure Python)")


def test_the_switches_variants_override_stay_interpreted():
    """Compiled, switches.py ignored the class attributes variants override (issue 27)."""
    assert "flipcheck.model.protocol.switches" not in COMPILED_MODULES
    assert all(name.startswith(("flipcheck.model.protocol.", "flipcheck.properties.", "flipcheck.parallel_explore."))
               or name == RECORD_REPLACE_MODULE for name in COMPILED_MODULES)


@pytest.mark.skipif(os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0") or _compiler() is None,
                    reason=f"no C compiler, or {PURE_PYTHON_VARIABLE} is set")
def test_where_a_compiler_and_mypy_are_present_the_explorer_runs_compiled():
    """make install builds it there; a build that failed or went stale would silently cost the
    speed and the compiled-build coverage below, so it fails here instead."""
    pytest.importorskip("mypyc", reason="mypy (the compiled extra) is not installed")
    assert stale_sources() == [], "the compiled build is missing or older than these sources: run make install"
    assert active_modules() == COMPILED_MODULES


# cancel-pending-on-finish overrides class attributes of Protocol (switches.py): compiled with early
# binding, a switch would keep the base class's value and the variant would explore the correct
# protocol's graph without a violation (issue 27 measured this). Compared with the pure build and
# with the correct protocol.
@needs_compiled
def test_a_variants_override_is_honoured_by_the_compiled_build():
    configs = [_config("pair", "aligned", 1, 1, 0, variant="cancel-pending-on-finish"), _config("pair", "aligned", 1, 1, 0)]
    compiled, pure = measure_in_fresh_process(configs, pure=False), measure_in_fresh_process(configs, pure=True)
    assert [run["compiled_modules"] for run in compiled] == [len(COMPILED_MODULES)] * 2
    assert [run["compiled_modules"] for run in pure] == [0, 0]
    assert [_verdict(run) for run in compiled] == [_verdict(run) for run in pure]
    changed, correct = compiled
    assert changed["states"] != correct["states"]
    assert "final_checkpoint_before_finish" in changed["violated"] and correct["violated"] == []


@needs_compiled
def test_pinned_counts_hold_under_the_compiled_build():
    pinned = [manifest.entry("protocol", _config("pair", "aligned", 2, 1, 1), model="flip-147", check="properties"),
              manifest.entry("protocol", _config("pair", "unaligned", 1, 1, 2), model="flip-147", check="properties")]
    compiled = measure_in_fresh_process([e["config"] for e in pinned], pure=False)
    assert [run["states"] for run in compiled] == [e["distinct_states"] for e in pinned]
    assert [run["transitions"] for run in compiled] == [e["transitions"] for e in pinned]
    assert all(run["violated"] == [] and run["complete"] for run in compiled)


@needs_compiled
def test_symmetry_and_stubborn_sets_explore_the_same_graph_compiled():
    """protocol_symmetry and protocol_reduction run compiled too; compiled, a variable mypy typed
    too narrowly raised TypeError in the stubborn-set search until it was annotated."""
    config = [_config("diamond", "aligned", 1, 1, 0, reduction="all")]
    assert _verdict(measure_in_fresh_process(config, pure=False)[0]) == \
        _verdict(measure_in_fresh_process(config, pure=True)[0])


def _conform_in_fresh_process(run: Path, pure: bool) -> dict:
    env = {**os.environ, PURE_PYTHON_VARIABLE: "1" if pure else "0"}
    done = subprocess.run([sys.executable, "-m", "flipcheck.cli", "conform", "--json", "--plan", str(run / "plan.json"),
                           str(run / "flink.log")], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


# conform's search (protocol_trace_validation) runs compiled too: the same verdict, first
# unexplained line, why and states searched in both builds, on a run that conforms after a
# failover and on a log altered to be rejected.
@needs_compiled
def test_conform_finds_the_same_compiled(tmp_path):
    runs = ROOT / "tests" / "fixtures" / "flink_runs"
    alter_run(runs / "union-state", "late-ack-deleted", tmp_path / "altered")
    for run in (runs / "chain-failover-burned-id", tmp_path / "altered"):
        compiled, pure = _conform_in_fresh_process(run, pure=False), _conform_in_fresh_process(run, pure=True)
        assert compiled == pure
    assert compiled["conforms"] is False and compiled["first_unexplained"]["why"].startswith("C5")


@needs_compiled
def test_bench_builds_repeats_pairs_in_alternating_order_and_reports_the_median_pairs_ratio(capsys):
    """``bench explore --builds --repeat 3``: three pairs per configuration, pure first, then
    compiled first, then pure first; the ratio printed is the middle of the three."""
    from flipcheck.cli import main

    code = main(["bench", "explore", "--builds", "--budget", "0.1", "--repeat", "3", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    measured = [row for row in rows if "ratios" in row]
    assert code == 0 and measured, rows
    for row in measured:
        assert row["pairs"] == 3 and len(row["ratios"]) == 3 and row["ratios"] == sorted(row["ratios"])
        assert row["ratio"] == row["ratios"][1] and row["same_verdict"] is True
    # --budget counts every pair: a configuration is skipped when 3 x its pinned seconds exceeds it
    from flipcheck.bench.builds import pinned_configurations
    pinned = pinned_configurations()
    assert [row["config"] for row in measured] == [config for config, seconds in pinned if 3 * seconds <= 0.1]
    assert [row["skipped_pinned_seconds"] for row in rows if "ratios" not in row] == [
        seconds for _, seconds in pinned if 3 * seconds > 0.1]
