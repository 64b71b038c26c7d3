"""The commands the documentation shows, read from it, and how to run them as a user would.

Sources: the "## Use" block of README.md, and the "examples:" section of `flipcheck --help`
and of each subcommand's `--help` (their EPILOG). The convention, stated in README.md:

* an example exits 0 unless its comment says ``exit N`` (README: after ``#``; --help: the text
  after the command, two or more spaces away);
* an example whose comment says ``needs a Spark cluster``, ``needs a running Flink job`` or
  ``needs network access`` is shown, not run: only its flipcheck command line is parsed;
* examples run in the documented order, in one scratch directory per source (so one example may
  read what an earlier one wrote), where ``examples/`` and ``tests/`` are the repository's and an
  absolute output path is rewritten into the scratch directory;
* what the docs say makes four Spark examples cheaper (:func:`cheaper`): a random sweep
  documented to exit 0 runs its first 500 cases per suite (case i comes from (S, i): the same
  cases, and no violation among N cases means none among the first 500); one documented to
  exit 1 (a violation) does too, since a violation among the first 500 is one among N (were
  there none in the prefix, the test fails: it never passes unearned); an exhaustive plan
  sweep documented to exit 0 runs with parallelism 1 (a subset of the graphs with parallelism
  <= P, so again no violation); and `flipcheck demo` runs the "quicker tour" its --help shows
  (--cases 12000 --max-vertices 2);
* an example whose command, so made cheaper, is the one an earlier example of its source ran
  (output options aside) and documents the same exit code is not run twice: it is that run
  (`flipcheck demo` and the quicker tour, with --out, are one demo); and a command that reads
  and writes no file but the repository's (no output option, no path outside examples/ and
  tests/), shown by two sources, runs once per test session (``flipcheck mutants``: README and
  its --help), the second source waiting for the first's exit code;
* an example whose work a named test runs with the same arguments, asserting its documented exit
  code and much more (:data:`ASSERTED_ELSEWHERE`), is not run again here: the demo's quicker tour
  is tests/spark/test_demo.py's run, `flink run`'s three faults tests/flink/test_flink_faults.py's
  (tests/cli/test_documented_commands.py checks each link).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ASSERTED_ELSEWHERE", "REPOSITORY", "SLOW", "Example", "Ran", "assert_ran_as_documented", "cheaper", "documented_examples",
           "grouped", "run_in_order"]

REPOSITORY = Path(__file__).resolve().parents[1]
NOT_RUN_NEEDS = ("a Spark cluster", "a running Flink job", "network access")
_EXIT = re.compile(r"\bexit (\d)\b")
_NEEDS = re.compile(r"\bneeds (" + "|".join(map(re.escape, NOT_RUN_NEEDS)) + r")\b")
_SPARK_COMMANDS = ("sweep", "demo")
# Examples run by tests/slow rather than tests/cli, by what the command starts with (measured on
# 2 busy cores): they run for a time budget or explore a large state space.
SLOW = {
    "flipcheck explore examples/graphs/protocol-join.json": "26-58 s: 254,022 states",
    "flipcheck verify": "15-20 s each: a 20 s budget",
    "flipcheck mutants": "about 80 s for every mutant",
    "flipcheck bench": "about 8 s each",
}
_OUTPUT_OPTIONS = ("--out", "--render", "--gallery")
# Measured 2026-11-26: the 2,000 cases per suite and parallelism <= 2 of before cost the second
# lane of `make test` about 2 minutes (the exhaustive plan sweep alone 13,404 graphs, 34 s of CPU);
# parallelism 1 keeps the documented 4 vertices in 900 graphs, and tests/spark/test_sweep_local.py
# sweeps the graphs of 3 vertices and parallelism <= 2 exhaustively.
_PREFIX_CASES = 500
_SUBSET_PARALLELISM = 1
_QUICKER_DEMO = "--cases 12000 --max-vertices 2"
# The work of an example (cheaper(), output options aside) -> the test module that runs it with
# those arguments (its constant DOCUMENTED_EXAMPLE) and asserts the documented exit code.
ASSERTED_ELSEWHERE = {
    "flipcheck demo --cases 12000 --max-vertices 2": "tests/spark/test_demo.py",
    "flipcheck flink run examples/graphs/flink/chain.json --fault fail:src:0@25 --fault restore-throw:sink:1 "
    "--fault delay-snapshot:map:0@2=300": "tests/flink/test_flink_faults.py",
}


@dataclass(frozen=True)
class Example:
    source: str   # "README.md" or "flipcheck sweep --help"
    command: str  # shell text, as documented
    comment: str

    @property
    def expected_exit(self) -> int:
        found = _EXIT.search(self.comment)
        return int(found.group(1)) if found else 0

    @property
    def needs(self) -> str | None:
        found = _NEEDS.search(self.comment)
        return found.group(1) if found else None

    @property
    def flipcheck_argvs(self) -> list[list[str]]:
        """The flipcheck command lines in the shell text (after `&&`, `;` or `|` too)."""
        words = shlex.split(self.command.replace(";", " ; "))
        argvs, current = [], None
        for word in words:
            if word in ("&&", ";", "|", "||") or word.startswith((">", "<", "2>")):
                current = None  # the next command, or a redirection, ends the arguments
            elif current is not None:
                current.append(word)
            elif Path(word).name == "flipcheck":
                current = []
                argvs.append(current)
        return argvs

    @property
    def uses_spark(self) -> bool:
        return any(argv and (argv[0] in _SPARK_COMMANDS or "--master" in argv) for argv in self.flipcheck_argvs)

    @property
    def uses_flink(self) -> bool:
        """It starts real Flink (tests/flink runs it)."""
        return any(argv[:1] == ["flink"] or argv[:2] == ["bench", "flink"] for argv in self.flipcheck_argvs)

    @property
    def is_slow(self) -> bool:
        return self.normalised.startswith(tuple(SLOW))

    @property
    def normalised(self) -> str:
        return self.command.replace(".venv/bin/flipcheck", "flipcheck")

    @property
    def draws(self) -> bool:
        """It needs graphviz's dot: it renders, or (replay, a sweep, the demo, the mutant gallery)
        draws counterexamples."""
        return any(argv and (argv[0] in ("render", "replay", *_SPARK_COMMANDS) or "--render" in argv or "--gallery" in argv)
                   for argv in self.flipcheck_argvs)


def _readme_examples() -> list[Example]:
    text = (REPOSITORY / "README.md").read_text()
    block = text.split("## Use", 1)[1].split("```", 2)[1]
    examples = []
    for line in block.splitlines():
        command, _, comment = line.partition("#")
        if command.strip():
            examples.append(Example("README.md", command.strip(), comment.strip()))
        elif comment.strip() and examples:  # a comment continued on its own line
            last = examples.pop()
            examples.append(Example(last.source, last.command, f"{last.comment} {comment.strip()}"))
    return examples


def _epilog_examples(source: str, epilog: str | None) -> list[Example]:
    if not epilog or "examples:\n" not in epilog:
        return []
    lines = epilog.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    indent = len(lines[0]) - len(lines[0].lstrip())
    examples = []
    while lines:
        line = lines.pop(0)
        if len(line) - len(line.lstrip()) > indent and examples:  # the comment, continued
            last = examples.pop()
            examples.append(Example(source, last.command, f"{last.comment} {line.strip()}".strip()))
            continue
        line = line.strip()
        while line.endswith("\\") and lines:  # the command, continued
            line = line[:-1].rstrip() + " " + lines.pop(0).strip()
        command, *comment = re.split(r" {2,}", line, maxsplit=1)
        examples.append(Example(source, command.strip(), " ".join(comment).strip()))
    return examples


def documented_examples() -> list[Example]:
    """Every example of README.md and of every --help, in documented order."""
    import importlib

    from flipcheck import cli

    examples = _readme_examples() + _epilog_examples("flipcheck --help", cli.EPILOG)
    for name, module_name in cli.COMMANDS.items():
        module = importlib.import_module(f"flipcheck.cli.{module_name}")
        examples += _epilog_examples(f"flipcheck {name} --help", getattr(module, "EPILOG", None))
    return examples


@dataclass(frozen=True)
class Ran:
    example: Example
    exit_code: int | None  # None: not run (it needs a cluster, or ASSERTED_ELSEWHERE runs it)
    seconds: float
    stderr_tail: str
    command: str = ""  # what ran (cheaper() and the scratch directory applied)

    @property
    def as_documented(self) -> bool:
        return self.exit_code is None or self.exit_code == self.example.expected_exit

    def describe(self) -> str:
        return (f"{self.example.source}: `{self.command or self.example.command}` exited {self.exit_code}, "
                f"documented {self.example.expected_exit} ({self.seconds:.1f} s): {self.stderr_tail}")


def _scratch_command(command: str, scratch: Path) -> str:
    """``command`` with an absolute output path moved into ``scratch``."""
    def move(match):
        return f"{match.group(1)} {scratch / Path(match.group(2)).name}"
    return re.sub(r"(" + "|".join(_OUTPUT_OPTIONS) + r") (/\S+)", move, command)


def cheaper(example: Example) -> str:
    """The command the tests run for ``example``: as documented, or cheaper as the module
    docstring says (a subset of the documented cases, where the documented exit code is 0)."""
    command = example.normalised
    argvs = example.flipcheck_argvs
    if len(argvs) != 1:
        return command
    argv = argvs[0]
    if argv[0] == "sweep" and "--cases" in argv and example.expected_exit in (0, 1) and "flink" not in argv:
        cases = argv[argv.index("--cases") + 1]
        if int(cases) > _PREFIX_CASES:
            return command.replace(f"--cases {cases}", f"--cases {_PREFIX_CASES}", 1)
    if argv[0] == "sweep" and "--max-parallelism" in argv and example.expected_exit == 0:
        parallelism = argv[argv.index("--max-parallelism") + 1]
        if int(parallelism) > _SUBSET_PARALLELISM:
            return command.replace(f"--max-parallelism {parallelism}", f"--max-parallelism {_SUBSET_PARALLELISM}", 1)
    if argv[0] == "demo" and "--cases" not in argv:
        return f"{command} {_QUICKER_DEMO}"
    return command


def run_in_order(examples: list[Example], scratch: Path, timeout: float = 900, shared: Path | None = None) -> list[Ran]:
    """Run ``examples`` one after the other in ``scratch`` with bash (-e, pipefail), flipcheck
    being this checkout's; an example that needs a cluster is only parsed by the CLI's parser.
    ``shared``: a folder every test process of the session sees, where a command that touches
    no file of its own (:func:`_session_wide`) keeps its exit code for the other sources."""
    from flipcheck.cli import build_parser

    for name in ("examples", "tests"):
        if not (scratch / name).exists():
            (scratch / name).symlink_to(REPOSITORY / name)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env = {k: v for k, v in env.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    ran = []
    done: dict[str, Ran] = {}   # the work of each command run (output options aside) -> its run
    for example in examples:
        if example.needs:
            for argv in example.flipcheck_argvs:
                build_parser().parse_args(argv)  # the options it shows exist (SystemExit 2 if not)
            ran.append(Ran(example, None, 0.0, f"not run: needs {example.needs}"))
            continue
        command = _scratch_command(cheaper(example), scratch)
        work = _without_outputs(command)
        if work in ASSERTED_ELSEWHERE:
            ran.append(Ran(example, None, 0.0, f"run and asserted by {ASSERTED_ELSEWHERE[work]}", command))
            continue
        earlier = done.get(work)
        if earlier is not None and earlier.example.expected_exit == example.expected_exit:
            ran.append(Ran(example, earlier.exit_code, 0.0, f"the run of `{earlier.command}`", command))
            continue
        def execute() -> Ran:
            started = time.perf_counter()
            result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=scratch, env=env,
                                    capture_output=True, text=True, timeout=timeout)
            return Ran(example, result.returncode, time.perf_counter() - started, result.stderr.strip()[-600:], command)

        ran.append(_once_per_session(shared, example, command, execute) if shared and _session_wide(example, command) else execute())
        done.setdefault(work, ran[-1])
    return ran


def _session_wide(example: Example, command: str) -> bool:
    """Whether ``command`` does the same whichever source shows it: one flipcheck command whose
    arguments name no output and no path but the repository's examples/ and tests/."""
    argvs = example.flipcheck_argvs
    if len(argvs) != 1 or command != example.normalised or any(c in command for c in "|&;<>$`"):
        return False
    return not any(word in _OUTPUT_OPTIONS or ("/" in word or "." in word) and not word.startswith(("examples/", "tests/"))
                   for word in argvs[0])


