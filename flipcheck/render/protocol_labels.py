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
>>> actor_of(job, ("emit", 0, 0)), actor_of(job, ("ack", 0, 1))
('src[0]', 'coordinator')
"""

from __future__ import annotations

from flipcheck.model.protocol import BARRIER, CANCEL, DATA, EOD, Job

__all__ = ["actor_of", "describe_label"]


def actor_of(job: Job, label: tuple) -> str:
    """Who takes the step: a task name or ``coordinator``."""
    kind = label[0]
    if kind in ("emit", "end-of-data", "receive", "poll-released", "finish", "notify", "rpc"):
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
    if kind == "stop-with-savepoint":
        return "coordinator stops the job with a savepoint without drain (synchronous savepoint)"
    if kind == "failover":
        return "a task fails: every task restarts from the latest completed checkpoint"
    return repr(label)
