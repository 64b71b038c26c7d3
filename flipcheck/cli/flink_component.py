"""``flipcheck flink component approximate-recovery``: Flink's own approximate subpartition, driven
through the model's sequences and compared with the model step by step.

Example
-------
>>> import argparse
>>> from flipcheck.cli.flink import add_release_options
>>> parser = argparse.ArgumentParser(prog="flipcheck flink")
>>> configure(parser.add_subparsers(dest="flink_command"), add_release_options)
>>> args = parser.parse_args(["component", "approximate-recovery", "--cases", "5"])
>>> args.component, args.cases, args.seed, args.variant
('approximate-recovery', 5, 0, 'flip135')
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

HELP = "drive one of Flink's own components through the model's sequences (no job: see --help)"
DESCRIPTION = """\
flipcheck flink component checks one of Flink's own components against the model, directly,
without running a job. One component so far:

  approximate-recovery   PipelinedApproximateSubpartition (FLIP-135) and its read views
"""
AR_DESCRIPTION = """\
flipcheck flink component approximate-recovery checks Flink's component, not a run. Approximate
local recovery cannot start a job on any release from 1.14 to 2.3: the pipelined-region
scheduler refuses the switch ("Approximate local recovery can not be used together with
PipelinedRegionScheduler for now!", DefaultSchedulerComponents), and Flink's own
ApproximateLocalRecoveryDownstreamITCase is @Ignore'd ("no scheduler support"). So a small Java
harness, compiled against the release's jars on first use (cached in ~/.cache/flipcheck), builds
Flink's PipelinedResultPartition with one PipelinedApproximateSubpartition and drives the writer
(emitRecord, broadcastEvent), the consumer attempts' read views (createReadView, getNextBuffer,
resumeConsumption, releaseAllResources) and the partition's release, in one JVM.

Each sequence (model/approximate_recovery.py's events: records spanning buffers, a consumer
reconnecting mid-record, a reconnect while blocked by an aligned barrier, a late request from
an older attempt, ...; the list: generators/approximate_recovery.py, COMPONENT_SEQUENCES) runs
through the model (rules S1-S6), the reference engine (--variant) and Flink, and every step's
outputs are compared: views created and released, requests refused, and what each poll hands
the consumer (bytes as stream offsets, barriers, sequence numbers). A sequence's verdict:

  agrees    Flink's outputs are the model's at every step
  known     they differ as flink-shipped (the engine with Flink's documented departures from
            the seed) predicts, step for step: a known difference, written up in
            docs/approximate-recovery.md
  DIFFERS   neither: the first step where the model and Flink part is printed

The reference engine is compared with the model on the same sequences too.
"""
AR_EPILOG = """\
examples:
  flipcheck flink component approximate-recovery
  flipcheck flink component approximate-recovery --json --cases 200
  flipcheck flink component approximate-recovery --flink 1.17.2      (needs network access the first time)
  flipcheck flink component approximate-recovery --observations tests/fixtures/flink_components/approximate-recovery-2.3.0.jsonl
                       judge a stored harness transcript, without a JVM
  flipcheck flink component approximate-recovery --observations tests/fixtures/flink_components/approximate-recovery-2.3.0.jsonl --variant cleanup-first-buffer-only
                       exit 1: that engine variant differs from the model

output: per sequence its verdict, name, the model's rules it exercises and what each consumer
  attempt read (records whole or in part, dropped bytes); a difference names its step, the
  event, and both outputs. --json: {"component", "flink", "variant", "cases", "seed",
  "sequences": [{"name", "capacity", "events", "rules", "verdict", "step", "model", "observed",
  "engine_step", "properties", "reading"}], "agrees", "known", "differs", "engine_differs", "ok"}.
  --save FILE keeps the harness's transcript (JSON lines) for --observations.

exit codes: 0 every sequence agrees, or differs only as a known difference; 1 a difference
  (Flink's or the reference engine's), or javac or the harness JVM failed; 2 a bad option or
  transcript, no JDK or no Flink jars.
