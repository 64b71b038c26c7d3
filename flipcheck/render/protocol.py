"""Message-sequence charts of a whole-job trace (``flipcheck explore --render FILE.svg``).

Time runs downwards, one row per step; one lane for the checkpoint coordinator and one per task.
The cell of a step sits in the lane of whoever takes it (:func:`flipcheck.render.protocol_labels.chart_lane_of`)
and lists what it caused: snapshots (blue), completions (green), aborts, declines and
cancellations (red), commits, finishing. Arrows join a message's sending step to its receiving
step: records (black), barriers and cancellation markers (blue), EndOfData/EndOfPartition (dark
grey), trigger RPCs (orange), acknowledgements, completion notifications and FINISHED reports
(green, dashed). A record still in its channel after the last step (one a checkpoint's cut lost,
say) is a red dashed arrow "r1 in flight" from its emitting step to the receiver's lane at the
last row. A task's lane is solid while it runs, orange after its end of data, dotted once it
finished. The step that violated the property is outlined red; the steps of a lasso's cycle
are marked with ⟲. A long behaviour (``flipcheck conform``'s) is drawn compact: rows shared by
steps that nothing orders, several steps of a lane in one cell (:func:`chart_source`).

Example
-------
>>> from flipcheck.generators.protocol import example_graph
>>> from flipcheck.reference_impl.protocol_variants import make_job
>>> from flipcheck.properties.protocol_explore import replay
>>> job = make_job(example_graph("pair"), records=1)
>>> steps = replay(job, [("trigger", 1), ("emit", 0, 0), ("rpc", 0, 1)], canonical_labels=False)
>>> source = chart_source(job, steps, "demo")
>>> "snapshot 1" in source and "coordinator_1 -> t0_3" in source
True
>>> source.count("arrowhead=normal")       # the trigger RPC, and r0 still on its way to sink[0]
2
>>> "r0 in flight" in source
True
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Mapping, NamedTuple, Sequence

from flipcheck.model.protocol import CANCELED, DATA, END_OF_DATA, EOD, EOI, FAILED, FINISHED, Job, initial_state
from flipcheck.render.protocol_labels import chart_lane_of
from flipcheck.render.sequence_chart import LaneChart, literal, quote

__all__ = ["chart_source", "render_trace"]

_RED = "#c62828"
_FILL = {"plain": "#f4f4f4", "snapshot": "#cfe2ff", "good": "#c7efc4", "bad": "#f7c6c6", "finish": "#d9d9d9"}
_ARROW = {
    "D": "color=black",
    "B": 'color="#1f4e9c"',
    "C": 'color="#1f4e9c" style=dashed',
    "EOD": "color=grey30 penwidth=2",
    "EOP": "color=grey30 penwidth=2",
    "rpc": 'color="#e08a00"',
    "ack": 'color="#2e7d32" style=dashed',
    "notify": 'color="#2e7d32" style=dashed',
    "report": "color=grey50 style=dashed",
    "in-flight": 'color="#c62828" style=dashed fontcolor="#c62828" fontsize=9',
}
_MESSAGE = {"D": lambda m: f"r{m[1]}", "B": lambda m: f"barrier {m[1]}", "C": lambda m: f"cancel {m[1]}",
            "EOD": lambda m: "EndOfData", "EOP": lambda m: "EndOfPartition"}


def _upstream(job: Job, name, label: tuple) -> str:
    return name(job.channels[job.tasks[label[1]].inputs[label[2]]].source)


# What a step says in its cell (the long form is flipcheck.render.protocol_labels.describe_label);
# ``name`` names a task (the chart's lane titles).
_STEP_TEXT = {
    "emit": lambda job, name, lb: f"emit r{lb[2]}",
    "end-of-data": lambda job, name, lb: "end of data",
    "receive": lambda job, name, lb: f"poll {_MESSAGE[lb[3][0]](lb[3])} from {_upstream(job, name, lb)}",
    "poll-released": lambda job, name, lb: f"poll released input from {_upstream(job, name, lb)}",
    "finish": lambda job, name, lb: "FINISHED",
    "ack": lambda job, name, lb: f"ack {lb[2]} from {name(lb[1])}",
    "notify": lambda job, name, lb: f"notified: {lb[2]} complete",
    "rpc": lambda job, name, lb: f"trigger RPC {lb[2]}",
    "report-finished": lambda job, name, lb: f"{name(lb[1])} FINISHED (report)",
    "trigger": lambda job, name, lb: "trigger",
    "trigger-fails": lambda job, name, lb: "trigger (coordinator snapshot fails)",
    "stop-with-savepoint": lambda job, name, lb: "stop-with-savepoint (no drain)",
    "fail": lambda job, name, lb: "FAILED",
    "fail-decline": lambda job, name, lb: f"decline {lb[2]} (snapshot threw)",
    "shared-decline": lambda job, name, lb: f"decline {lb[2]} (shared channel-state file)",
    "failover": lambda job, name, lb: "FAILOVER",
}


def _id_text(k: int) -> str:
    return "EOI" if k == EOI else str(k)


# A line for each consequence of a step (its notes) and how it colours the cell.
_NOTE_TEXT = {
    "snapshot": lambda job, name, n: (f"snapshot {n[2]}", "snapshot"),
    "completed": lambda job, name, n: (f"checkpoint {n[1]} COMPLETED", "good"),
    "aborted": lambda job, name, n: (f"checkpoint {n[1]} ABORTED ({n[2].removeprefix('CHECKPOINT_')})", "bad"),
    "committed": lambda job, name, n: ("commits " + ", ".join(_id_text(k) for k in n[2]), "good"),
    "committable": lambda job, name, n: (f"committable {_id_text(n[2])} -> committer", "snapshot"),
    "cancelled": lambda job, name, n: ("cancels " + ", ".join(map(str, n[2])), "bad"),
    "triggered": lambda job, name, n: (f"checkpoint {n[1]} -> " + ", ".join(
        name(t) for t in range(len(job.tasks)) if n[2] >> t & 1), "plain"),
    "trigger-declined": lambda job, name, n: (f"declines {n[2]} (finished)", "bad"),
    "trigger-lost": lambda job, name, n: (f"RPC {n[2]} lost (finished)", "bad"),
    "plan-declined": lambda job, name, n: (f"plan declined: {n[1]}", "bad"),
    "finalize-failed": lambda job, name, n: (f"finalize {n[1]} fails", "bad"),
    "failover": lambda job, name, n: (f"restore checkpoint {n[1]}" if n[1] else "restart from scratch", "bad"),
    "end-of-data-trigger": lambda job, name, n: ("believes every task ended its data", "plain"),
    "polled-released": lambda job, name, n: ("CancelTaskException: CANCELED", "bad"),
    "savepoint-declined": lambda job, name, n: (f"declines savepoint {n[2]} (end of data)", "bad"),
    "stopped": lambda job, name, n: (f"savepoint {n[2]} done: stops", "plain"),
}


def _step_lines(job: Job, name, step, refs: Sequence[str]) -> tuple[list[str], str]:
    """A step's lines in its cell (what it does, where the log shows it, then its notes) and the
    cell's fill."""
    text = _STEP_TEXT.get(step.label[0])
    first = ("⟲ " if step.loop else "") + (text(job, name, step.label) if text else " ".join(map(str, step.label)))
    lines, fill = [first + (f"  [{', '.join(refs)}]" if refs else "")], "plain"
    for note in step.notes:
        described = _NOTE_TEXT[note[0]](job, name, note) if note[0] in _NOTE_TEXT else None
        if described is not None:
            lines.append(described[0])
            if described[1] != "plain" and fill != "bad":
                fill = described[1]
    if step.label[0] == "finish" and fill == "plain":
        fill = "finish"
    return lines, fill


