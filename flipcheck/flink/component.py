"""Flink's own components, driven directly: the approximate subpartition of FLIP-135.

Approximate local recovery cannot start a job on any release flipcheck runs (1.14 to 2.3): the
pipelined-region scheduler rejects the switch (``DefaultSchedulerComponents.createSchedulerComponents``,
recovery facts §1.1, §1.8). So ``flipcheck flink component approximate-recovery`` checks the component
instead of a run. :func:`run_component` compiles the harness
``java/component/org/apache/flink/runtime/io/network/partition/FlipcheckApproximateHarness.java``
against a release's jars (:func:`flipcheck.flink.engine.compile_classes`, the job builder's
cache), starts one JVM, and feeds it every sequence as lines (:func:`harness_script`). The JVM
drives Flink's ``PipelinedResultPartition`` (the writer) and its ``PipelinedApproximateSubpartition``
and read views, and prints one JSON line per step; :func:`parse_transcript` reads them back as
plain data (never evaluated), in the model's output vocabulary, for
:mod:`flipcheck.properties.approximate_recovery_trace_validation` to judge.

Example
-------
>>> from flipcheck.generators.approximate_recovery import ComponentSequence
>>> sequence = ComponentSequence("doc", 4, (("emit", 6), ("connect", 0), ("poll", 0)), ("S6",), "")
>>> print(harness_script([sequence]), end="")
sequence doc 4
emit 6
connect 0
poll 0
>>> transcript = parse_transcript('{"harness": "approximate-subpartition", "flink": "2.3.0"}\\n'
...                               '{"sequence": "doc", "step": 1, "out": []}\\n'
...                               '{"sequence": "doc", "step": 2, "out": [["view_created", 0]]}\\n')
>>> transcript.flink, transcript.steps["doc"]
('2.3.0', [(), (('view_created', 0),)])
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from flipcheck.errors import InputError
from flipcheck.flink.engine import FlinkRunError, compile_classes, flink_lib, java_tools
from flipcheck.flink.releases import FlinkInstall

__all__ = ["HARNESS_SOURCE", "HARNESS_CLASS", "HARNESS_TIMEOUT_SECONDS", "MAX_SEQUENCE_BYTES", "OUTPUT_FIELDS",
           "Transcript", "ComponentRun", "harness_script", "parse_transcript", "run_component"]

_PACKAGE = "org.apache.flink.runtime.io.network.partition"
HARNESS_CLASS = f"{_PACKAGE}.FlipcheckApproximateHarness"
HARNESS_SOURCE = (Path(__file__).with_name("java") / "component" / Path(*_PACKAGE.split("."))
                  / "FlipcheckApproximateHarness.java")
_HARNESS_MARK = str(Path(*HARNESS_CLASS.split(".")).with_suffix(".class"))
HARNESS_TIMEOUT_SECONDS = 120
# The harness writes stream offset k as the byte k % 256, so a slice names its offset.
MAX_SEQUENCE_BYTES = 256
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
# Each output kind the harness prints, and the types of what follows the kind.
OUTPUT_FIELDS = {
    "view_created": (int,), "view_released": (int,), "rejected": (int, str), "none": (int,),
    "data": (int, int, int, int), "event": (int, int, int, bool), "partition_released": (),
    "error": (str,), "garbled": (int, int, list),
}


@dataclass(frozen=True)
class Transcript:
    """What the harness printed: the Flink version it ran, and per sequence the outputs of each step."""

    flink: str
    steps: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ComponentRun:
    flink: FlinkInstall
    transcript: Transcript
    text: str                 # the harness's stdout, as printed (a transcript file)
    compile_seconds: float    # javac, 0 when the cache had the classes
    seconds: float            # the JVM, from launch to exit


def harness_script(sequences: Iterable) -> str:
    """The harness's input: a ``sequence NAME CAPACITY`` line, then one line per event."""
    lines = []
    for sequence in sequences:
        if not _NAME.fullmatch(sequence.name):
            raise ValueError(f"sequence name {sequence.name!r}: letters, digits, '_', '.', '-' only")
        written = sum(event[1] for event in sequence.events if event[0] == "emit")
        if written > MAX_SEQUENCE_BYTES:
            raise ValueError(f"sequence {sequence.name}: writes {written} bytes, at most {MAX_SEQUENCE_BYTES}")
        lines.append(f"sequence {sequence.name} {int(sequence.capacity)}")
        for event in sequence.events:
            if event[0] == "barrier":
                lines.append(f"barrier {1 if event[1] else 0}")
            elif len(event) == 1:
                lines.append(event[0])
            else:
                lines.append(f"{event[0]} {int(event[1])}")
    return "".join(line + "\n" for line in lines)


