"""Saved levels: how the explorers whose driver numbers every state (:mod:`.spark`,
``--master URL``, and :mod:`.workers`, ``--workers N``) resume a killed search.

After a level (every level on Spark; on the workers, every ten seconds or so) the driver writes
its graph and the next level to the resume directory; a run with the same directory and the same
job continues from the last level saved. The fingerprints saved are stable ones
(:func:`~flipcheck.properties.fingerprints.stable_fingerprint`), which a later process computes
alike. Numbers go to flat binary arrays; labels, violations and states to JSON
(:mod:`flipcheck.state_codec`): nothing read back runs code. ``meta.json`` names the exploration (the job, the bounds, the hash seed the
fingerprints were made with), so a directory is never continued by another search. Each level
replaces the last one (``current`` names it), written before ``current`` moves, so a run killed
while saving resumes from the level before.
"""

from __future__ import annotations

import json
import os
import sys
from array import array
from pathlib import Path

from flipcheck.errors import InputError
from flipcheck.state_codec import CodecError, decode, encode
from flipcheck.properties.explore import GraphBuilder, StateGraph
from flipcheck.properties.fingerprints import FingerprintTable
from flipcheck.properties.violation import Violation

__all__ = ["RESUME_FORMAT", "resume_meta", "claim_resume_dir", "write_atomically", "open_saved", "save_level"]

RESUME_FORMAT = 2   # 2: stable fingerprints (a directory saved with process-bound ones is refused)
_ARRAYS = {"parent": "i", "label_index": "i", "depth": "i", "offsets": "q", "targets": "i"}


def resume_meta(spec: dict, max_states: int | None, liveness: bool) -> dict:
    """What names a saved search of the driver-numbered explorers: the job as its expansions
    read it (``spec``), the bounds, the hash seed and the Python version."""
    return {"format": RESUME_FORMAT, "spec": spec, "max_states": max_states, "liveness": liveness,
            "hash_seed": os.environ.get("PYTHONHASHSEED", "0"), "python": list(sys.version_info[:2])}


def open_saved(path: Path, meta: dict):
    """The saved run in ``path`` as ``(builder, depth, truncated, next level)`` (None when there
    is none yet); InputError if it belongs to another exploration or is damaged."""
    current = claim_resume_dir(path, meta)
    if current is None:
        return None
    try:
        return _load_round(current)
    except (OSError, ValueError, KeyError, IndexError, TypeError, CodecError) as error:
        raise InputError(str(path), f"the saved level is damaged: {str(error).splitlines()[0] if str(error) else type(error).__name__}") from None


def claim_resume_dir(path: Path, meta: dict) -> Path | None:
    """The last level saved in ``path`` (None when there is none yet, and ``meta`` is written
    on first use); InputError if ``path`` holds another exploration or cannot be written."""
    meta_file = path / "meta.json"
    if not meta_file.exists():
        try:
            path.mkdir(parents=True, exist_ok=True)
            write_atomically(meta_file, json.dumps(meta, sort_keys=True))
        except OSError as error:
            raise InputError(str(path), f"cannot save the run there: {error.strerror or error}") from None
        return None
    try:
        found = json.loads(meta_file.read_text())
    except (OSError, ValueError) as error:
        raise InputError(str(meta_file), f"cannot read the saved run: {error}") from None
    if found != json.loads(json.dumps(meta, sort_keys=True)):
        differs = sorted(k for k in set(found) | set(meta) if found.get(k) != meta.get(k)) if isinstance(found, dict) else ["all"]
        raise InputError(str(path), f"holds another exploration (differs in: {', '.join(differs)}); "
                                    "use another --resume-dir, or delete it")
    current = path / "current"
    if not current.exists():
        return None
    return path / current.read_text().strip()


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def save_level(path: Path, builder: GraphBuilder, depth: int, truncated: bool, items: list) -> None:
    """Write the graph and the next level as round ``depth``, then point ``current`` at it."""
    try:
        _write_round(path, builder, depth, truncated, items)
    except OSError as error:
        raise InputError(str(path), f"cannot save level {depth}: {error.strerror or error}") from None