class _Mailboxes:
    """Who sent each message still on its way (the sending step, from 1, and its lane), so a
    receipt can point back at its sending step."""

    def __init__(self):
        self.waiting = defaultdict(list)   # (kind, key) -> [(message, step, lane), ...] oldest first

    def sent(self, key, message, step: int, lane: str) -> None:
        self.waiting[key].append((message, step, lane))

    def received(self, key, message=None):
        for i, (m, step, lane) in enumerate(self.waiting[key]):
            if message is None or m == message:
                del self.waiting[key][i]
                return step, lane
        return None

    def track(self, job: Job, before, after, step: int, lane: str) -> None:
        """Record every message ``after`` has on its way that ``before`` had not."""
        for c, (old, new) in enumerate(zip(before.queues, after.queues)):
            for message, count in (Counter(new) - Counter(old)).items():
                for _ in range(count):
                    self.sent(("channel", c), message, step, lane)
        for t in range(len(job.tasks)):
            for k in (Counter(after.rpcs[t]) - Counter(before.rpcs[t])):
                self.sent(("rpc", t), k, step, lane)
            old_acks = {k for k, _ in before.tasks[t].outbox}
            for k, _ in after.tasks[t].outbox:
                if k not in old_acks:
                    self.sent(("ack", t), k, step, lane)
            if after.notifications[t] and after.notifications[t] != before.notifications[t]:
                self.waiting[("notify", t)] = [(None, step, lane)]
        new_reports = after.coordinator.finished_reports & ~before.coordinator.finished_reports
        for t in range(len(job.tasks)):
            if new_reports >> t & 1:
                self.sent(("report", t), None, step, lane)

    def receipt(self, job: Job, label: tuple):
        """``(arrow kind, (sending step, its lane))`` of a receiving step, or None."""
        kind = label[0]
        if kind == "receive":
            message = label[3]
            return message[0], self.received(("channel", job.tasks[label[1]].inputs[label[2]]), message)
        if kind in ("rpc", "ack"):
            return kind, self.received((kind, label[1]), label[2])
        if kind == "notify":
            return kind, self.received(("notify", label[1]))
        if kind == "report-finished":
            return "report", self.received(("report", label[1]))
        return None


