"""Trace validation of Flink's approximate subpartition: does the real component do what the
model's rules S1-S6 say?

``flipcheck flink component approximate-recovery`` feeds the same event sequences
(:data:`~flipcheck.generators.approximate_recovery.COMPONENT_SEQUENCES`) to three
implementations of one subpartition: the model (:func:`~flipcheck.model.approximate_recovery.subpartition_step`),
the reference engine (a variant's ``subpartition_harness``) and Flink's own
``PipelinedApproximateSubpartition`` behind its writer (``flipcheck/flink/component.py``). Each
answers every event with a tuple of outputs in the model's vocabulary (``view_created``,
``view_released``, ``rejected``, ``none``, ``data`` with stream offsets, ``event``,
``partition_released``); Flink's harness adds ``error`` (Flink threw) and ``garbled`` (a slice
whose bytes are not consecutive). This module compares them, step by step.

A sequence's verdict on Flink:

* ``agrees`` — Flink's outputs are the model's at every step;
* ``known`` — they differ, and ``flink-shipped`` (the engine with Flink's documented departures
  from the seed, :mod:`~flipcheck.reference_impl.approximate_recovery_variants`) predicts Flink's
  outputs at every step: the difference is a known one, and ``properties`` names the seed
  property Flink's trace breaks;
* ``differs`` — neither: the model and Flink part at ``step``.

The reference engine is held to the model on the same sequences (``engine_step``: the first
step where they part, or None), so a buggy engine variant shows here too.

Example
-------
>>> from flipcheck.model.approximate_recovery import emit, connect, poll, release_view
>>> events = (emit(6), connect(0), poll(0), release_view(0), emit(2), connect(1), poll(1))
>>> model = model_outputs(4, events)
>>> model[-1]                                  # the rest of record 0 (bytes 4..6) is dropped
(('data', 1, 0, 6, 8),)
>>> judge("doc", 4, events, model).verdict
'agrees'
>>> half_record = model[:-1] + ((("data", 1, 0, 4, 6),),)   # a component that forgot to clean up
>>> verdict = judge("doc", 4, events, half_record)
>>> verdict.verdict, verdict.step, verdict.properties
('differs', 6, ('first_data_at_record_boundary',))
>>> describe_reading(4, events, model)
'attempt 0 read bytes 0..4 (record 0 in part); attempt 1 read bytes 6..8 (record 1); dropped bytes 4..6 (the rest of record 0)'
"""

from __future__ import annotations

from typing import Iterable, Mapping, NamedTuple, Sequence

from flipcheck.model import approximate_recovery as spec
from flipcheck.reference_impl.approximate_recovery_variants import engine as make_engine

from .approximate_recovery_properties import check_subpartition_trace

__all__ = ["AGREES", "KNOWN", "DIFFERS", "SHIPPED_VARIANT", "SequenceVerdict", "model_outputs", "engine_outputs",
           "first_difference", "judge", "validate_sequences", "describe_reading"]

AGREES, KNOWN, DIFFERS = "agrees", "known", "differs"
# The engine with Flink's documented departures from the seed: it predicts a known difference.
SHIPPED_VARIANT = "flink-shipped"


class SequenceVerdict(NamedTuple):
    name: str
    verdict: str                  # AGREES, KNOWN or DIFFERS (Flink against the model)
    step: int | None              # the first step (0-based) where Flink and the model part
    model: tuple                  # per step, the model's outputs
    flink: tuple                  # per step, Flink's outputs
    engine: tuple                 # per step, the reference engine's outputs
    engine_step: int | None       # the first step where the reference engine and the model part
    properties: tuple             # subpartition properties Flink's trace violates, in order


def model_outputs(capacity: int, events: Iterable[tuple]) -> tuple:
    """The model's outputs, one tuple per event (rules S1-S6)."""
    state, outputs = spec.initial_subpartition(capacity), []
    for event in events:
        state, out = spec.subpartition_step(state, event)
        outputs.append(out)
    return tuple(outputs)


