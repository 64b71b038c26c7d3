"""The job-graph JSON format, flipcheck's public input contract.

::

    {"vertices": [{"id": "src", "parallelism": 4}, ...],
     "edges": [{"source": "src", "target": "map", "pattern": "ALL_TO_ALL" | "POINTWISE"}, ...],
     "states": {"src": ["FINISHED", "RUNNING", ...]},   # optional; default every task RUNNING
     "checkpoints_after_tasks_finished": true}          # optional; default true

Vertex order is arbitrary. Unknown keys on a vertex are kept in ``JobVertex.extra`` (later models
read per-vertex flags from there). Every problem is reported as a :class:`GraphFormatError` whose
message names the field and the problem, e.g. ``vertices[1].parallelism: 0 is outside 1..32768``.

Example
-------
>>> g = parse_graph({"vertices": [{"id": "b", "parallelism": 2}, {"id": "a", "parallelism": 2}],
...                  "edges": [{"source": "a", "target": "b", "pattern": "POINTWISE"}]})
>>> g.topological_order
('a', 'b')
>>> parse_graph({"vertices": []})
Traceback (most recent call last):
...
flipcheck.model.graph_json.GraphFormatError: vertices: no vertices
"""

from __future__ import annotations

import json
import re
import unicodedata
from types import MappingProxyType
from typing import Any

from .jobgraph import (
    EXECUTION_STATES,
    MAX_PARALLELISM,
    PATTERNS,
    RUNNING,
    GraphStructureError,
    JobEdge,
    JobGraph,
    JobVertex,
    vertex_flag_problem,
)

__all__ = [
    "GraphFormatError",
    "parse_graph",
    "load_graph",
    "loads_graph",
    "decode_json",
    "read_input_file",
    "graph_to_json",
    "dumps_graph",
    "id_problem",
    "MAX_INPUT_BYTES",
    "MAX_ID_LENGTH",
]

# "faults": specs of faults at protocol points that `flipcheck flink run` injects (flipcheck/flink/faults.py
# checks them); like "comment", the model reads nothing from it.
_TOP_LEVEL_KEYS = {"vertices", "edges", "states", "checkpoints_after_tasks_finished", "name", "comment", "faults"}
_EDGE_KEYS = {"source", "target", "pattern"}
_VALID_STATES = frozenset(EXECUTION_STATES)


class GraphFormatError(ValueError):
    """A job-graph document that does not follow the format; the message is one line."""


def _fail(where: str, problem: str) -> GraphFormatError:
    return GraphFormatError(f"{where}: {problem}")


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


# Characters an id may not hold: they move the cursor, end a line or a string, or reorder text
# on a terminal (ESC, NUL, CR, LF, U+2028, bidi overrides), or are not text at all (a lone
# surrogate cannot be written as UTF-8, so every table, picture and solver would fail on it).
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
# Ids name things in tables and pictures; graphviz refuses labels of about 16,000 characters,
# and a long name belongs in a vertex's "name" (import-plan keeps Flink's names there).
MAX_ID_LENGTH = 1_000


def id_problem(text: str) -> str | None:
    """Why ``text`` cannot be an id (None when it can): longer than MAX_ID_LENGTH, or holding
    control characters, line separators, bidi controls or lone surrogates."""
    if len(text) > MAX_ID_LENGTH:
        return f"longer than {MAX_ID_LENGTH:,} characters ({len(text):,})"
    if text.isprintable():
        return None
    for position, char in enumerate(text):
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES or char in _BIDI_CONTROLS:
            kind = "a lone surrogate" if unicodedata.category(char) == "Cs" else "a control character"
            return f"holds {kind} ({char!r} at position {position})"
    return None


def _expect_id(value: Any, where: str) -> str:
    _expect(value, str, where, "a string")
    problem = id_problem(value)
    if problem:
        raise _fail(where, problem)
    return value


