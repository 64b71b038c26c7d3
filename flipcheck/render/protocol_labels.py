"""What a step of the whole-job model says, in words (:mod:`flipcheck.model.protocol` labels).

The model names each step with a label tuple such as ``("emit", 0, 3)``; this module turns
labels into the lines of traces (``flipcheck explore``, ``flipcheck verify``) and tells the
sequence chart whose lane a step belongs to.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state, successors
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=1)
>>> [describe_label(job, label) for label, _, _ in successors(job, initial_state(job))]
['src[0] emits record r0', 'coordinator triggers a checkpoint']
>>> chart_lane_of(job, ("emit", 0, 0)), chart_lane_of(job, ("ack", 0, 1))
('src[0]', 'coordinator')

A replayed trace as JSON (:mod:`flipcheck.render.trace_steps`, with the model's rules and label):

>>> from flipcheck.properties.protocol_explore import replay
>>> trace_json(job, replay(job, [("trigger", 1), ("rpc", 0, 1)]))[1]  # doctest: +NORMALIZE_WHITESPACE
{'actor': 'src[0]', 'action': 'rpc', 'checkpoint_id': 1, 'sentence': 'src[0] receives the trigger RPC of
 checkpoint 1', 'loop': False, 'rules': ['C4', 'J5'], 'label': ['rpc', 0, 1]}
"""

from __future__ import annotations

from flipcheck.model.protocol import BARRIER, CANCEL, DATA, EOD, Job, initial_state, rules_of
from flipcheck.render.trace_steps import trace_step

__all__ = ["chart_lane_of", "describe_label", "checkpoint_of", "trace_json"]


def chart_lane_of(job: Job, label: tuple) -> str:
    """The sequence chart's lane of the step: the task that takes it (a name), or ``coordinator``
    for the coordinator's steps, an acknowledgement's arrival among them (the coverage
    abstraction sees that step from the task instead: :func:`~flipcheck.properties.protocol_abstraction.viewpoint_of`)."""
    kind = label[0]
    if kind in ("emit", "end-of-data", "receive", "poll-released", "finish", "notify", "rpc", "fail", "fail-decline",
                "shared-decline"):
        return job.name(label[1])
    return "coordinator"


def _message_text(message: tuple) -> str:
    kind = message[0]
    if kind == DATA:
        return f"record r{message[1]}"
    if kind == BARRIER:
        return f"barrier {message[1]}"
    if kind == CANCEL:
        return f"cancellation marker {message[1]}"
    return "EndOfData" if kind == EOD else "EndOfPartition"


def describe_label(job: Job, label: tuple) -> str:
    """One line saying what a step is (without its consequences; see the notes for those)."""
    kind = label[0]
    if kind == "emit":
        return f"{job.name(label[1])} emits record r{label[2]}"
    if kind == "end-of-data":
        return f"{job.name(label[1])} reaches end of data"
    if kind == "receive":
        t, local, message = label[1], label[2], label[3]
        upstream = job.channels[job.tasks[t].inputs[local]].source
        return f"{job.name(t)} polls {_message_text(message)} from {job.name(upstream)}"
    if kind == "poll-released":
        t, local = label[1], label[2]
        upstream = job.channels[job.tasks[t].inputs[local]].source
        return (f"{job.name(t)} polls its input from {job.name(upstream)} again after EndOfPartition released it "
                "(CancelTaskException: cancelled without sending EndOfPartition)")
    if kind == "finish":
        return f"{job.name(label[1])} finishes"
    if kind == "ack":
        return f"coordinator receives {job.name(label[1])}'s acknowledgement of checkpoint {label[2]}"
    if kind == "notify":
        return f"{job.name(label[1])} is notified that checkpoint {label[2]} completed"
    if kind == "rpc":
        return f"{job.name(label[1])} receives the trigger RPC of checkpoint {label[2]}"
    if kind == "report-finished":
        return f"coordinator receives {job.name(label[1])}'s FINISHED report"
    if kind == "trigger":
        return "coordinator triggers a checkpoint"
    if kind == "trigger-fails":
        return "coordinator triggers a checkpoint, and an operator coordinator's snapshot fails it before any task hears of it"
    if kind == "stop-with-savepoint":
        return "coordinator stops the job with a savepoint without drain (synchronous savepoint)"
    if kind == "fail":
        return f"{job.name(label[1])} fails: it stops and declines every trigger RPC until the failover"
    if kind == "fail-decline":
        return f"{job.name(label[1])}'s snapshot of checkpoint {label[2]} threw: it declines it (Task has failed.)"
    if kind == "shared-decline":
        return (f"{job.name(label[1])} declines checkpoint {label[2]}: a failed snapshot aborted the channel-state file "
                "it shares (CHANNEL_STATE_SHARED_STREAM_EXCEPTION)")
    if kind == "failover":
        return "the job fails over: every task restarts from the latest completed checkpoint"
    return repr(label)


def checkpoint_of(label: tuple, notes: tuple = ()) -> int | None:
    """The checkpoint a step is about: the id its label names (a trigger, an RPC, an
    acknowledgement, a notification, a barrier or cancellation marker polled), the checkpoint a
    failover restores (None when it restores none), else None."""
    kind = label[0]
    if kind in ("ack", "notify", "rpc", "fail-decline", "shared-decline"):
        return label[2]
    if kind in ("trigger", "trigger-fails", "stop-with-savepoint"):
        return label[1] if len(label) > 1 else None
    if kind == "receive" and label[3][0] in (BARRIER, CANCEL):
        return label[3][1]
    if kind == "failover":
        restored = next((note[1] for note in notes if note[0] == "failover"), 0)
        return restored or None
    return None


def _as_json(value):
    return [_as_json(v) for v in value] if isinstance(value, tuple) else value


def trace_json(job: Job, steps) -> list[dict]:
    """Replayed steps (:func:`flipcheck.properties.protocol_explore.replay`) as the structured
    steps of every JSON trace: actor, action, checkpoint id, sentence, loop, and the model's
    ``rules`` the step took and its ``label``."""
    encoded, before = [], initial_state(job)
    for step in steps:
        encoded.append(trace_step(chart_lane_of(job, step.label), step.label[0], checkpoint_of(step.label, step.notes),
                                  describe_label(job, step.label), step.loop,
                                  rules=list(rules_of(job, before, step.label, step.notes, step.state)),
                                  label=_as_json(step.label)))
        before = step.state
    return encoded