def _write_round(path: Path, builder: GraphBuilder, depth: int, truncated: bool, items: list) -> None:
    graph = builder.graph
    name = f"round-{depth:06d}"
    target = path / name
    target.mkdir(parents=True, exist_ok=True)
    for field, _ in _ARRAYS.items():
        with open(target / f"{field}.bin", "wb") as out:
            getattr(graph, field).tofile(out)
    (target / "marks.bin").write_bytes(bytes(graph.marks))
    keys, numbers = graph.fingerprints.arrays()
    with open(target / "keys.bin", "wb") as out:
        keys.tofile(out)
    with open(target / "numbers.bin", "wb") as out:
        numbers.tofile(out)
    document = {"depth": depth, "truncated": truncated, "transitions": graph.transitions, "expanded": graph.expanded,
                "reduced": graph.reduced,
                "edges": graph.edges, "used": len(graph.fingerprints), "deadlocks": graph.deadlocks,
                "finals": graph.finals, "labels": [encode(label) for label in graph.labels],
                "problems": {name_: [i, encode(label), [[p.property, p.message, _plain(p.witness)] for p in found]]
                             for name_, (i, label, found) in graph.problems.items()}}
    (target / "graph.json").write_text(json.dumps(document))
    with open(target / "frontier.jsonl", "w") as out:
        for key, (number, state) in items:
            out.write(json.dumps([key, number, encode(state)]) + "\n")
    write_atomically(path / "current", name)
    for old in path.glob("round-*"):
        if old.name != name:
            for file in old.iterdir():
                file.unlink()
            old.rmdir()


def _plain(witness):
    try:
        return encode(witness)
    except CodecError:
        return None


def _read_array(path: Path, code: str) -> array:
    values = array(code)
    data = path.read_bytes()
    if len(data) % values.itemsize:
        raise ValueError(f"{path.name} is cut short")
    values.frombytes(data)
    return values


def _load_round(target: Path):
    document = json.loads((target / "graph.json").read_text())
    graph = StateGraph(edges=bool(document["edges"]))
    for field, code in _ARRAYS.items():
        setattr(graph, field, _read_array(target / f"{field}.bin", code))
    graph.marks = bytearray((target / "marks.bin").read_bytes())
    graph.fingerprints = FingerprintTable.from_arrays(_read_array(target / "keys.bin", "q"),
                                                      _read_array(target / "numbers.bin", "i"))
    states, expanded = len(graph.parent), int(document["expanded"])
    if len(graph.fingerprints) != states or document["used"] != states:
        raise ValueError("the fingerprint table does not match the graph")
    if not (len(graph.label_index) == len(graph.depth) == len(graph.marks) == states) or expanded > states:
        raise ValueError("the graph's arrays differ in length")
    if graph.edges and (len(graph.offsets) != expanded + 1 or graph.offsets[-1] != len(graph.targets)):
        raise ValueError("the edges do not match the expanded states")
    graph.labels = [decode(label) for label in document["labels"]]
    builder = GraphBuilder.continuing(graph)
    if any(not -1 <= k < len(graph.labels) for k in graph.label_index) or \
            any(not -1 <= j < states for j in graph.parent) or any(not -1 <= j < states for j in graph.targets):
        raise ValueError("a number points outside the graph")
    graph.transitions, graph.expanded = int(document["transitions"]), expanded
    graph.reduced = int(document.get("reduced", 0))
    graph.deadlocks, graph.finals = [int(i) for i in document["deadlocks"]], [int(i) for i in document["finals"]]
    graph.problems = {str(name): (int(i), decode(label), [Violation(str(p), str(m), decode(w)) for p, m, w in found])
                      for name, (i, label, found) in document["problems"].items()}
    items = []
    with open(target / "frontier.jsonl") as lines:
        for line in lines:
            key, number, state = json.loads(line)
            if not isinstance(key, int) or not isinstance(number, int) or not expanded <= number < states:
                raise ValueError("a frontier line names no unexpanded state")
            items.append((key, (number, decode(state))))
    return builder, int(document["depth"]), bool(document["truncated"]), items