def _expect(value: Any, kind: type, where: str, what: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _fail(where, f"expected {what}, got {_type_name(value)}")
    return value


def parse_graph(document: Any) -> JobGraph:
    """Validate a decoded JSON document and build the :class:`JobGraph` it describes."""
    _expect(document, dict, "top level", "an object")
    unknown = sorted(set(document) - _TOP_LEVEL_KEYS)
    if unknown:
        raise _fail(unknown[0], f"unknown key (expected one of {', '.join(sorted(_TOP_LEVEL_KEYS))})")
    if "vertices" not in document:
        raise _fail("vertices", "missing key")
    raw_vertices = _expect(document["vertices"], list, "vertices", "an array")
    if not raw_vertices:
        raise _fail("vertices", "no vertices")
    vertices = []
    for n, raw in enumerate(raw_vertices):
        where = f"vertices[{n}]"
        _expect(raw, dict, where, "an object")
        for key in ("id", "parallelism"):
            if key not in raw:
                raise _fail(f"{where}.{key}", "missing key")
        vertex_id = _expect_id(raw["id"], f"{where}.id")
        if not vertex_id:
            raise _fail(f"{where}.id", "empty vertex id")
        parallelism = raw["parallelism"]
        if isinstance(parallelism, float) and parallelism.is_integer():
            raise _fail(f"{where}.parallelism", f"{parallelism} is not an integer")
        _expect(parallelism, int, f"{where}.parallelism", "an integer")
        if not 1 <= parallelism <= MAX_PARALLELISM:
            raise _fail(f"{where}.parallelism", f"{parallelism} is outside 1..{MAX_PARALLELISM}")
        extra = {k: v for k, v in raw.items() if k not in ("id", "parallelism")}
        for key, value in extra.items():
            problem = vertex_flag_problem(key, value)
            if problem:
                raise _fail(f"{where}.{key}", problem)
        vertices.append(JobVertex(vertex_id, parallelism, MappingProxyType(extra)))

    edges = []
    raw_edges = _expect(document.get("edges", []), list, "edges", "an array")
    for n, raw in enumerate(raw_edges):
        where = f"edges[{n}]"
        _expect(raw, dict, where, "an object")
        for key in ("source", "target", "pattern"):
            if key not in raw:
                raise _fail(f"{where}.{key}", "missing key")
        unknown = sorted(set(raw) - _EDGE_KEYS)
        if unknown:
            raise _fail(f"{where}.{unknown[0]}", "unknown key (expected source, target, pattern)")
        source = _expect_id(raw["source"], f"{where}.source")
        target = _expect_id(raw["target"], f"{where}.target")
        pattern = _expect(raw["pattern"], str, f"{where}.pattern", "a string")
        if pattern not in PATTERNS:
            raise _fail(f"{where}.pattern", f"unknown pattern {pattern!r} (expected ALL_TO_ALL or POINTWISE)")
        edges.append(JobEdge(source, target, pattern))

    states = {}
    raw_states = _expect(document.get("states", {}), dict, "states", "an object")
    for vertex_id, vertex_states in raw_states.items():
        problem = id_problem(vertex_id)
        if problem:
            raise _fail(f"states key {vertex_id!r}", problem)
        where = f"states.{vertex_id}"
        _expect(vertex_states, list, where, "an array of state names")
        # The subset test runs at C speed (millions of states); only on failure do we look for
        # the position. Non-strings are never members, unhashable ones raise TypeError.
        try:
            all_valid = _VALID_STATES.issuperset(vertex_states)
        except TypeError:
            all_valid = False
        if not all_valid:
            for k, state in enumerate(vertex_states):
                if not isinstance(state, str):
                    raise _fail(f"{where}[{k}]", f"expected a state name, got {_type_name(state)}")
                if state not in _VALID_STATES:
                    raise _fail(f"{where}[{k}]", f"unknown state {state!r} (expected one of {', '.join(EXECUTION_STATES)})")
        states[vertex_id] = vertex_states

    flag = document.get("checkpoints_after_tasks_finished", True)
    _expect(flag, bool, "checkpoints_after_tasks_finished", "a boolean")
    try:
        return JobGraph(tuple(vertices), tuple(edges), states, flag)
    except GraphStructureError as error:
        raise GraphFormatError(str(error)) from None


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise GraphFormatError(f"{key}: duplicate key in one object")
            seen.add(key)
    return document


def _reject_constant(name: str) -> Any:
    raise GraphFormatError(f"{name} is not a JSON number")


# Where a lone surrogate can come from: a \ud800-style escape, or UTF-8-encoded surrogate bytes
# (which json.loads decodes with "surrogatepass"). Only then is the document walked.
_SURROGATE_HINT = {bytes: re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]"),
                   str: re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any, where: str) -> str | None:
    """The field of the first string (or key) holding a lone surrogate, or None."""
    if isinstance(value, str):
        return where if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                return f"{where}: key {key!r}" if where else f"key {key!r}"
            found = _lone_surrogate(item, f"{where}.{key}" if where else key)
            if found:
                return found
    elif isinstance(value, list):
        for n, item in enumerate(value):
            found = _lone_surrogate(item, f"{where}[{n}]")
            if found:
                return found
    return None


