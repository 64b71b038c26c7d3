"""Every module's docstring example runs (networkx style: the examples are documentation)."""

import doctest
import importlib
import pkgutil

import pytest

import flipcheck

PACKAGES = ["flipcheck", "flipcheck.model", "flipcheck.reference_impl", "flipcheck.properties", "flipcheck.generators"]


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


# Modules whose examples start Spark: they run with the other Spark tests, one at a time.
STARTS_SPARK = {"flipcheck.api"}


@pytest.mark.parametrize("module_name", [pytest.param(name, marks=pytest.mark.spark) if name in STARTS_SPARK else name
                                         for name in _modules()])
def test_docstring_examples(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL)
    assert result.failed == 0, f"{result.failed} doctest failures in {module_name}"
