"""Flink's JSON plans as flipcheck job graphs.

Two shapes Flink prints are read:

* the REST API's ``/jobs/<id>/plan`` (``JsonPlanGenerator``), possibly wrapped as
  ``{"plan": {...}}`` in ``/jobs/<id>`` or ``/jars/<id>/plan``: ``{"jid", "name", "type",
  "nodes": [{"id", "parallelism", "operator", "operator_strategy", "description",
  "inputs": [{"num", "id", "ship_strategy", "exchange"}], "optimizer_properties"}]}``. Its nodes
  are job vertices, operators already chained;
* the execution-plan JSON of ``StreamExecutionEnvironment.getExecutionPlan()``, ``flink info``
  and ``EXPLAIN JSON_EXECUTION_PLAN`` (``JSONGenerator``): ``{"nodes": [{"id": 1, "type",
  "pact", "contents", "parallelism", "predecessors": [{"id", "ship_strategy", "side"}]}]}``. Its
  nodes are operators (stream nodes); ``chain=True`` merges them into job vertices the way
  Flink's default chaining does.

Ship strategies map to distribution patterns as Flink's partitioners do
(``StreamPartitioner.isPointwise``): FORWARD and RESCALE are POINTWISE, every other strategy
(HASH, REBALANCE, BROADCAST, SHUFFLE, GLOBAL, CUSTOM, ...) is ALL_TO_ALL. Names are compared
case-insensitively with spaces and dashes read as underscores ("Forward" is FORWARD).

Chaining (``chain=True``) follows ``StreamingJobGraphGenerator.isChainable``: an operator joins
its input's chain when it has exactly one input, that input is FORWARD and both have the same
parallelism. What the plan JSON does not tell, and so is not modelled: slot-sharing groups,
chaining strategies (``disableChaining()``, ``startNewChain()``, operators that are never
chained), ``pipeline.operator-chaining.enabled=false``, BATCH exchanges, and the chaining of
sources into multiple-input operators. Those only ever split chains, so the result may have
fewer job vertices than Flink's JobGraph, never more.

Vertex ids are readable and unique: the operator's name shortened to a slug plus the Flink
id (``source-socket-stream-1``, ``window-90bea6``). Each vertex keeps the original id in
``flink_id``, the full name in ``name`` and, when operators were chained, their ids in
``chain``.

Example
-------
>>> plan = {"nodes": [
...     {"id": 1, "type": "Source: Socket Stream", "pact": "Data Source", "contents": "Source: Socket Stream",
...      "parallelism": 1},
...     {"id": 2, "type": "Flat Map", "pact": "Operator", "contents": "Flat Map", "parallelism": 1,
...      "predecessors": [{"id": 1, "ship_strategy": "FORWARD", "side": "second"}]},
...     {"id": 4, "type": "Keyed Aggregation", "pact": "Operator", "contents": "Keyed Aggregation",
...      "parallelism": 4, "predecessors": [{"id": 2, "ship_strategy": "HASH", "side": "second"}]}]}
>>> graph = import_plan(plan).graph
>>> [(e.source, e.target, e.pattern) for e in graph.edges]
[('source-socket-stream-1', 'flat-map-2', 'POINTWISE'), ('flat-map-2', 'keyed-aggregation-4', 'ALL_TO_ALL')]
>>> chained = import_plan(plan, chain=True).graph
>>> [(v.id, v.parallelism, v.extra["name"]) for v in chained.vertices]
[('source-socket-stream-1', 1, 'Source: Socket Stream -> Flat Map'), ('keyed-aggregation-4', 4, 'Keyed Aggregation')]
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from flipcheck.model.graph_json import decode_json, read_input_file
from flipcheck.model.jobgraph import (
    ALL_TO_ALL,
    MAX_PARALLELISM,
    POINTWISE,
    GraphStructureError,
    JobEdge,
    JobGraph,
    JobVertex,
)

__all__ = [
    "PlanFormatError",
    "ImportedPlan",
    "REST_PLAN",
    "EXECUTION_PLAN",
    "POINTWISE_STRATEGIES",
    "normalise_strategy",
    "ship_strategy_pattern",
    "detect_format",
    "import_plan",
    "loads_plan",
    "load_plan",
]

REST_PLAN = "REST plan"
EXECUTION_PLAN = "execution plan"
# StreamPartitioner.isPointwise() is true for ForwardPartitioner and RescalePartitioner only.
POINTWISE_STRATEGIES = frozenset({"FORWARD", "RESCALE"})

_REST_KEYS = frozenset({"inputs", "description", "operator", "operator_strategy", "optimizer_properties"})
_EXECUTION_KEYS = frozenset({"predecessors", "contents", "pact", "type"})
_EXPECTED = (
    "expected Flink's REST plan (/jobs/<id>/plan: nodes with inputs, description) or execution-plan JSON "
    "(getExecutionPlan(), flink info: nodes with predecessors, contents)"
)


class PlanFormatError(ValueError):
    """A document that is not a Flink plan this module reads; the message is one line."""


class ImportedPlan(NamedTuple):
    graph: JobGraph
    format: str  # REST_PLAN or EXECUTION_PLAN
    job_name: str | None


@dataclass
class _Operator:
    """One node of the plan: a job vertex (REST plan) or an operator (execution plan)."""

    flink_id: int | str
    name: str
    parallelism: int
    inputs: list[tuple[int | str, str]] = field(default_factory=list)  # (flink id, ship strategy)


def _fail(where: str, problem: str) -> PlanFormatError:
    return PlanFormatError(f"{where}: {problem}")


def normalise_strategy(name: str) -> str:
    """``"Hash Partition on [0]"`` -> ``"HASH_PARTITION_ON_[0]"``, ``"forward"`` -> ``"FORWARD"``."""
    return re.sub(r"[\s\-]+", "_", name.strip()).upper()


def ship_strategy_pattern(name: str) -> str:
    """The distribution pattern of a ship strategy: POINTWISE for FORWARD and RESCALE.

    >>> ship_strategy_pattern("FORWARD"), ship_strategy_pattern("rescale"), ship_strategy_pattern("HASH")
    ('POINTWISE', 'POINTWISE', 'ALL_TO_ALL')
    """
    return POINTWISE if normalise_strategy(name) in POINTWISE_STRATEGIES else ALL_TO_ALL


# -- reading the document -------------------------------------------------------------------


def _unwrap(document: Any) -> dict:
    if not isinstance(document, dict):
        raise _fail("top level", f"expected an object; {_EXPECTED}")
    if "nodes" not in document and "plan" in document:
        plan = document["plan"]
        if isinstance(plan, str):  # some clients store the plan as a JSON string
            try:
                plan = json.loads(plan)
            except (json.JSONDecodeError, RecursionError):
                raise _fail("plan", "a string that is not JSON") from None
        if not isinstance(plan, dict):
            raise _fail("plan", f"expected an object; {_EXPECTED}")
        return plan
    if "vertices" in document and "nodes" not in document:
        raise _fail("top level", "this is already a flipcheck job graph (it has vertices), not a Flink plan")
    return document


def detect_format(document: Any) -> str:
    """REST_PLAN or EXECUTION_PLAN, from the keys the nodes carry (after unwrapping ``plan``)."""
    plan = _unwrap(document)
    if "nodes" not in plan:
        raise _fail("nodes", f"missing key; {_EXPECTED}")
    nodes = plan["nodes"]
    if not isinstance(nodes, list):
        raise _fail("nodes", "expected an array")
    if not nodes:
        raise _fail("nodes", "no nodes")
    keys: set[str] = set()
    for n, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise _fail(f"nodes[{n}]", "expected an object")
        keys.update(node)
    rest, execution = bool(keys & _REST_KEYS), bool(keys & _EXECUTION_KEYS)
    if rest != execution:
        return REST_PLAN if rest else EXECUTION_PLAN
    found = ", ".join(sorted(keys)) or "no keys"
    raise _fail("nodes", f"unknown plan format (nodes have {found}); {_EXPECTED}")


def _flink_id(value: Any, where: str, *, numeric_ok: bool) -> int | str:
    if isinstance(value, str) and value:
        return value
    if numeric_ok and isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _fail(where, "expected a non-empty string" + (" or an integer" if numeric_ok else "") + f", got {value!r}")


def _parallelism(node: dict, where: str) -> int:
    if "parallelism" not in node:
        raise _fail(where, "missing key")
    value = node["parallelism"]
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)  # old DataSet plans print it as a string
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail(where, f"expected an integer, got {value!r}")
    if value == -1:
        raise _fail(where, "-1 is the cluster's default parallelism, which the plan does not tell; put the real one")
    if not 1 <= value <= MAX_PARALLELISM:
        raise _fail(where, f"{value} is outside 1..{MAX_PARALLELISM}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, f"expected a string, got {value!r}")
    return value


def _rest_name(node: dict, where: str) -> str:
    # JsonPlanGenerator HTML-escapes the description and turns newlines into <br/>.
    for key in ("description", "operator"):
        if node.get(key):
            return html.unescape(_text(node[key], f"{where}.{key}").replace("<br/>", " ")).strip()
    return ""


def _operators(plan: dict, fmt: str) -> list[_Operator]:
    rest = fmt == REST_PLAN
    input_key = "inputs" if rest else "predecessors"
    operators: list[_Operator] = []
    seen: dict[int | str, int] = {}
    for n, node in enumerate(plan["nodes"]):
        where = f"nodes[{n}]"
        if "id" not in node:
            raise _fail(f"{where}.id", "missing key")
        flink_id = _flink_id(node["id"], f"{where}.id", numeric_ok=not rest)
        if flink_id in seen:
            raise _fail(f"{where}.id", f"duplicate id {flink_id!r} (also nodes[{seen[flink_id]}])")
        seen[flink_id] = n
        if rest:
            name = _rest_name(node, where)
        else:
            name = _text(node.get("type") or node.get("contents") or "", f"{where}.type").strip()
        operator = _Operator(flink_id, name, _parallelism(node, f"{where}.parallelism"))
        raw_inputs = node.get(input_key, [])
        if not isinstance(raw_inputs, list):
            raise _fail(f"{where}.{input_key}", "expected an array")
        for k, raw in enumerate(raw_inputs):
            at = f"{where}.{input_key}[{k}]"
            if not isinstance(raw, dict):
                raise _fail(at, "expected an object")
            for key in ("id", "ship_strategy"):
                if key not in raw:
                    raise _fail(f"{at}.{key}", "missing key")
            source = _flink_id(raw["id"], f"{at}.id", numeric_ok=not rest)
            strategy = _text(raw["ship_strategy"], f"{at}.ship_strategy")
            if not strategy.strip():
                raise _fail(f"{at}.ship_strategy", "empty ship strategy")
            operator.inputs.append((source, strategy))
        operators.append(operator)
    for n, operator in enumerate(operators):
        for k, (source, _) in enumerate(operator.inputs):
            if source not in seen:
                raise _fail(f"nodes[{n}].{input_key}[{k}].id", f"unknown node {source!r}")
    return operators


# -- chaining -------------------------------------------------------------------------------


def _chain_inputs(operators: list[_Operator]) -> dict[int | str, int | str]:
    """Operator -> the upstream operator it is chained to (StreamingJobGraphGenerator.isChainable)."""
    parallelism = {op.flink_id: op.parallelism for op in operators}
    chained_to = {}
    for op in operators:
        if len(op.inputs) == 1:
            source, strategy = op.inputs[0]
            if normalise_strategy(strategy) == "FORWARD" and parallelism[source] == op.parallelism:
                chained_to[op.flink_id] = source
    return chained_to


def _chain_name(head: _Operator, children: dict, by_id: dict) -> str:
    # StreamingJobGraphGenerator.createChainedName: "A -> B", or "A -> (B, C)" for a fork.
    # Written out piece by piece with a stack, not recursively: a chain may be thousands of
    # operators long, deeper than Python's recursion limit.
    pieces: list[str] = []
    pending: list = [head]  # operators to name, and literal separators, in reverse order
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            pieces.append(item)
            continue
        pieces.append(item.name)
        below = children.get(item.flink_id, ())
        if len(below) == 1:
            pending += [by_id[below[0]], " -> "]
        elif below:
            parts: list = [" -> ("]
            for n, child in enumerate(below):
                parts += [", "] * (n > 0) + [by_id[child]]
            pending += [")", *reversed(parts)]
    return "".join(pieces)


def _chain(operators: list[_Operator]) -> tuple[list[_Operator], dict[int | str, list]]:
    """Job vertices (heads of chains, with the chain's name and outside inputs) and their members."""
    chained_to = _chain_inputs(operators)
    by_id = {op.flink_id: op for op in operators}
    children: dict[int | str, list] = {}
    for op in operators:
        if op.flink_id in chained_to:
            children.setdefault(chained_to[op.flink_id], []).append(op.flink_id)

    heads: dict = {}

    def head_of(flink_id):
        # Chains are trees hanging off their head; the operator graph is acyclic (checked before).
        # Remembered for every operator on the way, so a long chain is walked once, not once per member.
        path = []
        while flink_id in chained_to and flink_id not in heads:
            path.append(flink_id)
            flink_id = chained_to[flink_id]
        head = heads.get(flink_id, flink_id)
        for member in path:
            heads[member] = head
        return head

    vertices: dict[int | str, _Operator] = {}
    members: dict[int | str, list] = {}
    for op in operators:
        head = head_of(op.flink_id)
        members.setdefault(head, []).append(op.flink_id)
        if head == op.flink_id:
            vertices[head] = _Operator(head, _chain_name(op, children, by_id), op.parallelism)
    for op in operators:
        if op.flink_id in chained_to:
            continue  # its only input is inside the chain
        for source, strategy in op.inputs:
            vertices[head_of(op.flink_id)].inputs.append((head_of(source), strategy))
    return [vertices[h] for h in members], members


# -- ids and the graph ----------------------------------------------------------------------


def _slug(name: str) -> str:
    """A short lowercase name: the first operator of a chain, without arguments or SQL ids."""
    first = name.split(" -> ")[0]
    first = re.sub(r"^\[\d+\]:", "", first).split("(")[0]
    first = re.sub(r"\[\d+\]\s*$", "", first)  # SQL operator ids: "Calc[6]", "Source: orders[1]"
    words = [w for w in re.split(r"[^a-z0-9]+", first.lower()) if w]
    slug = ""
    for word in words:
        if slug and len(slug) + 1 + len(word) > 24:
            break
        slug = f"{slug}-{word}" if slug else word[:24]
    return slug or "vertex"


def _readable_ids(operators: list[_Operator]) -> dict[int | str, str]:
    slugs = {op.flink_id: _slug(op.name) for op in operators}
    # REST ids are 32 hex digits: the first six are enough unless two vertices share them.
    for length in (6, 8, 12, None):
        ids = {
            fid: f"{slugs[fid]}-{fid if isinstance(fid, int) or length is None else fid[:length]}"
            for fid in slugs
        }
        if len(set(ids.values())) == len(ids):
            return ids
    raise AssertionError("distinct Flink ids give distinct vertex ids")  # pragma: no cover


def _graph(operators: list[_Operator], ids: dict, members: dict | None) -> JobGraph:
    vertices = []
    for op in operators:
        extra: dict[str, Any] = {"flink_id": op.flink_id, "name": op.name}
        if members and len(members[op.flink_id]) > 1:
            extra["chain"] = list(members[op.flink_id])
        vertices.append(JobVertex(ids[op.flink_id], op.parallelism, MappingProxyType(extra)))
    edges = [
        JobEdge(ids[source], ids[op.flink_id], ship_strategy_pattern(strategy))
        for op in operators
        for source, strategy in op.inputs
    ]
    try:
        graph = JobGraph(tuple(vertices), tuple(edges), {})
    except GraphStructureError as error:
        raise PlanFormatError(f"{error} (iterations are not supported)" if "cycle" in str(error) else str(error)) from None
    # Sources first reads more naturally than the plan's order (Flink lists vertices as it likes).
    position = {v: n for n, v in enumerate(graph.topological_order)}
    ordered = tuple(sorted(vertices, key=lambda v: position[v.id]))
    # Stable: a vertex's inputs keep their order, which is Flink's input order.
    return JobGraph(ordered, tuple(sorted(edges, key=lambda e: position[e.target])), {})


def import_plan(document: Any, *, chain: bool = False) -> ImportedPlan:
    """The job graph of a decoded Flink JSON plan (every task RUNNING)."""
    fmt = detect_format(document)
    plan = _unwrap(document)
    operators = _operators(plan, fmt)
    job_name = plan.get("name") if isinstance(plan.get("name"), str) else None
    ids = _readable_ids(operators)
    operator_graph = _graph(operators, ids, None)  # checks for cycles before chaining
    if not chain:
        return ImportedPlan(operator_graph, fmt, job_name)
    if fmt == REST_PLAN:
        raise _fail(
            "--chain", "the REST plan's nodes are job vertices, already chained by Flink; "
            "chain the execution-plan JSON of getExecutionPlan() or flink info instead",
        )
    heads, members = _chain(operators)
    ids = _readable_ids(heads)
    return ImportedPlan(_graph(heads, ids, members), fmt, job_name)


def loads_plan(text: str | bytes, *, chain: bool = False) -> ImportedPlan:
    """Parse JSON text; invalid JSON and absurd nesting become PlanFormatError."""
    return import_plan(decode_json(text, PlanFormatError, strict_keys=False), chain=chain)


def load_plan(path: str, *, chain: bool = False) -> ImportedPlan:
    """Read a plan file; an unreadable file raises PlanFormatError too."""
    return loads_plan(read_input_file(path, PlanFormatError), chain=chain)