def decode_json(text: str | bytes, error_type: type[ValueError] = GraphFormatError, *, strict_keys: bool = True) -> Any:
    """Decode JSON text; invalid JSON, absurd nesting, non-UTF-8 bytes, NaN and Infinity, a lone
    surrogate anywhere (not Unicode text) and (with ``strict_keys``) a key repeated in one object
    become ``error_type`` with a one-line message."""
    try:
        hook = _reject_duplicate_keys if strict_keys else None
        document = json.loads(text, object_pairs_hook=hook, parse_constant=_reject_constant)
        if _SURROGATE_HINT[str if isinstance(text, str) else bytes].search(text):
            where = _lone_surrogate(document, "")
            if where:
                raise GraphFormatError(f"{where or 'top level'}: lone surrogate in a string (not Unicode text)")
        return document
    except GraphFormatError as error:
        raise error_type(str(error)) from None
    except RecursionError:
        raise error_type("nesting too deep") from None
    except UnicodeDecodeError as error:
        raise error_type(f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise error_type(f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None
    except ValueError as error:  # an integer literal beyond Python's digit limit
        raise error_type(f"invalid JSON: a number with more digits than can be read ({str(error).split(':')[0][:80]})") from None


# Far above any job graph or plan (a million task states are about 12 MB of JSON); stops a read
# of /dev/zero or a mistaken multi-gigabyte file before it exhausts memory.
MAX_INPUT_BYTES = 256 * 1024 * 1024


def read_input_file(path: str, error_type: type[ValueError] = GraphFormatError) -> bytes:
    """The bytes of an input file; an unreadable or oversized (> MAX_INPUT_BYTES) file becomes
    ``error_type``."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as error:
        raise error_type(f"cannot read file ({error.strerror})") from None
    except ValueError:  # a NUL in the path
        raise error_type("cannot read file (the path holds a NUL character)") from None
    if len(data) > MAX_INPUT_BYTES:
        raise error_type(f"file larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
    return data


def loads_graph(text: str | bytes) -> JobGraph:
    """Parse JSON text; invalid JSON, absurd nesting and format errors become GraphFormatError."""
    return parse_graph(decode_json(text))


def load_graph(path: str) -> JobGraph:
    """Read a graph file; an unreadable file raises GraphFormatError too."""
    return loads_graph(read_input_file(path))


def graph_to_json(graph: JobGraph, *, include_states: bool = True) -> dict[str, Any]:
    """The document that :func:`parse_graph` turns back into ``graph``."""
    document: dict[str, Any] = {
        "vertices": [{"id": v.id, "parallelism": v.parallelism, **dict(v.extra)} for v in graph.vertices],
        "edges": [{"source": e.source, "target": e.target, "pattern": e.pattern} for e in graph.edges],
    }
    if include_states:
        non_default = {v: list(s) for v, s in graph.states.items() if any(x != RUNNING for x in s)}
        if non_default:
            document["states"] = non_default
    document["checkpoints_after_tasks_finished"] = graph.checkpoints_after_tasks_finished
    return document


def dumps_graph(graph: JobGraph) -> str:
    return json.dumps(graph_to_json(graph))
