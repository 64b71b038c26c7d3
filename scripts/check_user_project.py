#!/usr/bin/env python3
"""The packaging check `make test` runs last: flipcheck as a user gets it, from a wheel.

It builds a wheel of flipcheck, installs it with its dependencies and the example user project
(examples/user-project) into a clean virtualenv outside the repository, runs that project's
tests from a copy outside the repository, and checks the outcome: the buggy protocol's tests
fail with flipcheck's full report, the refactoring's tests pass, and the replay command the
report prints reproduces the violation through the installed `flipcheck` command. A file missing
from the wheel, an undeclared dependency, a lost pytest11 entry point or a report that lost a
part fails it with one line.

    python scripts/check_user_project.py [--keep]

Needs only Python 3.11 with `build` (the `test` extra) and pip access to PyPI (or a warm pip
cache); graphviz's dot is optional (without it the report must say the picture was not drawn).
Everything it writes goes to one temporary folder, removed at the end (kept on failure, or with
--keep).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "user-project"
# The example's test files: every test of the first must fail, every test of the second pass.
BUGGY_TESTS, REFACTORING_TESTS = "tests/test_buggy.py", "tests/test_refactoring.py"
# Never copied: version control, virtualenvs, build leftovers, caches, run output.
IGNORED = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
                                 ".pytest_cache", ".hypothesis", "out")
NAME = "check_user_project"


class Mismatch(Exception):
    """What did not come out as expected: one line."""


def main() -> int:
    keep = "--keep" in sys.argv[1:]
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="flipcheck-user-project-"))
    try:
        # The whole point is that nothing of the checkout is visible: refuse a TMPDIR inside it.
        if scratch.resolve().is_relative_to(REPO):
            raise Mismatch(f"the temporary folder {scratch} is inside the repository; set TMPDIR elsewhere")
        run_checks(scratch, started)
    except Mismatch as problem:
        print(f"{NAME}: FAILED: {problem} (files kept in {scratch})", file=sys.stderr)
        return 1
    if keep:
        print(f"{NAME}: files kept in {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def run_checks(scratch: Path, started: float) -> None:
    env = clean_environment(scratch / "venv")

    # 1. The wheel, built from a pristine copy of the source: a build in the checkout would reuse
    #    stale files from its build/ folder (a module deleted from the source would still ship)
    #    and leave root-owned build/ and *.egg-info behind when CI runs as root.
    source = scratch / "source"
    shutil.copytree(REPO, source, ignore=IGNORED)
    shutil.rmtree(source / "examples" / "user-project")  # not part of flipcheck; copied on its own below
    step("build the wheel", [sys.executable, "-m", "build", "--wheel", "--outdir", str(scratch / "dist"), str(source)],
         env=env, timeout=900)
    wheels = sorted((scratch / "dist").glob("flipcheck-*.whl"))
    if len(wheels) != 1:
        raise Mismatch(f"python -m build made {len(wheels)} flipcheck wheels, not 1")
    wheel = wheels[0]

    # 2. Every file of the folders pyproject.toml maps to packages is in the wheel, and so are the
    #    console script and the pytest11 entry point: a subpackage or data file left out of
    #    pyproject.toml fails here by name, before anything imports it.
    check_wheel_contents(wheel)

    # 3. A clean virtualenv outside the repository, with the wheel (and its dependencies from
    #    PyPI) and a copy of the example project, both installed normally (not editable): the
    #    way a user's CI gets them.
    venv = scratch / "venv"
    step("create a clean virtualenv", [sys.executable, "-m", "venv", str(venv)], env=env, timeout=300)
    python = venv / "bin" / "python"
    project = scratch / "user-project"
    shutil.copytree(EXAMPLE, project, ignore=IGNORED)
    step("install the wheel and the example project",
         [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel), str(project)],
         env=env, timeout=1800)

    # 4. Inside that virtualenv, every flipcheck module imports (an undeclared dependency fails)
    #    from site-packages, never from the checkout, the example graphs are there, and pytest
    #    finds the plugin through its entry point.
    installed = venv_facts(python, project, env)

    # 5. The example's tests, run from its copy (so no conftest or source of the repository is
    #    on sys.path), against the installed flipcheck; the junit file gives each test's outcome.
    junit = scratch / "junit.xml"
    tests = subprocess.run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "--basetemp", str(scratch / "pytest"),
                            f"--junitxml={junit}"], cwd=project, env=env, capture_output=True, text=True, timeout=900)
    print(tests.stdout, end="")  # the example's failure report, for the CI log
    print(tests.stderr, end="", file=sys.stderr)
    reports = check_outcomes(junit, tests.returncode)

    # 6. The report: property, shortest counterexample with numbered steps, picture, replay; and
    #    the replay command, run through the installed `flipcheck`, reproduces the violation.
    for test, report in reports.items():
        prop, replay = check_report(test, report, installed["properties"], env)
        check_replay(test, prop, replay, project, venv, env)

    print(f"{NAME}: ok: {wheel.name} installed in a clean virtualenv; {len(installed['modules'])} flipcheck modules "
          f"from site-packages; the example's bug failed with a full report ({', '.join(reports)}), its refactoring "
          f"passed, and the replay reproduced it ({time.monotonic() - started:.0f} s)")


def clean_environment(venv: Path) -> dict:
    """The environment of every command: nothing that could put the checkout (or a session's
    shim) on sys.path, no user site-packages, and the clean virtualenv's bin first on PATH."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "PYTHONSAFEPATH")}
    env["PYTHONNOUSERSITE"] = "1"
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def step(what: str, command: list[str], env: dict, timeout: int, cwd: Path | None = None) -> str:
    """Run ``command``; a non-zero exit is a mismatch naming ``what`` (its output's tail printed)."""
    done = time.monotonic()
    try:
        result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Mismatch(f"{what}: no result after {timeout} s") from None
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-25:]
        print("\n".join(tail), file=sys.stderr)
        raise Mismatch(f"{what}: exit {result.returncode} ({shlex.join(command[:4])} ...)")
    print(f"{NAME}: {what} ({time.monotonic() - done:.1f} s)")
    return result.stdout