"""


def configure(commands, add_release_options: Callable) -> None:
    """The ``component`` parser under ``flipcheck flink``; ``add_release_options`` is
    :func:`flipcheck.cli.flink.add_release_options` (passed in: that module imports this one)."""
    from flipcheck.cli.types import bounded_int, variant

    parser = commands.add_parser("component", help=HELP, description=DESCRIPTION,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    components = parser.add_subparsers(dest="component", metavar="COMPONENT", required=True,
                                       parser_class=type(parser))
    ar = components.add_parser("approximate-recovery", help="PipelinedApproximateSubpartition against the model's S1-S6",
                               description=AR_DESCRIPTION, epilog=AR_EPILOG,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    ar.add_argument("--json", action="store_true", help="one JSON object (see below)")
    add_release_options(ar)
    ar.add_argument("--variant", type=variant, default="flip135", metavar="NAME",
                    help="the reference engine compared with the model on the same sequences: a variant of "
                         "`flipcheck verify --suite approximate-recovery` or FILE.py:CLASS (default: %(default)s)")
    ar.add_argument("--cases", type=bounded_int(0, 5_000), default=0, metavar="N",
                    help="also N sequences drawn by the design's generator (the model's environment), "
                         "0..5,000 (default: %(default)s)")
    ar.add_argument("--seed", type=bounded_int(0, 10**18), default=0, metavar="N",
                    help="seed of the generated sequences (default: %(default)s)")
    ar.add_argument("--observations", metavar="FILE",
                    help="judge this harness transcript (written by --save) instead of starting a JVM: "
                         "the sequences it names")
    ar.add_argument("--save", metavar="FILE", help="write the harness's transcript (JSON lines) to FILE")


def _counted(step: int | None) -> int | None:
    """A step as the harness numbers them, from 1."""
    return None if step is None else step + 1


def _text(outputs) -> str:
    return "[" + ", ".join(" ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in out)
                           for out in outputs) + "]"


def _sequences_of(transcript, source: str):
    from flipcheck.errors import InputError
    from flipcheck.generators.approximate_recovery import COMPONENT_SEQUENCES, sequence_named

    sequences = list(COMPONENT_SEQUENCES)
    for name in transcript.steps:
        found = sequence_named(name)
        if found is None:
            raise InputError(source, f"field 'sequence': {name!r} is no sequence of COMPONENT_SEQUENCES "
                                     "nor generated-SEED-INDEX")
        if found not in sequences:
            sequences.append(found)
    return sequences


def _read_observations(path: str):
    from flipcheck.errors import InputError
    from flipcheck.flink.component import parse_transcript

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(64 * 1024 * 1024 + 1)
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(path, f"cannot read it ({getattr(error, 'strerror', None) or error})") from None
    if len(text) > 64 * 1024 * 1024:
        raise InputError(path, "larger than 64 MB: not a harness transcript")
    return parse_transcript(text, path)


def run(args, chosen_release: Callable) -> int:
    """``chosen_release(args)``: :func:`flipcheck.cli.flink.chosen_release`."""
    import json

    from flipcheck.cli.types import one_line
    from flipcheck.errors import UsageError
    from flipcheck.flink.engine import FlinkRunError
    from flipcheck.generators.approximate_recovery import component_sequences
    from flipcheck.properties import approximate_recovery_trace_validation as validation
    from flipcheck.reference_impl.approximate_recovery_variants import variant_class

    try:
        variant_class(args.variant)
    except ValueError as error:
        raise UsageError(f"--variant {error}") from None
    if args.observations is not None and (args.flink is not None or args.flink_home is not None):
        raise UsageError("--observations judges a stored transcript: it takes no --flink or --flink-home")
    if args.observations is not None and args.cases:
        raise UsageError("--observations judges the sequences its transcript names: it takes no --cases")
    if args.observations is not None and args.save is not None:
        raise UsageError("--save keeps the transcript of a JVM run: with --observations there is none")
    if args.save is not None:
        try:  # before the run, so that an unwritable FILE costs no JVM
            open(args.save, "a", encoding="utf-8").close()
        except OSError as error:
            raise UsageError(f"--save {args.save}: {error.strerror or error}") from None
    flink = None
    if args.observations is not None:
        transcript = _read_observations(args.observations)
        sequences = _sequences_of(transcript, args.observations)
        timing = "a stored transcript"
    else:
        sequences = component_sequences(args.cases, args.seed)
        flink = chosen_release(args)
        from flipcheck.flink.component import run_component

        try:
            ran = run_component(sequences, flink)
        except FlinkRunError as error:
            sys.stderr.write(one_line(f"flipcheck flink component approximate-recovery: {error}") + "\n")
            return 1
        transcript = ran.transcript
        javac = f", javac {ran.compile_seconds:.1f} s" if ran.compile_seconds else ""
        timing = f"one JVM, {ran.seconds:.1f} s{javac}"
        if args.save is not None:
            with open(args.save, "w", encoding="utf-8") as handle:
                handle.write(ran.text)
    verdicts = validation.validate_sequences(sequences, transcript.steps, args.variant)
    rows = []
    for sequence, verdict in zip(sequences, verdicts):
        rows.append({
            "name": sequence.name, "capacity": sequence.capacity, "events": [list(e) for e in sequence.events],
            "rules": list(sequence.rules), "shows": sequence.shows, "verdict": verdict.verdict,
            "step": _counted(verdict.step), "model": verdict.model, "observed": verdict.flink,
            "engine": verdict.engine, "engine_step": _counted(verdict.engine_step),
            "properties": list(verdict.properties),
            "reading": validation.describe_reading(sequence.capacity, sequence.events, verdict.flink)})
    counts = {kind: sum(1 for v in verdicts if v.verdict == kind)
              for kind in (validation.AGREES, validation.KNOWN, validation.DIFFERS)}
    engine_differs = sum(1 for v in verdicts if v.engine_step is not None)
    ok = counts[validation.DIFFERS] == 0 and engine_differs == 0
    if args.json:
        print(json.dumps({
            "component": "approximate-recovery", "flink": flink.describe() if flink else None,
            "harness_flink": transcript.flink, "variant": args.variant, "cases": args.cases, "seed": args.seed,
            "sequences": rows, **counts, "engine_differs": engine_differs, "ok": ok}, indent=1))
    else:
        _print_text(rows, sequences, transcript.flink, flink, timing, counts, engine_differs, args.variant, ok)
    return 0 if ok else 1


def _step_line(sequence, step: int, model, other, who: str) -> str:
    """``step N `EVENT`: model [...], WHO [...]``; a step past either side's end says so."""
    event = " ".join(str(v) for v in sequence.events[step]) if step < len(sequence.events) else "(no such event)"
    ours = _text(model[step]) if step < len(model) else "nothing (the sequence has ended)"
    theirs = _text(other[step]) if step < len(other) else "nothing (missing)"
    return f"step {step + 1} `{event}`: model {ours}, {who} {theirs}"