def engine_outputs(variant: str, capacity: int, events: Iterable[tuple]) -> tuple:
    """The reference engine's (``variant``'s) outputs, one tuple per event."""
    harness = make_engine(variant).subpartition_harness(capacity)
    return tuple(harness.process(event) for event in events)


def first_difference(expected: Sequence[tuple], observed: Sequence[tuple]) -> int | None:
    """The first step whose outputs differ (a missing step counts), or None."""
    for index in range(max(len(expected), len(observed))):
        if index >= len(expected) or index >= len(observed) or expected[index] != observed[index]:
            return index
    return None


def judge(name: str, capacity: int, events: Sequence[tuple], flink: Sequence[tuple],
          variant: str = "flip135") -> SequenceVerdict:
    """One sequence's verdict (see the module docstring)."""
    events, flink = tuple(events), tuple(tuple(step) for step in flink)
    model = model_outputs(capacity, events)
    step = first_difference(model, flink)
    if step is None:
        verdict = AGREES
    elif first_difference(engine_outputs(SHIPPED_VARIANT, capacity, events), flink) is None:
        verdict = KNOWN
    else:
        verdict = DIFFERS
    engine = engine_outputs(variant, capacity, events)
    broken = tuple(v.property for v in check_subpartition_trace(zip(events, flink)))
    return SequenceVerdict(name, verdict, step, model, flink, engine, first_difference(model, engine), broken)


def validate_sequences(sequences: Iterable, observed: Mapping[str, Sequence[tuple]],
                       variant: str = "flip135") -> list[SequenceVerdict]:
    """A verdict per sequence (``name``, ``capacity``, ``events``), Flink's outputs from
    ``observed[name]``; a sequence Flink's transcript lacks differs at its first step."""
    return [judge(s.name, s.capacity, s.events, observed.get(s.name, ()), variant) for s in sequences]


def _records(capacity: int, events: Iterable[tuple]) -> list[tuple[int, int]]:
    """``(start, end)`` of each record written before the partition was released."""
    state, records = spec.initial_subpartition(capacity), []
    for event in events:
        if event[0] == "emit" and not state.released:
            records.append((state.written, state.written + event[1]))
        state, _ = spec.subpartition_step(state, event)
    return records


def describe_reading(capacity: int, events: Sequence[tuple], outputs: Sequence[tuple]) -> str:
    """What each attempt read, in records, and which bytes no attempt got before a later one read
    on (the dropped rest of a partial record); one line."""
    records = _records(capacity, events)
    read: dict[int, list[tuple[int, int]]] = {}
    for step in outputs:
        for out in step:
            if out[0] == "data":
                spans = read.setdefault(out[1], [])
                if spans and spans[-1][1] == out[3]:
                    spans[-1] = (spans[-1][0], out[4])
                else:
                    spans.append((out[3], out[4]))

    def which(low: int, high: int) -> str:
        parts = []
        for number, (start, end) in enumerate(records):
            if start < high and low < end:
                parts.append(f"record {number}" + ("" if low <= start and end <= high else " in part"))
        return ", ".join(parts) or "no record"

    words = [f"attempt {attempt} read " + ", ".join(f"bytes {low}..{high} ({which(low, high)})" for low, high in spans)
             for attempt, spans in sorted(read.items())]
    delivered = sorted(span for spans in read.values() for span in spans)
    gaps, position = [], 0
    for low, high in delivered:
        if low > position:
            gaps.append((position, low))
        position = max(position, high)
    for low, high in gaps:
        rest = [number for number, (start, end) in enumerate(records) if start < low < end or (start == low and high < end)]
        words.append(f"dropped bytes {low}..{high}" + (f" (the rest of record {rest[0]})" if rest else ""))
    return "; ".join(words) if words else "nothing read"
