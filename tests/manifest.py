"""The pinned manifests under tests/manifests/: one loader for every test that reads them, the
schema check, and the regeneration path.

A manifest is one design's pinned results, one entry per configuration (schema:
tests/manifests/schema.json, explained in docs/manifests.md). Tests pick their entries with
``entries(design, model=..., check=..., slow=...)`` and compare what they measured with
``pin(entry, distinct_states=..., ...)`` inside ``with measured(entry):``.

``FLIPCHECK_REGENERATE_MANIFESTS=1`` (``make manifests``) turns ``pin`` from an assertion into a
record: every entry a test pins is rewritten with what was measured, ``seconds`` included, when the
session ends (xdist workers hand their records to the controller through files). Regenerate only
when the model changes on purpose, and check with ``git diff`` which numbers moved.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from functools import cache
from pathlib import Path

__all__ = [
    "DIRECTORY", "REGENERATE", "dump", "entries", "entry", "entry_id", "load", "measured", "path_of", "pin",
    "schema", "schema_errors", "write_measured",
]

DIRECTORY = Path(__file__).resolve().parent / "manifests"
REGENERATE = os.environ.get("FLIPCHECK_REGENERATE_MANIFESTS", "") not in ("", "0")
_PENDING = DIRECTORY / ".measured"       # one file per xdist worker while regenerating

# (design, entry index) -> the fields measured in this process
_measured: dict[tuple[str, int], dict] = {}


def path_of(design: str) -> Path:
    """The manifest of ``design`` ("split-assignment" -> tests/manifests/split_assignment.json)."""
    return DIRECTORY / f"{design.replace('-', '_')}.json"


@cache
def load(design: str) -> dict:
    """The manifest of ``design``, read once per process (entries are shared, never copied, so
    ``pin`` can find an entry's index by identity)."""
    return json.loads(path_of(design).read_text())


@cache
def schema() -> dict:
    return json.loads((DIRECTORY / "schema.json").read_text())


def entries(design: str, config: dict | None = None, **fields) -> list[dict]:
    """The entries of ``design`` whose fields equal ``fields`` (``slow`` absent counts as False)
    and whose config contains ``config``, in manifest order."""
    def matches(item: dict) -> bool:
        if any(item.get(k, False if k == "slow" else None) != v for k, v in fields.items()):
            return False
        return all(item["config"].get(k) == v for k, v in (config or {}).items())

    return [item for item in load(design)["entries"] if matches(item)]


def entry(design: str, config: dict | None = None, **fields) -> dict:
    """The one entry of ``design`` that ``entries`` selects; an error if there is not exactly one."""
    found = entries(design, config, **fields)
    if len(found) != 1:
        raise LookupError(f"{len(found)} entries of {design} match {fields} config {config}")
    return found[0]


def entry_id(item: dict) -> str:
    """A short pytest id: model, check and the config's scalar values."""
    values = [str(v) for v in item["config"].values() if isinstance(v, (str, int, float, bool)) or v is None]
    return "-".join([item["model"], item["check"], *values, *item.get("properties", [])])


def _index(item: dict) -> tuple[str, int]:
    listed = load(item["design"])["entries"]
    return item["design"], next(i for i, e in enumerate(listed) if e is item)


@contextmanager
def measured(item: dict):
    """Time the block as the entry's ``seconds`` (recorded only while regenerating; never asserted)."""
    start = time.perf_counter()
    yield
    if REGENERATE:
        _measured.setdefault(_index(item), {})["seconds"] = float(f"{time.perf_counter() - start:.3g}")


def pin(item: dict, **observed) -> None:
    """Assert that ``observed`` equals the entry's pinned fields; while regenerating, record it."""
    observed = json.loads(json.dumps(observed))     # tuples -> lists, as the manifest holds them
    if REGENERATE:
        _measured.setdefault(_index(item), {}).update(observed)
        return
    assert observed == {k: item.get(k) for k in observed}, entry_id(item)


# -- a JSON-Schema subset, enough for schema.json (jsonschema is not a dependency) ----------------

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def schema_errors(value, node: dict | None = None, where: str = "$", root: dict | None = None) -> list[str]:
    """Where ``value`` breaks ``node`` (default: schema.json), one line each; [] when it fits.
    Supports $ref (#/$defs/...), type, enum, const, required, properties, additionalProperties,
    items, minItems, minimum, minLength and anyOf."""
    root = root or schema()
    node = root if node is None else node
    if "$ref" in node:
        node = root["$defs"][node["$ref"].removeprefix("#/$defs/")]
    if "anyOf" in node:
        if all(schema_errors(value, option, where, root) for option in node["anyOf"]):
            return [f"{where}: matches none of {[o.get('$ref', o.get('type')) for o in node['anyOf']]}"]
        return []
    types = node.get("type")
    if types is not None and not any(_is_type(value, t) for t in ([types] if isinstance(types, str) else types)):
        return [f"{where}: {type(value).__name__} is not {types}"]
    errors = []
    if "enum" in node and value not in node["enum"]:
        errors.append(f"{where}: {value!r} not in {node['enum']}")
    if "const" in node and value != node["const"]:
        errors.append(f"{where}: {value!r} is not {node['const']!r}")
    if "minimum" in node and _is_type(value, "number") and value < node["minimum"]:
        errors.append(f"{where}: {value} < {node['minimum']}")
    if "minLength" in node and isinstance(value, str) and len(value) < node["minLength"]:
        errors.append(f"{where}: shorter than {node['minLength']}")
    if isinstance(value, dict):
        errors += [f"{where}: missing {key!r}" for key in node.get("required", []) if key not in value]
        properties = node.get("properties", {})
        for key, item in value.items():
            if key in properties:
                errors += schema_errors(item, properties[key], f"{where}.{key}", root)
            elif node.get("additionalProperties") is False:
                errors.append(f"{where}: unexpected field {key!r}")
    if isinstance(value, list):
        if len(value) < node.get("minItems", 0):
            errors.append(f"{where}: fewer than {node['minItems']} items")
        if "items" in node:
            for i, item in enumerate(value):
                errors += schema_errors(item, node["items"], f"{where}[{i}]", root)
    return errors


# -- regeneration -------------------------------------------------------------------------------

def dump(manifest: dict) -> str:
    """The manifest as the repository keeps it: one line per entry field, values compact."""
    lines = ["{"]
    for key in ("comment", "design"):
        lines.append(f" {json.dumps(key)}: {json.dumps(manifest[key])},")
    lines.append(' "entries": [')
    for n, item in enumerate(manifest["entries"]):
        fields = [f"   {json.dumps(k)}: {json.dumps(v, separators=(', ', ': '))}" for k, v in item.items()]
        lines.append("  {\n" + ",\n".join(fields) + "\n  }" + ("," if n + 1 < len(manifest["entries"]) else ""))
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


def write_measured(worker: str | None) -> None:
    """At the end of a regenerating session: a worker hands its records to the controller; the
    controller (or a run without xdist) rewrites every manifest with a measured entry."""
    if worker is not None:
        _PENDING.mkdir(exist_ok=True)
        rows = [[design, index, fields] for (design, index), fields in _measured.items()]
        (_PENDING / f"{worker}.json").write_text(json.dumps(rows))
        return
    updates = dict(_measured)
    if _PENDING.is_dir():
        for part in sorted(_PENDING.glob("*.json")):
            for design, index, fields in json.loads(part.read_text()):
                updates.setdefault((design, index), {}).update(fields)
            part.unlink()
        _PENDING.rmdir()
    for design in sorted({design for design, _ in updates}):
        manifest = json.loads(path_of(design).read_text())
        for (name, index), fields in updates.items():
            if name == design:
                manifest["entries"][index].update(fields)
        problems = schema_errors(manifest)
        if problems:
            raise ValueError(f"{path_of(design).name}: {problems[0]}")
        path_of(design).write_text(dump(manifest))
