"""Task-side barrier handling as an engine implements it, and its named variants.

``HANDLERS`` maps a name to a task class: ``flink`` (Flink as shipped: CheckpointedInputGate,
SingleCheckpointBarrierHandler with its state classes, CheckpointBarrierTracker) and every
variant of :mod:`.variants`. ``make_task(config, name)`` builds one.

>>> sorted(HANDLERS)[:4]
['abort-keeps-channels-blocked', 'announcement-eop-no-alignment-start', 'eop-aborts-pending', 'eop-not-aligned']
>>> from flipcheck.model.barriers import Config, barrier
>>> make_task(Config(channels=1), "flink").process(barrier(7, 0))
(('alignment_start', 7), ('blocked', 0), ('triggered', 7, 'aligned'), ('unblocked', 0), ('completed', 7))

``handler_class`` and ``make_task`` also take a user's own :class:`Task` subclass by spec,
``path/to/file.py:Class`` or ``module:Class`` (:mod:`flipcheck.reference_impl.user_variants`).
"""

from __future__ import annotations

from flipcheck.model.barriers import Config

from ..user_variants import lookup_variant
from .task import Task
from .variants import VARIANTS, BarrierVariant

__all__ = ["HANDLERS", "VARIANTS", "Task", "BarrierVariant", "handler_class", "make_task"]

HANDLERS: dict[str, type[Task]] = {"flink": Task, **VARIANTS}


def handler_class(name: str) -> type[Task]:
    """The task class of handler ``name``, or the user's class a spec names; ValueError otherwise."""
    return lookup_variant(name, HANDLERS, Task, "barrier handler")


def make_task(config: Config, name: str = "flink") -> Task:
    return handler_class(name)(config)