def _as_tuple(value):
    return tuple(_as_tuple(v) for v in value) if isinstance(value, list) else value


def _output(item, where: str) -> tuple:
    """One output, checked against :data:`OUTPUT_FIELDS`."""
    if not isinstance(item, list) or not item or item[0] not in OUTPUT_FIELDS:
        raise ValueError(f"{where}: {item!r} is not an output ([KIND, ...], KIND one of {', '.join(OUTPUT_FIELDS)})")
    types = OUTPUT_FIELDS[item[0]]
    values = item[1:]
    if len(values) != len(types) or any(type(v) is not t for v, t in zip(values, types)):
        raise ValueError(f"{where}: {item[0]!r} takes {len(types)} values of types "
                         f"({', '.join(t.__name__ for t in types)}), got {values!r}")
    return _as_tuple(item)


def parse_transcript(text: str, source: str = "harness output") -> Transcript:
    """The harness's JSON lines as plain data; :class:`InputError` naming the line and field."""
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise InputError(source, "empty: the harness prints a header line first")
    records = []
    for number, line in lines:
        try:
            record = json.loads(line)
        except ValueError as error:
            raise InputError(source, f"line {number}: not JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise InputError(source, f"line {number}: not a JSON object")
        records.append((number, record))
    number, header = records[0]
    if header.get("harness") != "approximate-subpartition" or not isinstance(header.get("flink"), str):
        raise InputError(source, f"line {number}: field 'harness': not an approximate-subpartition harness header "
                                 '({"harness": "approximate-subpartition", "flink": VERSION})')
    steps: dict[str, list] = {}
    for number, record in records[1:]:
        name, step, out = record.get("sequence"), record.get("step"), record.get("out")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise InputError(source, f"line {number}: field 'sequence': {name!r} is not a sequence name")
        if type(step) is not int or step != len(steps.get(name, [])) + 1:
            raise InputError(source, f"line {number}: field 'step': {step!r}, expected {len(steps.get(name, [])) + 1}")
        if not isinstance(out, list):
            raise InputError(source, f"line {number}: field 'out': not a list of outputs")
        try:
            outputs = tuple(_output(item, f"line {number}: field 'out'") for item in out)
        except ValueError as error:
            raise InputError(source, str(error)) from None
        steps.setdefault(name, []).append(outputs)
    return Transcript(header["flink"], steps)


def run_component(sequences: Iterable, flink: FlinkInstall | None = None,
                  timeout_seconds: float = HARNESS_TIMEOUT_SECONDS) -> ComponentRun:
    """Compile the harness for ``flink`` (default: the venv's release), run every sequence in one
    JVM and read its transcript. :class:`~flipcheck.errors.UsageError` without a JDK or Flink's
    jars; :class:`~flipcheck.flink.engine.FlinkRunError` when javac or the JVM fails."""
    script = harness_script(sequences)
    java, javac = java_tools()
    if flink is None:
        version, lib = flink_lib()
        flink = FlinkInstall(version, lib, "venv")
    classes, compile_seconds = compile_classes(javac, flink.version, flink.lib, [HARNESS_SOURCE], _HARNESS_MARK)
    # Log4j's default configuration would print Flink's ERROR lines on stdout, among the JSON.
    command = [java, "-Xmx256m", "-Dorg.apache.logging.log4j.level=OFF",
               "-cp", f"{classes}{os.pathsep}{flink.lib / '*'}", HARNESS_CLASS]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, input=script, capture_output=True, text=True, timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        raise FlinkRunError(f"the harness did not end within {timeout_seconds:g} s") from None
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = [line for line in done.stderr.splitlines() if line.strip()]
        raise FlinkRunError(f"the harness JVM exited with code {done.returncode}: {tail[-1] if tail else 'no output'}")
    try:
        transcript = parse_transcript(done.stdout)
    except InputError as error:
        raise FlinkRunError(f"the harness printed something else than its transcript: {error.message}") from None
    return ComponentRun(flink, transcript, done.stdout, compile_seconds, seconds)