def _lane_look(phase: int) -> str:
    if phase == FINISHED:
        return "color=grey70 style=dotted"
    if phase in (CANCELED, FAILED):
        return 'color="#c62828" style=dotted'
    if phase == END_OF_DATA:
        return 'color="#e08a00"'
    return "color=grey60"


# A cell of the compact layout holds at most this many steps of one lane.
MERGED_STEPS = 4
# Fills from the most telling down: a merged cell shows the first of these any of its steps has.
_FILL_RANK = ("bad", "good", "snapshot", "finish", "plain")


class _Drawn(NamedTuple):
    """One step as the chart draws it."""

    lane: str
    lines: list
    fill: str
    receipt: tuple | None      # (arrow kind, (sending step, sending lane)) of a step receiving a message
    after: object              # the job state after the step


def chart_source(job: Job, steps, title: str, subtitle: str = "", *, task_names: Sequence[str] | None = None,
                 step_refs: Mapping[int, Sequence[str]] | None = None, compact: bool = False,
                 outline_last: bool = True) -> str:
    """The DOT source of the chart of ``steps`` (:func:`flipcheck.properties.protocol_explore.replay`);
    the last step is the one that violated the property (outlined red unless ``outline_last``
    is false).

    ``task_names``: the lanes' titles and the names the cells use (default: the model's task
    names); ``step_refs``: per step (from 1), where a log shows it, added to its first line;
    ``compact``: a Lamport layout for long behaviours (a real run's, ``flipcheck conform``): each
    step goes to the first row below its lane's last cell, below the step that sent what it
    receives and below the steps it waits for without a message (a task's finish waits for its
    downstream's EndOfData polls, a trigger for the ends of data before it), and up to
    :data:`MERGED_STEPS` steps of a lane share a cell when nothing orders them apart. A failover,
    and the outlined last step, take a row of their own below everything before them."""
    name = (lambda t: literal(task_names[t])) if task_names is not None else job.name
    lanes = ["coordinator"] + [f"t{t}" for t in range(len(job.tasks))]
    # Lanes are named by position: vertex names come from user files and need not be DOT ids.
    lane_of = {"coordinator": "coordinator", **{job.name(t): f"t{t}" for t in range(len(job.tasks))}}
    drawn: list = []
    mailboxes = _Mailboxes()
    before = initial_state(job)
    for index, step in enumerate(steps, 1):
        lane = lane_of[chart_lane_of(job, step.label)]
        lines, fill = _step_lines(job, name, step, [literal(ref) for ref in (step_refs or {}).get(index, ())])
        receipt = mailboxes.receipt(job, step.label)
        drawn.append(_Drawn(lane, lines, fill, receipt if receipt is not None and receipt[1] is not None else None,
                            step.state))
        if step.label[0] == "failover":
            mailboxes = _Mailboxes()  # everything on its way is lost
        mailboxes.track(job, before, step.state, index, lane)
        before = step.state
    labels = [step.label for step in steps]
    rows, row_of = (_compact_layout(job, drawn, labels, outline_last) if compact
                    else ([{d.lane: [i]} for i, d in enumerate(drawn, 1)], {i: i for i in range(1, len(drawn) + 1)}))
    chart = LaneChart("protocol", lanes, title, subtitle or
                      "orange lane: end of data reached   dotted lane: finished (red: cancelled)   ⟲ step of the lasso's cycle",
                      nodesep=0.2 if compact else 0.4)
    chart.row({"coordinator": "coordinator", **{f"t{t}": name(t) for t in range(len(job.tasks))}}, header=True)
    phases = _lane_phases(job, drawn, labels, row_of, len(rows))
    small = ' fontsize=9 margin="0.06,0.03"' if compact else ""
    for r, row in enumerate(rows, 1):
        cells = {}
        for lane, indices in row.items():
            fill = next(f for f in _FILL_RANK if any(drawn[i - 1].fill == f for i in indices))
            style = f'shape=box style="rounded,filled" fillcolor="{_FILL[fill]}"{small}'
            if outline_last and len(steps) in indices:
                style += f' penwidth=3 color="{_RED}"'
            cells[lane] = ("\\n".join(line for i in indices for line in drawn[i - 1].lines), style)
        chart.row(cells)
        chart.segment("coordinator", r)
        for t in range(len(job.tasks)):
            chart.segment(f"t{t}", r, _lane_look(phases[t][r]))
    for index, d in enumerate(drawn, 1):
        if d.receipt is not None:
            kind, (sent, sender) = d.receipt
            chart.arrow(sender, row_of[sent], d.lane, row_of[index], _ARROW[kind])
    _draw_in_flight(job, chart, mailboxes, row_of, len(rows))
    return chart.source()


