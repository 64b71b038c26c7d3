"""The compiled build's ``_replace`` for the model's records (flipcheck/record_replace.py) answers
every call as ``collections``' own does: the same record, the same error for a field the record
does not have. The compiled build installs it on the records of every compiled module, and only
there; the pure build leaves the records as ``collections`` made them."""

import collections
import importlib
import sys

import pytest
from hypothesis import given, strategies as st

from flipcheck.compiled import COMPILED_MODULES, RECORD_REPLACE_MODULE, active_modules
from flipcheck.record_replace import Replace, replace


def _records() -> list[type]:
    found = []
    for name in COMPILED_MODULES:
        module = importlib.import_module(name)
        found += [value for value in vars(module).values()
                  if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")
                  and value.__module__ == name]
    return found


RECORDS = _records()


def _collections_replace(record, **changes):
    """What ``collections.namedtuple`` makes ``_replace`` do, for a record of any class."""
    return collections.namedtuple(type(record).__name__, type(record)._fields)._replace(record, **changes)


def test_the_compiled_modules_define_records_to_replace_in():
    names = {cls.__name__ for cls in RECORDS}
    assert {"JobState", "TaskState", "Coordinator", "Pending", "Snapshot"} <= names


@given(st.sampled_from(RECORDS), st.data())
def test_replace_gives_what_collections_gives(cls, data):
    record = tuple.__new__(cls, data.draw(st.lists(st.integers(), min_size=len(cls._fields), max_size=len(cls._fields))))
    names = data.draw(st.lists(st.sampled_from(cls._fields), unique=True))
    changes = {name: data.draw(st.integers() | st.none()) for name in names}
    ours, theirs = replace(record, **changes), _collections_replace(record, **changes)
    assert type(ours) is type(theirs) is cls
    assert ours == theirs
    assert [getattr(ours, name) for name in names] == [changes[name] for name in names]
    assert record._replace(**changes) == theirs


@given(st.sampled_from(RECORDS), st.lists(st.sampled_from(["no_such_field", "other", "index"]), min_size=1, unique=True))
def test_an_unknown_field_is_refused_with_collections_words(cls, unknown):
    record = tuple.__new__(cls, [0] * len(cls._fields))
    changes = {cls._fields[0]: 1, **{name: 2 for name in unknown}}
    with pytest.raises(ValueError) as ours:
        replace(record, **changes)
    with pytest.raises(ValueError) as theirs:
        _collections_replace(record, **changes)
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == f"Got unexpected field names: {unknown!r}"


def test_the_descriptor_gives_the_method_on_a_record_and_the_function_on_its_class():
    Point = collections.namedtuple("Point", "x y")
    Point._replace = Replace()
    assert Point(1, 2)._replace(y=3) == Point(1, 3)
    assert Point._replace(Point(1, 2), x=0) == Point(0, 2)


def test_the_compiled_build_installs_it_on_every_record_of_a_compiled_module_and_the_pure_build_on_none():
    compiled = set(active_modules())
    for cls in RECORDS:
        installed = isinstance(cls.__dict__.get("_replace"), Replace)
        assert installed == (cls.__module__ in compiled), (cls.__module__, cls.__name__, installed)
    # The module it comes from is compiled with the rules, or nothing is.
    assert (RECORD_REPLACE_MODULE in compiled) == bool(compiled)
    assert type(sys.modules[RECORD_REPLACE_MODULE].replace).__name__ == (
        "builtin_function_or_method" if compiled else "function")
