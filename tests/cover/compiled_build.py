"""For tests that patch a module the compiled build compiles (docs/compiled.md): compiled, its own
calls are bound early and never reach the patch. :func:`patches_compiled` skips such a test under
the compiled build, naming ``FLIPCHECK_PURE_PYTHON=1``, and marks it ``pure_python``: ``make test``
runs those once more with ``FLIPCHECK_PURE_PYTHON=1``, so CI runs them in the pure build."""

import pytest

from flipcheck.compiled import PURE_PYTHON_VARIABLE, active_modules

__all__ = ["patches_compiled"]


def patches_compiled(module: str, patched: str):
    """Decorate a test that patches ``patched`` of ``module`` (a dotted name under ``flipcheck``)."""
    skip = pytest.mark.skipif(module in active_modules(),
                              reason=f"{module.rsplit('.', 1)[1]} is compiled, so patching its {patched} has no "
                                     f"effect; make test runs this with {PURE_PYTHON_VARIABLE}=1")

    def mark(test):
        return pytest.mark.pure_python(skip(test))
    return mark
