"""One encoding of a trace's steps, for every JSON output and every text report.

A step of a counterexample is a JSON object with at least:

* ``actor``: who takes the step: a task (``vertex[subtask]``), ``coordinator``, or a channel
  (``source[i]->target[j]``) for a design whose channels act on their own;
* ``action``: the kind of step, the name the model's label gives it (``emit``, ``receive``,
  ``trigger``, ...);
* ``checkpoint_id``: the checkpoint the step is about (an int), or null;
* ``sentence``: the step in words, as the text output prints it;
* ``loop``: whether the step is part of a lasso's cycle (a run that never ends the job).

A design may add its own fields (the protocol adds ``rules``, the model's rules the step took,
and ``label``, the model's label as a JSON list). ``flipcheck explore --json``, ``flipcheck
verify --json``, a sweep's summary.json and counterexamples/*.json, and ``flipcheck replay
--json`` all use it (docs/protocol.md, "Reading a trace").

>>> step = trace_step("src[0]", "emit", None, "src[0] emits record r0")
>>> step
{'actor': 'src[0]', 'action': 'emit', 'checkpoint_id': None, 'sentence': 'src[0] emits record r0', 'loop': False}
>>> step_lines([step, trace_step("coordinator", "trigger", 1, "coordinator triggers a checkpoint", loop=True)])
['    1. src[0] emits record r0', '    2. loop: coordinator triggers a checkpoint']
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["STEP_FIELDS", "trace_step", "step_text", "step_lines"]

# The fields every step has, in this order (a design may add more after them).
STEP_FIELDS = ("actor", "action", "checkpoint_id", "sentence", "loop")


def trace_step(actor: str, action: str, checkpoint_id: int | None, sentence: str, loop: bool = False,
               **more) -> dict:
    """One step as JSON: the common fields (:data:`STEP_FIELDS`), then a design's own ``more``."""
    return {"actor": actor, "action": action, "checkpoint_id": checkpoint_id, "sentence": sentence, "loop": loop,
            **more}


def step_text(step: dict | str) -> str:
    """A step as one line of text: its sentence, marked ``loop:`` in a lasso's cycle (a plain
    string is already a line)."""
    if isinstance(step, str):
        return step
    return ("loop: " if step.get("loop") else "") + step["sentence"]


def step_lines(steps: Iterable[dict | str], indent: str = "  ") -> list[str]:
    """Numbered lines, one per step, as every report prints a trace."""
    return [f"{indent}{number:3d}. {step_text(step)}" for number, step in enumerate(steps, 1)]
