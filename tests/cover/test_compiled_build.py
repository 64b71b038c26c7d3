"""The optional mypyc build (flipcheck/compiled.py, docs/compiled.md) explores exactly what the
pure-Python modules explore: the same counts, violations and trace lengths, a variant's override
of a switch honoured, and the pinned counts unchanged. Each comparison runs
scripts/compare_builds.py twice in fresh processes, once with FLIPCHECK_PURE_PYTHON=1; the tests
that need the compiled modules skip, naming what is missing, where none were built."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import manifest
from flipcheck.compiled import COMPILED_MODULES, PURE_PYTHON_VARIABLE, active_modules

ROOT = Path(__file__).resolve().parents[2]
COMPARE = ROOT / "scripts" / "compare_builds.py"


def _missing_build() -> str | None:
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return f"{PURE_PYTHON_VARIABLE} is set"
    if shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is None:
        return "no C compiler"
    if len(active_modules()) != len(COMPILED_MODULES):
        return "no compiled build in build/compiled (run scripts/build_compiled.py; needs mypy)"
    return None


needs_compiled = pytest.mark.skipif(_missing_build() is not None, reason=f"compiled build: {_missing_build()}")


def _explore(configs: list[str], pure: bool) -> list[dict]:
    env = dict(os.environ)
    env.pop(PURE_PYTHON_VARIABLE, None)
    if pure:
        env[PURE_PYTHON_VARIABLE] = "1"
    done = subprocess.run([sys.executable, str(COMPARE), *configs], env=env, capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return [json.loads(line) for line in done.stdout.splitlines()]


def _verdict(run: dict) -> tuple:
    return run["states"], run["transitions"], run["violated"], run["trace_lengths"]


def test_pure_python_variable_turns_the_compiled_build_off():
    env = {**os.environ, PURE_PYTHON_VARIABLE: "1"}
    done = subprocess.run([sys.executable, "-m", "flipcheck.cli", "--version"], env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == f"flipcheck 0.1.0, pure Python ({PURE_PYTHON_VARIABLE} is set)"


def test_the_switches_variants_override_stay_interpreted():
    """Compiled, switches.py ignored the class attributes variants override (issue 27)."""
    assert "flipcheck.model.protocol.switches" not in COMPILED_MODULES
    assert all(name.startswith(("flipcheck.model.protocol.", "flipcheck.properties.")) for name in COMPILED_MODULES)


@needs_compiled
def test_a_variants_override_is_honoured_by_the_compiled_build():
    configs = ["pair:aligned:1:1:0:cancel-pending-on-finish", "pair:aligned:1:1:0"]
    compiled, pure = _explore(configs, pure=False), _explore(configs, pure=True)
    assert [run["compiled_modules"] for run in compiled] == [len(COMPILED_MODULES)] * 2
    assert [run["compiled_modules"] for run in pure] == [0, 0]
    assert [_verdict(run) for run in compiled] == [_verdict(run) for run in pure]
    variant, correct = compiled
    # the override took effect: the variant explores another graph and is caught
    assert variant["states"] != correct["states"]
    assert "final_checkpoint_before_finish" in variant["violated"] and correct["violated"] == []


@needs_compiled
def test_pinned_counts_hold_under_the_compiled_build():
    pinned = [manifest.entry("protocol", {"graph": "pair", "mode": "aligned", "records": 2, "checkpoints": 1,
                                          "failures": 1, "stop_with_savepoint": False}, model="flip-147", check="properties"),
              manifest.entry("protocol", {"graph": "pair", "mode": "unaligned", "records": 1, "checkpoints": 1,
                                          "failures": 2, "stop_with_savepoint": False}, model="flip-147", check="properties")]
    configs = [":".join(str(e["config"][k]) for k in ("graph", "mode", "records", "checkpoints", "failures"))
               for e in pinned]
    compiled = _explore(configs, pure=False)
    assert [run["states"] for run in compiled] == [e["distinct_states"] for e in pinned]
    assert all(run["violated"] == [] for run in compiled)


@needs_compiled
def test_symmetry_and_stubborn_sets_explore_the_same_graph_compiled():
    """protocol_symmetry and protocol_reduction run compiled too; compiled, a variable mypy typed
    too narrowly raised TypeError in the stubborn-set search until it was annotated."""
    config = ["diamond:aligned:1:1:0:flip-147:all"]
    assert _verdict(_explore(config, pure=False)[0]) == _verdict(_explore(config, pure=True)[0])
