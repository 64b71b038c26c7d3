"""A step under construction: the one mutable helper of the model.

A rule (:mod:`.tasks`, :mod:`.coordinator`, :mod:`.failover`) applies its changes to a
:class:`Step`, which holds copies of the parts of a :class:`~.state.JobState` that a step may
change, and the *notes* that say what the step caused (snapshots, completions, aborts, commits,
...) for the properties and the traces. :meth:`Step.freeze` turns it into the next state; the
state it started from is never changed.

>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]))
>>> before = initial_state(job)
>>> step = Step(job, before)
>>> step.send(0, ("D", 0))
>>> step.freeze().queues, before.queues
(((('D', 0),),), ((),))
"""

from __future__ import annotations

from .state import JobState
from .structure import Job

__all__ = ["Step", "Steps", "replaced"]


def replaced(values: tuple, index: int, value) -> tuple:
    """``values`` with the entry at ``index`` replaced by ``value``."""
    return values[:index] + (value,) + values[index + 1:]


class Step:
    """Mutable copies of a state's parts while one step is applied; :meth:`freeze` makes the
    next :class:`~.state.JobState`. ``notes`` says what happened, for properties and traces."""

    __slots__ = ("job", "tasks", "queues", "received", "rpcs", "notifications", "coord", "committed", "notes")

    def __init__(self, job: Job, s: JobState):
        self.job = job
        self.tasks = list(s.tasks)         # per task, replaced entry by entry
        self.queues = list(s.queues)       # per channel, replaced entry by entry
        self.received = s.received
        self.rpcs = s.rpcs
        self.notifications = s.notifications
        self.coord = s.coordinator
        self.committed = s.committed
        self.notes: list = []

    def freeze(self) -> JobState:
        return JobState(tasks=tuple(self.tasks), queues=tuple(self.queues), received=self.received, rpcs=self.rpcs,
                        notifications=self.notifications, coordinator=self.coord, committed=self.committed)

    def send(self, channel: int, message: tuple) -> None:
        """Append ``message`` to ``channel`` (FIFO)."""
        self.queues[channel] = self.queues[channel] + (message,)

    def broadcast(self, t: int, message: tuple) -> None:
        """Send ``message`` on every output channel of task ``t``."""
        for c in self.job.tasks[t].outputs:
            self.send(c, message)


# What an action returns: ``(label, step)`` for each of its steps enabled in a state.
Steps = list[tuple[tuple, Step]]
