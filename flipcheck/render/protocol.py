"""Message-sequence charts of a whole-job trace (``flipcheck explore --render FILE.svg``).

Time runs downwards, one row per step; one lane for the checkpoint coordinator and one per task.
The cell of a step sits in the lane of whoever takes it (:func:`flipcheck.render.protocol_labels.actor_of`)
and lists what it caused: snapshots (blue), completions (green), aborts, declines and
cancellations (red), commits, finishing. Arrows join a message's sending step to its receiving
step: records (black), barriers and cancellation markers (blue), EndOfData/EndOfPartition (dark
grey), trigger RPCs (orange), acknowledgements, completion notifications and FINISHED reports
(green, dashed). A task's lane is solid while it runs, orange after its end of data, dotted once
it finished. The step that violated the property is outlined red; the steps of a lasso's
cycle are marked with ⟲.

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
>>> source.count("arrowhead=normal")       # the trigger RPC: coordinator -> src[0]
1
"""

from __future__ import annotations

from collections import Counter, defaultdict

from flipcheck.model.protocol import CANCELED, END_OF_DATA, EOI, FINISHED, Job, initial_state
from flipcheck.render.protocol_labels import actor_of
from flipcheck.render.sequence_chart import LaneChart

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
}
_MESSAGE = {"D": lambda m: f"r{m[1]}", "B": lambda m: f"barrier {m[1]}", "C": lambda m: f"cancel {m[1]}",
            "EOD": lambda m: "EndOfData", "EOP": lambda m: "EndOfPartition"}


def _upstream(job: Job, label: tuple) -> str:
    return job.name(job.channels[job.tasks[label[1]].inputs[label[2]]].source)


# What a step says in its cell (the long form is flipcheck.render.protocol_labels.describe_label).
_STEP_TEXT = {
    "emit": lambda job, lb: f"emit r{lb[2]}",
    "end-of-data": lambda job, lb: "end of data",
    "receive": lambda job, lb: f"poll {_MESSAGE[lb[3][0]](lb[3])} from {_upstream(job, lb)}",
    "poll-released": lambda job, lb: f"poll released input from {_upstream(job, lb)}",
    "finish": lambda job, lb: "FINISHED",
    "ack": lambda job, lb: f"ack {lb[2]} from {job.name(lb[1])}",
    "notify": lambda job, lb: f"notified: {lb[2]} complete",
    "rpc": lambda job, lb: f"trigger RPC {lb[2]}",
    "report-finished": lambda job, lb: f"{job.name(lb[1])} FINISHED (report)",
    "trigger": lambda job, lb: "trigger",
    "stop-with-savepoint": lambda job, lb: "stop-with-savepoint (no drain)",
    "failover": lambda job, lb: "FAILOVER",
}


def _id_text(k: int) -> str:
    return "EOI" if k == EOI else str(k)


# A line for each consequence of a step (its notes) and how it colours the cell.
_NOTE_TEXT = {
    "snapshot": lambda job, n: (f"snapshot {n[2]}", "snapshot"),
    "completed": lambda job, n: (f"checkpoint {n[1]} COMPLETED", "good"),
    "aborted": lambda job, n: (f"checkpoint {n[1]} ABORTED ({n[2].removeprefix('CHECKPOINT_')})", "bad"),
    "committed": lambda job, n: ("commits " + ", ".join(_id_text(k) for k in n[2]), "good"),
    "committable": lambda job, n: (f"committable {_id_text(n[2])} -> committer", "snapshot"),
    "cancelled": lambda job, n: ("cancels " + ", ".join(map(str, n[2])), "bad"),
    "triggered": lambda job, n: (f"checkpoint {n[1]} -> " + ", ".join(
        job.name(t) for t in range(len(job.tasks)) if n[2] >> t & 1), "plain"),
    "trigger-declined": lambda job, n: (f"declines {n[2]} (finished)", "bad"),
    "trigger-lost": lambda job, n: (f"RPC {n[2]} lost (finished)", "bad"),
    "plan-declined": lambda job, n: (f"plan declined: {n[1]}", "bad"),
    "finalize-failed": lambda job, n: (f"finalize {n[1]} fails", "bad"),
    "failover": lambda job, n: (f"restore checkpoint {n[1]}" if n[1] else "restart from scratch", "bad"),
    "end-of-data-trigger": lambda job, n: ("believes every task ended its data", "plain"),
    "polled-released": lambda job, n: ("CancelTaskException: CANCELED", "bad"),
    "savepoint-declined": lambda job, n: (f"declines savepoint {n[2]} (end of data)", "bad"),
    "stopped": lambda job, n: (f"savepoint {n[2]} done: stops", "plain"),
}