def _print_text(rows, sequences, version, flink, timing, counts, engine_differs, variant, ok) -> None:
    from flipcheck.properties.approximate_recovery_trace_validation import SHIPPED_VARIANT

    where = f" ({flink.source}: {flink.lib})" if flink else ""
    print(f"Flink {version}{where}: PipelinedApproximateSubpartition, {len(rows)} sequences ({timing})")
    generated = [row for row in rows if row["name"].startswith("generated-")]
    for row, sequence in zip(rows, sequences):
        if row["name"].startswith("generated-") and row["verdict"] == "agrees" and row["engine_step"] is None:
            continue
        mark = {"agrees": "agrees", "known": "known", "differs": "DIFFERS"}[row["verdict"]]
        print(f"  {mark:<7}  {row['name']:<38} {' '.join(row['rules']):<9} {row['shows']}")
        print(f"           {row['reading']}")
        if row["step"] is not None:
            print(f"           {_step_line(sequence, row['step'] - 1, row['model'], row['observed'], 'Flink')}")
            if row["verdict"] == "known":
                broken = f"; Flink breaks {', '.join(row['properties'])}" if row["properties"] else ""
                print(f"           as {SHIPPED_VARIANT} predicts{broken} "
                      "(docs/approximate-recovery.md, \"Flink's component\")")
        if row["engine_step"] is not None:
            line = _step_line(sequence, row["engine_step"] - 1, row["model"], row["engine"], f"engine {variant}")
            print(f"           the reference engine differs: {line}")
    if generated:
        quiet = sum(1 for row in generated if row["verdict"] == "agrees" and row["engine_step"] is None)
        print(f"  ({quiet} of {len(generated)} generated sequences agree and are not listed)")
    print(f"Flink against the model: {counts['agrees']} agree, {counts['known']} known, {counts['differs']} differ; "
          f"the reference engine ({variant}) differs from the model on {engine_differs}")
    print("ok" if ok else "DIFFERENCE: see the sequences marked DIFFERS or the engine lines above")
