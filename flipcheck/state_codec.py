"""Whole-job states and step labels as plain JSON, and back: for files a run writes and may read again.

A resumable exploration (``flipcheck explore --master URL --resume-dir DIR``) writes the states of
its next level to disk. Reading them back must never run code from the file, so states are not
pickled: a tuple becomes a JSON list, and a named tuple ``{"n": name, "f": [fields]}`` where
``name`` must be one of the model's state classes (:data:`STATE_CLASSES`). Anything else is
refused with :class:`CodecError`.

Example
-------
>>> from flipcheck.generators.protocol import example_graph
>>> from flipcheck.model.protocol import Job, initial_state
>>> state = initial_state(Job(example_graph("pair"), records=1))
>>> decode(json.loads(json.dumps(encode(state)))) == state
True
>>> decode({"n": "os.system", "f": []})
Traceback (most recent call last):
    ...
flipcheck.state_codec.CodecError: unknown state class 'os.system'
"""

from __future__ import annotations

import json  # noqa: F401 - used by the example

from flipcheck.model import barriers
from flipcheck.model.protocol import state as protocol_state

__all__ = ["CodecError", "STATE_CLASSES", "encode", "decode"]

#: The named tuples a whole-job state is made of, by name.
STATE_CLASSES = {cls.__name__: cls for cls in (
    protocol_state.JobState, protocol_state.TaskState, protocol_state.Coordinator, protocol_state.Pending,
    protocol_state.RestorePoint, protocol_state.Snapshot, barriers.HandlerState, barriers.TrackerState,
    barriers.Entry)}

_MAX_DEPTH = 64


class CodecError(ValueError):
    """A document that is not an encoded state; the message is one line."""


def encode(value):
    """``value`` (None, bool, int, str, tuples and :data:`STATE_CLASSES`) as JSON data."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, tuple):
        fields = [encode(item) for item in value]
        name = type(value).__name__
        if type(value) is tuple:
            return fields
        if STATE_CLASSES.get(name) is not type(value):
            raise CodecError(f"cannot encode a {name}")
        return {"n": name, "f": fields}
    raise CodecError(f"cannot encode a {type(value).__name__}")


def decode(data, depth: int = 0):
    """The value :func:`encode` gave ``data`` for; CodecError for anything else."""
    if depth > _MAX_DEPTH:
        raise CodecError("nested too deeply")
    if data is None or isinstance(data, (bool, int, str)):
        return data
    if isinstance(data, list):
        return tuple(decode(item, depth + 1) for item in data)
    if isinstance(data, dict) and set(data) == {"n", "f"} and isinstance(data["f"], list):
        cls = STATE_CLASSES.get(data["n"]) if isinstance(data["n"], str) else None
        if cls is None:
            raise CodecError(f"unknown state class {data['n']!r}")
        fields = [decode(item, depth + 1) for item in data["f"]]
        if len(fields) != len(cls._fields):
            raise CodecError(f"{data['n']} takes {len(cls._fields)} fields, got {len(fields)}")
        return cls(*fields)
    raise CodecError(f"not an encoded state: {type(data).__name__}")