def _once_per_session(shared: Path, example: Example, command: str, execute) -> Ran:
    """``execute()``'s run, or the exit code another test process recorded for ``command``
    (waiting, under a file lock, while that process still runs it)."""
    import fcntl
    import hashlib
    import json

    record = shared / ("documented-" + hashlib.sha256(command.encode()).hexdigest()[:16] + ".json")
    with open(record.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if record.exists():
            earlier = json.loads(record.read_text())
            return Ran(example, earlier["exit_code"], 0.0,
                       f"the run of `{command}` by {earlier['source']}: {earlier['stderr_tail']}", command)
        ran = execute()
        record.write_text(json.dumps({"exit_code": ran.exit_code, "source": example.source,
                                      "stderr_tail": ran.stderr_tail}))
        return ran


def _without_outputs(command: str) -> str:
    """``command`` without its output options (``--out DIR`` ...): what work it does."""
    return " ".join(re.sub(r"(" + "|".join(_OUTPUT_OPTIONS) + r") \S+", "", command).split())


def grouped(examples: list[Example]) -> dict[str, list[Example]]:
    """``examples`` by source, each source's in documented order."""
    sources: dict[str, list[Example]] = {}
    for example in examples:
        sources.setdefault(example.source, []).append(example)
    return sources


def assert_ran_as_documented(examples: list[Example], scratch: Path, request) -> list[Ran]:
    """Run ``examples`` in order; every exit code must be the documented one. When one draws,
    the test first asks for the ``dot_program`` fixture (tests/conftest.py),
    which fails the test with one line if graphviz's dot is missing."""
    if any(example.draws for example in examples):
        request.getfixturevalue("dot_program")
    shared = request.getfixturevalue("tmp_path_factory").getbasetemp().parent   # every xdist worker's
    ran = run_in_order(examples, scratch, shared=shared)
    wrong = [r.describe() for r in ran if not r.as_documented]
    assert not wrong, "\n".join(wrong)
    return ran
