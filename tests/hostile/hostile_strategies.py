"""Hypothesis strategies for hostile input: odd text, huge and non-finite numbers, mutated JSON
documents (wrong types, missing and extra fields, deep nesting, broken bytes), option values
and paths."""

from __future__ import annotations

import copy
import json
import math
import os

from hypothesis import strategies as st

__all__ = ["ODD_TEXT", "odd_text", "argv_text", "hostile_int", "hostile_float", "json_value", "number_text",
           "mutated_json_bytes", "bad_input_path", "bad_output_path", "DEEP"]

# Text that has broken a terminal, a JSON writer, a shell or a number parser before.
ODD_TEXT = ["\ud800", "\udfff", "a\udc80b", "\x00", "a\x00b", "\x1b[2J", "\x1b]0;title\x07", "\r", "\n", "a\nb", "\t",
            "\u202eevil", "\u2028", "\u2029", "\ufeff", "\u200b", "\u0661\u0662", "\U0001d7d9", "e\u0301", "", " ",
            "-", "--", "-1", "x" * 5000, "\\", '"', "'", "$HOME", "*", "\ufb01", "\u0130", "\u00a0", "NaN", "1e308",
            "\U0001f600", "\x7f", "\x85"]
DEEP = "\x00deep-nesting\x00"  # replaced by 10,000 nested arrays after json.dumps
HUGE_INTS = [2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 10**20, 10**100, -1, -(2**63), 0, 1, 32768, 32769,
             1_000_000_000]
ODD_FLOATS = [math.nan, math.inf, -math.inf, 1e308, -0.0, 0.5, 5e-324, 2.0, 1e16]

odd_text = st.one_of(
    st.sampled_from(ODD_TEXT),
    st.text(max_size=12),
    st.text(alphabet=st.characters(categories=["Cc", "Cs", "Zl", "Zp", "Cf", "Nd", "Mn", "So"]), max_size=6),
)
hostile_int = st.one_of(st.sampled_from(HUGE_INTS), st.integers(-5, 40_000))
hostile_float = st.sampled_from(ODD_FLOATS)
# Near-valid values too (small counts, state and pattern names), so that a mutation reaches past
# the type checks into the commands' work.
plausible_scalar = st.one_of(st.integers(0, 6), st.sampled_from(["RUNNING", "FINISHED", "CANCELED", "ALL_TO_ALL",
                                                                 "POINTWISE", "a", "b", "src", "sink"]))
json_scalar = st.one_of(st.none(), st.booleans(), hostile_int, hostile_float, odd_text, st.just(DEEP),
                        plausible_scalar, plausible_scalar)
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(odd_text, inner, max_size=3),
                          max_leaves=6)

# What a command line can carry: os.fsdecode of bytes without NUL (lone surrogates only as
# \udc80-\udcff), so argv text is generated the way a shell hands it over.
argv_text = st.one_of(
    st.sampled_from([t for t in ODD_TEXT if "\x00" not in t and not any("\ud800" <= c <= "\udc7f" or "\udd00" <= c <= "\udfff" for c in t)]),
    st.binary(min_size=1, max_size=12).filter(lambda b: b"\x00" not in b).map(os.fsdecode),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12),
)
number_text = st.one_of(
    st.sampled_from(["0", "-1", "1", "2", "99999999999999999999", "9223372036854775807", "9223372036854775808",
                     "1000000000", "nan", "NaN", "inf", "-inf", "1e308", "1e-320", "0.0", "1_000", " 5", "5 ",
                     "\u0661", "\U0001d7d9", "0x10", "1e3", "+3", "--1", "", "3.5", "\u00b2", "1\n"]),
    st.integers(-3, 100).map(str),
    hostile_int.map(str),
)


def _containers(value, path=()):
    """Paths to every list and object in ``value`` (the document itself first)."""
    if isinstance(value, (dict, list)):
        yield path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from _containers(item, (*path, key))


def _at(value, path):
    for key in path:
        value = value[key]
    return value


@st.composite
def mutated_document(draw, document):
    """``document`` with one to three mutations: a field replaced by a hostile value, deleted,
    an extra field added, or an element duplicated."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):
        paths = list(_containers(document))
        if not paths:
            return draw(json_value)
        container = _at(document, draw(st.sampled_from(paths)))
        keys = list(container.keys()) if isinstance(container, dict) else list(range(len(container)))
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add", "duplicate"]))
        if action == "add" or not keys:
            if isinstance(container, dict):
                container[draw(st.one_of(odd_text, st.sampled_from(["records", "sink_v2", "two_phase_commit_sink",
                                                                      "union_list_state", "states", "edges"])))] = draw(json_value)
            else:
                container.append(draw(json_value))
            continue
        key = draw(st.sampled_from(keys))
        if action == "replace":
            container[key] = draw(json_value)
        elif action == "delete":
            del container[key]
        elif isinstance(container, list):
            container.append(copy.deepcopy(container[key]))
    return document


@st.composite
def mutated_json_bytes(draw, documents):
    """The bytes of a mutated document from ``documents``, sometimes also broken at byte level."""
    document = draw(mutated_document(draw(st.sampled_from(documents))))
    text = json.dumps(document, ensure_ascii=draw(st.booleans()), allow_nan=True)
    text = text.replace(json.dumps(DEEP), "[" * 10_000 + "]" * 10_000)
    data = text.encode("utf-8", "surrogatepass")
    damage = draw(st.sampled_from(["none"] * 12 + ["truncate", "insert", "bom", "utf16"]))
    if damage == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    elif damage == "insert":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    elif damage == "bom":
        data = b"\xef\xbb\xbf" + data
    elif damage == "utf16":
        data = text.encode("utf-16", "surrogatepass")
    return data


# Paths relative to the sandbox (tests/hostile/conftest.py): a directory, a regular file, a
# file where a directory is expected, a missing directory, devices and /proc.
bad_input_path = st.sampled_from(["dir", "file", "file/below.json", "missing/x.json", "/dev/null", "/dev/zero",
                                  "/proc/self/mem", "", "-", "/", "dir/"])
bad_output_path = st.sampled_from(["dir", "file", "file/x.svg", "missing/deeper/x.svg", "/proc/x.svg", "x.pdf", "x",
                                   ".svg", "/dev/null", "/dev/full", "dir/", "", "-", "x.svg"])