def _step_text(job: Job, label: tuple) -> str:
    text = _STEP_TEXT.get(label[0])
    return text(job, label) if text else " ".join(map(str, label))


def _note_text(job: Job, note: tuple) -> tuple[str, str] | None:
    text = _NOTE_TEXT.get(note[0])
    return text(job, note) if text else None


class _Mailboxes:
    """Who sent each message still on its way, so a receipt can point back at its sending step."""

    def __init__(self):
        self.waiting = defaultdict(list)   # (kind, key) -> [(message, row, lane), ...] oldest first

    def sent(self, key, message, row: int, lane: str) -> None:
        self.waiting[key].append((message, row, lane))

    def received(self, key, message=None):
        for i, (m, row, lane) in enumerate(self.waiting[key]):
            if message is None or m == message:
                del self.waiting[key][i]
                return row, lane
        return None

    def track(self, job: Job, before, after, row: int, lane: str) -> None:
        """Record every message ``after`` has on its way that ``before`` had not."""
        for c, (old, new) in enumerate(zip(before.queues, after.queues)):
            for message, count in (Counter(new) - Counter(old)).items():
                for _ in range(count):
                    self.sent(("channel", c), message, row, lane)
        for t in range(len(job.tasks)):
            for k in (Counter(after.rpcs[t]) - Counter(before.rpcs[t])):
                self.sent(("rpc", t), k, row, lane)
            old_acks = {k for k, _ in before.tasks[t].outbox}
            for k, _ in after.tasks[t].outbox:
                if k not in old_acks:
                    self.sent(("ack", t), k, row, lane)
            if after.notifications[t] and after.notifications[t] != before.notifications[t]:
                self.waiting[("notify", t)] = [(None, row, lane)]
        new_reports = after.coordinator.finished_reports & ~before.coordinator.finished_reports
        for t in range(len(job.tasks)):
            if new_reports >> t & 1:
                self.sent(("report", t), None, row, lane)

    def receipt(self, job: Job, label: tuple):
        """``(arrow kind, (row, lane) of the sending step)`` of a receiving step, or None."""
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
    if phase == CANCELED:
        return 'color="#c62828" style=dotted'
    if phase == END_OF_DATA:
        return 'color="#e08a00"'
    return "color=grey60"


def chart_source(job: Job, steps, title: str, subtitle: str = "") -> str:
    """The DOT source of the chart of ``steps`` (:func:`flipcheck.properties.protocol_explore.replay`);
    the last step is the one that violated the property (when ``title`` names one)."""
    # Lanes are named by position: vertex names come from user files and need not be DOT ids.
    actors = ["coordinator"] + [job.name(t) for t in range(len(job.tasks))]
    lanes = ["coordinator"] + [f"t{t}" for t in range(len(job.tasks))]
    lane_of = dict(zip(actors, lanes))
    chart = LaneChart("protocol", lanes, title, subtitle or
                      "orange lane: end of data reached   dotted lane: finished (red: cancelled)   ⟲ step of the lasso's cycle")
    chart.row(dict(zip(lanes, actors)), header=True)
    mailboxes = _Mailboxes()
    before = initial_state(job)
    for index, step in enumerate(steps, 1):
        lane = lane_of[actor_of(job, step.label)]
        lines, fill = [("⟲ " if step.loop else "") + _step_text(job, step.label)], "plain"
        for note in step.notes:
            described = _note_text(job, note)
            if described is not None:
                lines.append(described[0])
                if described[1] != "plain" and fill != "bad":
                    fill = described[1]
        if step.label[0] == "finish" and fill == "plain":
            fill = "finish"
        style = f'shape=box style="rounded,filled" fillcolor="{_FILL[fill]}"'
        if index == len(steps):
            style += f' penwidth=3 color="{_RED}"'
        chart.row({lane: ("\\n".join(lines), style)})
        chart.segment("coordinator", index)
        for t in range(len(job.tasks)):
            chart.segment(f"t{t}", index, _lane_look(before.tasks[t].phase))
        receipt = mailboxes.receipt(job, step.label)
        if receipt is not None and receipt[1] is not None:
            kind, (row, sender) = receipt
            chart.arrow(sender, row, lane, index, _ARROW[kind])
        if step.label[0] == "failover":
            mailboxes = _Mailboxes()  # everything on its way is lost
        mailboxes.track(job, before, step.state, index, lane)
        before = step.state
    return chart.source()


def render_trace(job: Job, steps, path: str, title: str, subtitle: str = "") -> str:
    """Write the chart to ``path`` (format from the extension: .svg or .png)."""
    from flipcheck.render.core import render_source

    return render_source(chart_source(job, steps, title, subtitle), path)
