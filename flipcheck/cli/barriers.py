"""``flipcheck barriers``: replay input events through one task's barrier handling."""

from __future__ import annotations

import json
import sys

HELP = "replay barriers, EndOfPartition and records through one task's barrier alignment"
DESCRIPTION = """\
Replay a sequence of input events through the specification of task-side barrier alignment
with finished input channels (FLIP-147; docs/barriers.md), or through Flink's implementation or
one of its named variants (--handler), and check every barrier property on the way.

events (channels and ids are numbers; ids are 1..1,000,000, channels 0..N-1):
  B<id>@<ch>   checkpoint barrier            C<id>@<ch>   cancellation marker
  E@<ch>       EndOfPartition                D@<ch>       data record
  T<id>        RPC trigger (every upstream task finished)
  TIMEOUT      the alignment timer fires (--mode unaligned --alignment-timeout K only)
  A<id>@<ch>   barrier announcement (--mode unaligned --alignment-timeout K only)
An event that cannot happen where it stands (channel out of range, event on an ended or blocked
channel, ids not increasing on a channel, records after an RPC trigger) is refused.
"""
EPILOG = """\
examples:
  flipcheck barriers --channels 2 --mode aligned B1@0 D@1 E@1
  flipcheck barriers --channels 3 --mode unaligned --json B1@0 D@1 D@2 B1@1 E@2
  flipcheck barriers --channels 2 --mode unaligned --alignment-timeout 2 B1@0 D@1 D@1 D@1 B1@1
  flipcheck barriers --channels 2 --mode aligned --no-checkpoints-after-tasks-finished B1@0 E@1
  flipcheck barriers --channels 2 --mode aligned --handler eop-not-aligned --render chart.svg B1@0 E@1
                                    a buggy handler: the violation, drawn, exit 1

output (--json): one object
  {"triggered": [ids in order], "aborted": [[id, "CHECKPOINT_DECLINED_..."], ...],
   "pending": id or null, "blocked": [channels], "open_channels": n,
   "in_flight": {"<id>": [[channel, record index], ...]}}
  "record index" counts the records (D) of that channel from 0.

--alignment-timeout K: checkpoints start aligned and switch to unaligned once K further events
  were processed while the alignment is still in progress (or at an explicit TIMEOUT);
  K = 0 means unaligned from the start, like Flink's aligned-checkpoint-timeout 0.

limits: --channels 1..32,768; --render draws at most 256 channels and 2,000 events.

exit codes: 0 replayed, every property holds; 1 a property is violated (named on stderr);
2 an invalid or impossible event, or a bad option (nothing on stdout).
"""


# A task's input gate has one channel per upstream subtask, and Flink's parallelism is at most
# 32,768 (model/jobgraph.py MAX_PARALLELISM).
MAX_CHANNELS = 32_768
# K counts events, and a command line holds far fewer than this.
MAX_ALIGNMENT_TIMEOUT = 1_000_000
# The chart has one lane per channel and one row per event: 32,768 lanes ran dot past 2 minutes.
MAX_CHART_CHANNELS = 256
MAX_CHART_EVENTS = 2_000


def configure(parser) -> None:
    from flipcheck.properties.barriers_replay import MODEL
    from flipcheck.cli.types import bounded_int, variant
    from flipcheck.reference_impl.barriers import HANDLERS

    parser.add_argument("events", nargs="+", metavar="EVENT", help="input events, in order")
    parser.add_argument("--channels", type=bounded_int(1, MAX_CHANNELS), required=True, metavar="N",
                        help=f"number of input channels (1..{MAX_CHANNELS:,})")
    parser.add_argument("--mode", required=True, choices=["aligned", "unaligned", "at-least-once"],
                        help="checkpointing mode")
    parser.add_argument("--no-checkpoints-after-tasks-finished", dest="after_finished", action="store_false",
                        help="the behaviour before FLIP-147: EndOfPartition aborts the pending checkpoint")
    parser.add_argument("--alignment-timeout", type=bounded_int(0, MAX_ALIGNMENT_TIMEOUT), metavar="K", default=None,
                        help="unaligned mode: align first, switch to unaligned after K events")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    parser.add_argument("--render", metavar="FILE.svg", help="also draw the replay as a message-sequence chart")
    parser.add_argument("--handler", default=MODEL, type=variant, metavar="NAME",
                        help="the specification (model, default), Flink's implementation (flink), a variant ("
                             + ", ".join(sorted(set(HANDLERS) - {"flink"})) + "), or your own subclass of "
                             "flipcheck.BarrierHandler as FILE.py:CLASS or MODULE:CLASS")


def run(args) -> int:
    from flipcheck.properties.barriers_replay import MODEL, ImpossibleEvent, replay, summary, table
    from flipcheck.errors import InputError, UsageError
    from flipcheck.model.barriers import Config, parse_event

    timeout = args.alignment_timeout
    if timeout is not None and args.mode != "unaligned":
        raise UsageError("--alignment-timeout needs --mode unaligned")
    if args.render:
        from flipcheck.render.core import output_format

        output_format(args.render)  # a bad file name is a usage error before anything runs
        if args.channels > MAX_CHART_CHANNELS or len(args.events) > MAX_CHART_EVENTS:
            raise UsageError(f"--render draws at most {MAX_CHART_CHANNELS} channels and {MAX_CHART_EVENTS:,} events "
                             f"(got {args.channels:,} and {len(args.events):,})")
    if args.handler != MODEL:
        from flipcheck.reference_impl.barriers import handler_class

        try:
            handler_class(args.handler)   # an unknown name or a bad spec: one line, before any work
        except ValueError as error:
            raise UsageError(f"--handler: {error}") from None
    config = Config(args.channels, args.mode, args.after_finished, alignment_timeout=bool(timeout))
    events = []
    for position, token in enumerate(args.events, 1):
        try:
            events.append(parse_event(token))
        except ValueError as error:
            raise InputError(f"event {position} ({token})", str(error)) from None
    try:
        result = replay(config, events, alignment_timeout=timeout, handler=args.handler)
    except ImpossibleEvent as error:
        raise InputError(f"event {error.position} ({error.token})", error.reason) from None
    if args.render:
        from flipcheck.render.barriers import render_chart

        render_chart(result, args.render)
    if args.json:
        sys.stdout.write(json.dumps(summary(result)) + "\n")
    else:
        sys.stdout.write(table(result) + "\n")
    for violation in result.violations:
        sys.stderr.write(f"flipcheck barriers: violated {violation}\n")
    return 1 if result.violations else 0
