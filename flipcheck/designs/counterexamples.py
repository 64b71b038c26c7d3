"""Counterexamples kept next to a report: minimised, described, drawn, and replayable from anywhere.

``flipcheck verify`` and ``flipcheck sweep`` (and :func:`flipcheck.verify`, :func:`flipcheck.sweep`)
end the same way for each property a variant violates (:func:`save_counterexample`):

* the violating case is minimised for that property (the suite's ``minimise``: a shortest trace,
  fewest tasks), described as JSON (``counterexamples/NAME.json``; a trace's steps structured as
  :mod:`flipcheck.render.trace_steps` says) and drawn (``counterexamples/NAME.svg``);
* its replay is a command line that works from any folder: the suite's own command on the
  minimised case when it has one (``flipcheck explore GRAPH.json ...`` for the protocol, its job
  graph saved as ``counterexamples/NAME.graph.json``; ``flipcheck barriers ...``), else
  ``flipcheck replay CASE_ID``, which regenerates the case from its id;
* a variant of the user's own (``FILE.py:CLASS``) is copied into ``variant/`` once
  (:func:`save_variant`), and the replay loads the copy by its absolute path: it still shows the
  violation after the original file changed or moved. Nothing goes to a temporary folder.

:func:`counterexample_lines` prints an entry as every command prints it.

Example
-------
>>> import tempfile
>>> from pathlib import Path
>>> from flipcheck.designs.protocol import PROTOCOL_SUITE, Configuration, explore_case
>>> folder = Path(tempfile.mkdtemp())
>>> _, _, trace = explore_case(Configuration("pair", "aligned", 0, 1, 0), "pre-flip-147")
>>> entry = save_counterexample(folder, PROTOCOL_SUITE, "pre-flip-147", "final_checkpoint_before_finish", trace)
>>> entry["size"], entry["minimised"]["trace"][-1]["sentence"], entry["json"]
(2, 'src[0] finishes', 'counterexamples/protocol-pre-flip-147-final_checkpoint_before_finish.json')
>>> entry["replay"].split()[:3] == ["flipcheck", "explore", str(folder / entry["graph"])]
True
>>> print("\\n".join(counterexample_lines(entry, folder)[:4]))
counterexample of final_checkpoint_before_finish: src[0] finished without performing a checkpoint after its end of data
  shortest counterexample (2 steps):
      1. src[0] reaches end of data
      2. src[0] finishes
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from flipcheck.reference_impl.user_variants import SEPARATOR, is_spec, load_variant, spec_of
from flipcheck.render.trace_steps import step_lines

__all__ = ["COUNTEREXAMPLES_FOLDER", "VARIANT_FOLDER", "default_folder", "slug", "save_variant",
           "save_counterexample", "counterexample_lines"]

# Under a report's folder: the counterexamples' files, and the copy of a user's variant.
COUNTEREXAMPLES_FOLDER = "counterexamples"
VARIANT_FOLDER = "variant"
# A file name stays well below the 255 bytes file systems allow, even for a user variant's spec
# (an absolute path): a longer slug keeps its end and a digest of the whole.
_SLUG_LIMIT = 120


def default_folder(command: str, suite: str) -> Path:
    """Where a command keeps its counterexamples when not told: ``.flipcheck/COMMAND-SUITE`` in
    the current folder (as the pytest plugin keeps its own under ``.flipcheck``), never a
    temporary folder that is gone when the replay is wanted.

    >>> str(default_folder("verify", "protocol"))
    '.flipcheck/verify-protocol'
    """
    return Path(".flipcheck") / slug(f"{command}-{suite}")


def slug(text: str) -> str:
    """``text`` as a file name: letters, digits, ``_.-``; a long one shortened with a digest.

    >>> slug("protocol-/home/me/my variants.py:Mine-exactly_once")
    'protocol--home-me-my-variants.py-Mine-exactly_once'
    """
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")
    if len(name) <= _SLUG_LIMIT:
        return name
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:12] + "-" + name[-(_SLUG_LIMIT - 13):].lstrip("-")


def save_variant(folder: str | os.PathLike, variant: str) -> str:
    """The spec a replay names ``variant`` by: a registered name as it is; a user's class
    (``FILE.py:CLASS`` or ``MODULE:CLASS``) copied with the file that defines it into
    ``folder/variant/``, as the absolute spec of the copy (the original spec when no file
    defines the class)."""
    if not is_spec(variant):
        return variant
    original = spec_of(load_variant(variant, object, "variant"))  # imported already: cached
    if original is None:
        return variant
    source, _, class_name = original.rpartition(SEPARATOR)
    copies = Path(folder) / VARIANT_FOLDER
    copies.mkdir(parents=True, exist_ok=True)
    copy = (copies / Path(source).name).resolve()
    if copy != Path(source).resolve():  # a replay of a replay names the copy itself
        shutil.copyfile(source, copy)
    return f"{copy}{SEPARATOR}{class_name}"


def save_counterexample(folder: str | os.PathLike, suite, algorithm: str, prop: str, case: Any, *,
                        replay_variant: str | None = None, case_id: str | None = None,
                        message: str | None = None) -> dict:
    """Minimise ``case`` (which violates ``prop`` under ``algorithm``) for ``prop``, write its
    JSON, graph and picture under ``folder/counterexamples/``, and return the entry a report
    lists: suite, algorithm, property, case_id, message, original_size, size, size_unit,
    minimised (the JSON), json, graph (or absent), replay, picture (None when not drawn, with
    picture_error saying why). ``replay_variant`` is how the replay names the variant
    (:func:`save_variant`; default ``algorithm``)."""
    from flipcheck.errors import InputError, UsageError
    from flipcheck.model.graph_json import graph_to_json

    out = Path(folder)
    minimised = suite.minimise(case, algorithm, prop)
    if minimised is not case:  # the message of what is shown: the minimised case's own
        message = _message(suite, minimised, algorithm, prop) or message
    # a user's class by its class name: the folder holds one run's variant
    name = slug(f"{suite.name}-{algorithm.rpartition(SEPARATOR)[2] if is_spec(algorithm) else algorithm}-{prop}")
    files = out / COUNTEREXAMPLES_FOLDER
    files.mkdir(parents=True, exist_ok=True)
    described = suite.describe(minimised, algorithm)
    (files / f"{name}.json").write_text(json.dumps(described, indent=1) + "\n")
    entry = {
        "suite": suite.name, "algorithm": algorithm, "property": prop, "case_id": case_id, "message": message,
        "original_size": suite.size_of(case), "size": suite.size_of(minimised), "size_unit": suite.size_unit,
        "minimised": described, "json": f"{COUNTEREXAMPLES_FOLDER}/{name}.json",
    }

    def save_graph(graph) -> str:
        path = files / f"{name}.graph.json"
        path.write_text(json.dumps(graph_to_json(graph)) + "\n")
        entry["graph"] = f"{COUNTEREXAMPLES_FOLDER}/{path.name}"
        return str(path.resolve())

    variant = replay_variant or algorithm
    argv = suite.replay_argv(minimised, variant, prop, save_graph)
    if argv is None and case_id is not None:
        argv = ["flipcheck", "replay", case_id, "--algorithm", variant]
    # Shell-quoted: a seed or a path may hold characters a shell would expand ($, *, ', ...).
    entry["replay"] = shlex.join(argv) if argv else None
    entry["picture"] = None
    try:
        suite.render(minimised, algorithm, str(files / f"{name}.svg"))
        entry["picture"] = f"{COUNTEREXAMPLES_FOLDER}/{name}.svg"
    except (UsageError, InputError) as error:  # graphviz missing: the report says so
        entry["picture_error"] = str(error)
    return entry


def _message(suite, case, algorithm: str, prop: str) -> str | None:
    """What ``case`` violating ``prop`` says (a random space checks any case of its suite)."""
    outcome = suite.space("message").check(case, algorithm)
    return next((v.message for v in outcome.violations if v.property == prop), None)


def counterexample_lines(entry: dict, folder: str | os.PathLike, indent: str = "") -> list[str]:
    """An entry of :func:`save_counterexample` as text: the property and message, the steps
    numbered (or the minimised case as JSON when it is no trace), the picture and the replay."""
    found = f" (found by {entry['driver']})" if entry.get("driver") else ""
    lines = [f"{indent}counterexample of {entry['property']}{found}" + (f": {entry['message']}" if entry["message"] else "")]
    steps = entry["minimised"].get("trace") if isinstance(entry["minimised"], dict) else None
    if steps:
        lines.append(f"{indent}  shortest counterexample ({len(steps)} steps):")
        lines += step_lines(steps, indent + "    ")
    else:
        lines.append(f"{indent}  minimised case ({entry['size']} {entry['size_unit']}): "
                     f"{json.dumps(entry['minimised'])}")
    where = Path(folder).resolve()
    lines.append(f"{indent}  picture: {where / entry['picture'] if entry.get('picture') else 'not drawn'}"
                 + (f" ({entry['picture_error']})" if entry.get("picture_error") else ""))
    lines.append(f"{indent}  case:    {where / entry['json']}")
    lines.append(f"{indent}  replay:  {entry['replay']}" if entry.get("replay") else
                 f"{indent}  replay:  none (found by a driver whose cases have no id; the case is above)")
    return lines
