"""Every module's docstring example runs (networkx style: the examples are documentation), and
every public name has one (issue 24, item 10)."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import flipcheck

PACKAGES = ["flipcheck", "flipcheck.model", "flipcheck.reference_impl", "flipcheck.properties", "flipcheck.generators"]
OPTIONS = doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL


def _modules():
    names = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.append(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=package_name + "."):
            if info.name.endswith(".__main__"):
                continue  # importing it runs the command line
            names.append(info.name)
    return sorted(set(names))


# Docstrings whose examples start Spark: they run with the other Spark tests, one at a time.
STARTS_SPARK = {"flipcheck.api.sweep"}
# Modules that have such a docstring: their docstrings run one by one, the others without Spark.
ONE_BY_ONE = {name.rsplit(".", 1)[0] for name in STARTS_SPARK}


def _cases():
    for name in _modules():
        if name not in ONE_BY_ONE:
            yield pytest.param(name, None, id=name)
            continue
        for test in doctest.DocTestFinder().find(importlib.import_module(name)):
            if test.examples:
                marks = (pytest.mark.spark,) if test.name in STARTS_SPARK else ()
                yield pytest.param(name, test.name, id=test.name, marks=marks)


@pytest.mark.parametrize("module_name, docstring", list(_cases()))
def test_docstring_examples(module_name, docstring):
    module = importlib.import_module(module_name)
    if docstring is None:
        result = doctest.testmod(module, optionflags=OPTIONS)
    else:
        test = next(t for t in doctest.DocTestFinder().find(module) if t.name == docstring)
        result = doctest.DocTestRunner(optionflags=OPTIONS).run(test)
    assert result.failed == 0, f"{result.failed} doctest failures in {docstring or module_name}"


def test_every_public_name_has_an_example_that_runs_here():
    # A class or function has one in its own docstring, run above with its module (without
    # Spark, but for sweep's); a constant is shown in the package's.
    package_examples = "\n".join(line for line in flipcheck.__doc__.splitlines() if line.startswith(">>> "))
    run_here = set(_modules())
    for name in flipcheck.__all__:
        value = getattr(flipcheck, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert ">>> " in (value.__doc__ or ""), f"flipcheck.{name} has no example"
            assert value.__module__ in run_here, f"flipcheck.{name}'s examples are not run"
        else:
            assert f"flipcheck.{name}" in package_examples, f"flipcheck.{name} is in no example"


def test_the_protocols_docstring_shows_its_rule_methods():
    from flipcheck.model.protocol.switches import RULE_METHODS

    doc = flipcheck.Protocol.__doc__
    assert all(f"``{method}(" in doc for method in RULE_METHODS)
    assert "def may_finish(self, job, state, t):" in doc