def check_wheel_contents(wheel: Path) -> None:
    settings = tomllib.loads((REPO / "pyproject.toml").read_text())
    folders = settings["tool"]["setuptools"]["package-dir"]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next((archive.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt")), "")
    missing = []
    for package, folder in folders.items():
        root = REPO / folder
        for path in sorted(root.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            inside = "/".join((*package.split("."), *path.relative_to(root).parts))
            if inside not in names:
                missing.append(f"{path.relative_to(REPO)} (as {inside})")
    if missing:
        raise Mismatch(f"the wheel lacks {len(missing)} file(s) of its packages, e.g. {missing[0]}: "
                       f"list the folder in [tool.setuptools] packages / package-data of pyproject.toml")
    for section, line in (("[console_scripts]", "flipcheck = flipcheck.cli:main"),
                          ("[pytest11]", "flipcheck = flipcheck.pytest_plugin")):
        if not re.search(re.escape(section) + r"[^\[]*^" + re.escape(line) + "$", entry_points, re.M):
            raise Mismatch(f"the wheel's entry_points.txt lacks {section} {line}")
    print(f"{NAME}: {wheel.name}: every file of {len(folders)} package folders, the flipcheck command and the "
          f"pytest11 entry point are in it")


# Runs inside the clean virtualenv; prints one JSON object.
VENV_FACTS = r"""
import importlib, importlib.metadata, json, pkgutil, sys, sysconfig
from pathlib import Path
site = Path(sysconfig.get_paths()["purelib"]).resolve()
repo = Path(sys.argv[1]).resolve()
leaks = [p for p in sys.path if p and Path(p).resolve().is_relative_to(repo)]
import flipcheck
modules = ["flipcheck"] + [info.name for info in pkgutil.walk_packages(flipcheck.__path__, "flipcheck.")
                           if not info.name.endswith("__main__")]
outside = []
for name in modules + ["my_checkpointing", "my_checkpointing.protocols"]:
    module = importlib.import_module(name)
    where = getattr(module, "__file__", None)
    if where is None or not Path(where).resolve().is_relative_to(site):
        outside.append(f"{name} from {where}")
from flipcheck.data import example_graphs
graphs = example_graphs()
plugins = [e.value for e in importlib.metadata.entry_points(group="pytest11") if e.name == "flipcheck"]
from flipcheck.properties.protocol_properties import JOB_PROPERTIES
print(json.dumps({"leaks": leaks, "outside": outside, "modules": modules, "plugins": plugins,
                  "graphs": str(graphs), "graphs_in_site": graphs.resolve().is_relative_to(site),
                  "graph_files": len(list(graphs.glob("*.json"))), "properties": sorted(JOB_PROPERTIES)}))
"""


def venv_facts(python: Path, project: Path, env: dict) -> dict:
    output = step("import every flipcheck module in the clean virtualenv", [str(python), "-c", VENV_FACTS, str(REPO)],
                  env=env, timeout=300, cwd=project)
    facts = json.loads(output.strip().splitlines()[-1])
    if facts["leaks"]:
        raise Mismatch(f"the clean virtualenv has the repository on sys.path: {facts['leaks'][0]}")
    if facts["outside"]:
        raise Mismatch(f"{len(facts['outside'])} module(s) not imported from site-packages, e.g. {facts['outside'][0]}")
    if not facts["graphs_in_site"] or not facts["graph_files"]:
        raise Mismatch(f"the installed flipcheck finds no example graphs ({facts['graphs']})")
    if facts["plugins"] != ["flipcheck.pytest_plugin"]:
        raise Mismatch(f"pytest11 entry point 'flipcheck' is {facts['plugins']}, not ['flipcheck.pytest_plugin']")
    return facts


def check_outcomes(junit: Path, returncode: int) -> dict[str, str]:
    """Every test of the buggy file failed and every test of the refactoring's passed, nothing
    else ran; the failure reports by test name."""
    if returncode not in (0, 1) or not junit.exists():
        raise Mismatch(f"the example's pytest run ended with exit {returncode} (an error, not a test failure)")
    outcomes: dict[str, dict[str, str]] = {}
    reports = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        name = case.get("name", "")
        failure = case.find("failure")
        bad = next((case.find(tag) for tag in ("error", "skipped") if case.find(tag) is not None), None)
        outcome = "failed" if failure is not None else bad.tag if bad is not None else "passed"
        outcomes.setdefault(path, {})[name] = outcome
        if failure is not None:
            reports[name] = failure.text or failure.get("message", "")
    expected = {BUGGY_TESTS: "failed", REFACTORING_TESTS: "passed"}
    for path, outcome in expected.items():
        if not outcomes.get(path):
            raise Mismatch(f"the example ran no test of {path}")
        wrong = [f"{name} {got}" for name, got in outcomes[path].items() if got != outcome]
        if wrong:
            raise Mismatch(f"every test of {path} should have {outcome}, but {wrong[0]}")
    others = sorted(set(outcomes) - set(expected))
    if others:
        raise Mismatch(f"the example ran tests outside {BUGGY_TESTS} and {REFACTORING_TESTS}: {others[0]}")
    print(f"{NAME}: outcomes as expected: {len(outcomes[BUGGY_TESTS])} failed ({BUGGY_TESTS}), "
          f"{len(outcomes[REFACTORING_TESTS])} passed ({REFACTORING_TESTS})")
    return reports


def check_report(test: str, report: str, properties: list[str], env: dict) -> tuple[str, str]:
    """The parts of flipcheck's report; returns the violated property and the replay command."""
    head = re.search(r"^flipcheck: explore \S+: (\w+) violated$", report, re.M)
    if head is None or head.group(1) not in properties:
        raise Mismatch(f"{test}: the report names no violated property of the job model: "
                       f"{report.strip().splitlines()[0] if report.strip() else 'empty report'}")
    count = re.search(r"^  shortest counterexample \((\d+) steps\):$", report, re.M)
    if count is None:
        raise Mismatch(f"{test}: the report has no 'shortest counterexample (N steps):' line")
    numbers = [int(n) for n in re.findall(r"^\s+(\d+)\. \S", report, re.M)]
    if not numbers or numbers != list(range(1, int(count.group(1)) + 1)):
        raise Mismatch(f"{test}: the report's steps are not numbered 1 to {count.group(1)}: {numbers[:5]}...")
    picture = re.search(r"^  picture: (.+)$", report, re.M)
    if picture is None:
        raise Mismatch(f"{test}: the report has no picture: line")
    dot = shutil.which("dot", path=env["PATH"])
    drawn = Path(picture.group(1))
    if dot is not None and not (drawn.is_absolute() and drawn.is_file() and drawn.stat().st_size):
        raise Mismatch(f"{test}: dot is installed ({dot}) but the picture was not drawn: {picture.group(1)}")
    if dot is None and not picture.group(1).startswith("not drawn ("):
        raise Mismatch(f"{test}: no dot installed, yet the picture line is {picture.group(1)!r}")
    replay = re.search(r"^  replay:\s+(flipcheck .+)$", report, re.M)
    if replay is None:
        raise Mismatch(f"{test}: the report has no 'replay: flipcheck ...' line")
    return head.group(1), replay.group(1)


def check_replay(test: str, prop: str, command: str, project: Path, venv: Path, env: dict) -> None:
    """The printed command, run as printed with the clean virtualenv's `flipcheck`, exits 1 (a
    violation) naming the same property."""
    words = shlex.split(command)
    if shutil.which(words[0], path=env["PATH"]) != str(venv / "bin" / "flipcheck"):
        raise Mismatch(f"{test}: 'flipcheck' on PATH is not the clean virtualenv's")
    try:
        result = subprocess.run(words, cwd=project, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise Mismatch(f"{test}: the replay command gave no result after 600 s") from None
    output = result.stdout + result.stderr
    print(f"{NAME}: replay of {test}: $ {command}\n{output.rstrip()}")
    if result.returncode != 1:
        raise Mismatch(f"{test}: the replay command exited {result.returncode}, not 1 (violation reproduced)")
    if prop not in output:
        raise Mismatch(f"{test}: the replay command's output does not name {prop}")


if __name__ == "__main__":
    sys.exit(main())