def _compact_layout(job: Job, drawn: Sequence[_Drawn], labels: Sequence[tuple], outline_last: bool) -> tuple[list, dict]:
    """The rows of :func:`chart_source`'s compact layout (each: lane -> the steps, from 1, of its
    cell) and each step's row."""
    rows: list = []
    row_of: dict = {}
    lane_last: dict = {}   # lane -> the row of its last cell
    floor = 0              # the last failover's row: everything after it goes below
    for index, (d, label) in enumerate(zip(drawn, labels), 1):
        waits = [row_of[d.receipt[1][0]]] if d.receipt is not None else []
        waits += [row_of[j] for j in _silent_causes(job, labels, index)]
        earliest = max([floor, *waits]) + 1
        last = lane_last.get(d.lane, 0)
        if label[0] == "failover" or outline_last and index == len(drawn):
            r = len(rows) + 1
            floor = r if label[0] == "failover" else floor
        elif last >= earliest and len(rows[last - 1][d.lane]) < MERGED_STEPS:
            r = last
        else:
            r = max(earliest, last + 1)
        while len(rows) < r:
            rows.append({})
        rows[r - 1].setdefault(d.lane, []).append(index)
        row_of[index] = lane_last[d.lane] = r
    return rows, row_of


def _silent_causes(job: Job, labels: Sequence[tuple], index: int) -> list[int]:
    """The earlier steps (from 1) that step ``index`` waits for without a message the chart
    draws: a task's finish (J7) waits until its downstream polled its EndOfData; a trigger may be
    the one the coordinator starts when every task ended its data (FLINK-28386)."""
    label = labels[index - 1]
    if label[0] == "finish":
        return [j for j, lb in enumerate(labels[:index - 1], 1) if lb[0] == "receive" and lb[3][0] == EOD
                and job.channels[job.tasks[lb[1]].inputs[lb[2]]].source == label[1]]
    if label[0] == "trigger":
        return [j for j, lb in enumerate(labels[:index - 1], 1) if lb[0] == "end-of-data"]
    return []


def _lane_phases(job: Job, drawn: Sequence[_Drawn], labels: Sequence[tuple], row_of: Mapping[int, int],
                 rows: int) -> list[list[int]]:
    """Per task and row (from 1), the task's phase as its lane enters that row: after its last
    step above the row (a task's phase changes only by its own steps and by failovers)."""
    first = initial_state(job)
    changes: list = [[] for _ in job.tasks]   # per task: (row, phase after a step of it in that row)
    for index, (d, label) in enumerate(zip(drawn, labels), 1):
        for t in range(len(job.tasks)):
            if label[0] == "failover" or d.lane == f"t{t}":
                changes[t].append((row_of[index], d.after.tasks[t].phase))
    phases = []
    for t in range(len(job.tasks)):
        current, by_row, pending = first.tasks[t].phase, [0] * (rows + 1), sorted(changes[t], key=lambda c: c[0])
        k = 0
        for r in range(1, rows + 1):
            while k < len(pending) and pending[k][0] < r:
                current = pending[k][1]
                k += 1
            by_row[r] = current
        phases.append(by_row)
    return phases


def _draw_in_flight(job: Job, chart: LaneChart, mailboxes: _Mailboxes, row_of: Mapping[int, int], last_row: int) -> None:
    """Records still in a channel after the last step, drawn from their emitting cell to the
    receiver's lane at the last row: a record a checkpoint's cut lost (``consistent_cut``) shows
    on its channel, in flight, where it was never polled."""
    for c, channel in enumerate(job.channels):
        for message, sent, lane in mailboxes.waiting.get(("channel", c), ()):
            if message[0] == DATA:
                chart.arrow(lane, row_of[sent], f"t{channel.target}", last_row,
                            f'{_ARROW["in-flight"]} xlabel={quote(f"r{message[1]} in flight")}')


def render_trace(job: Job, steps, path: str, title: str, subtitle: str = "", **layout) -> str:
    """Write the chart to ``path`` (format from the extension: .svg or .png); ``layout``: the
    keyword options of :func:`chart_source`."""
    from flipcheck.render.core import render_source

    return render_source(chart_source(job, steps, title, subtitle, **layout), path)
