"""flipcheck: an executable specification and verification suite for checkpointing and
recovery in dataflow engines, starting with Apache Flink's FLIP-147 (checkpoints after tasks
finished).

The public API (stable; docs/api.md) is what :data:`__all__` lists:

* checks, each returning a :class:`Result` (``ok``, ``counts``, ``counterexample``,
  ``render(path)``): :func:`plan`, :func:`prove`, :func:`replay_barriers`, :func:`explore`,
  :func:`verify`, :func:`sweep`;
* job graphs: :func:`job_graph` (in code), :func:`load_job_graph` and :func:`save_job_graph` (JSON), and the values a
  protocol's ``plan`` sees and returns: :class:`JobGraph`, :class:`CheckpointPlan` (its task
  sets are :class:`TaskSet`), :class:`Declined`, and the edge patterns :data:`ALL_TO_ALL` and
  :data:`POINTWISE` (what ``graph.inputs(v)[0].pattern`` is, and what :func:`job_graph` takes
  besides ``"all-to-all"`` and ``"pointwise"``);
* extension points, the base classes of your own variants: :class:`Protocol` (the whole job's
  protocol), :class:`PlanCalculator` (a checkpoint-plan algorithm), :class:`BarrierHandler` (one
  task's barrier alignment), and the recovery designs' engines :class:`ApproximateLocalRecovery`,
  :class:`TaskLocalRecovery`, :class:`BatchJob` and :class:`SourceJob`.

Everything else is internal. Names load on first use, so ``import flipcheck`` stays quick.

>>> import flipcheck
>>> flipcheck.plan(flipcheck.load_job_graph("examples/graphs/figure1.json")).ok
True
>>> g = flipcheck.job_graph([("src", 2), ("sink", 2)], [("src", "sink", flipcheck.POINTWISE)])
>>> g.inputs("sink")[0].pattern == flipcheck.POINTWISE, flipcheck.ALL_TO_ALL
(True, 'ALL_TO_ALL')
>>> flipcheck.__version__
'0.1.0'

Every public name's docstring shows it at work (``help(flipcheck.Protocol)``: your change to a
rule, written as code).

Layout (dependencies point one way; ``tests/cover/test_layering.py`` enforces it):
``model`` ← ``reference_impl`` ← ``properties`` ← ``generators`` ← this package, whose own
subpackages are layered too: ``render``, ``flink`` ← ``designs`` ← ``sweep`` ← ``bench`` ←
``api`` (this module's exports) ← ``cli``. The designs it checks are registered in
:data:`flipcheck.designs.DESIGNS` (docs/architecture.md).
"""

import sys as _sys
import types as _types

__version__ = "0.1.0"

# The mypyc-compiled hot modules, when built and not turned off (flipcheck/compiled.py); first,
# so that no model module is ever imported in both builds.
from flipcheck.compiled import activate as _activate_compiled_build  # noqa: E402

_activate_compiled_build()

__all__ = ["Result", "Counterexample", "job_graph", "load_job_graph", "save_job_graph", "plan", "prove", "replay_barriers", "explore",
           "verify", "sweep", "Protocol", "PlanCalculator", "BarrierHandler", "ApproximateLocalRecovery",
           "TaskLocalRecovery", "BatchJob", "SourceJob", "JobGraph", "CheckpointPlan", "Declined", "TaskSet",
           "ALL_TO_ALL", "POINTWISE", "__version__"]

# name -> (module, attribute): imported on first use (PEP 562).
_EXPORTS = {
    **{name: ("flipcheck.api", name) for name in ("Result", "Counterexample", "job_graph", "load_job_graph",
                                                  "save_job_graph", "plan",
                                                  "prove", "replay_barriers", "explore", "verify", "sweep")},
    "Protocol": ("flipcheck.model.protocol", "Protocol"),
    "JobGraph": ("flipcheck.model.jobgraph", "JobGraph"),
    "CheckpointPlan": ("flipcheck.model.plan", "CheckpointPlan"),
    "Declined": ("flipcheck.model.plan", "Declined"),
    "TaskSet": ("flipcheck.model.plan", "TaskSet"),
    "ALL_TO_ALL": ("flipcheck.model.jobgraph", "ALL_TO_ALL"),
    "POINTWISE": ("flipcheck.model.jobgraph", "POINTWISE"),
    "PlanCalculator": ("flipcheck.reference_impl.plan.flink", "FlinkPlanCalculator"),
    "BarrierHandler": ("flipcheck.reference_impl.barriers.task", "Task"),
    "ApproximateLocalRecovery": ("flipcheck.reference_impl.approximate_recovery", "ApproximateLocalRecovery"),
    "TaskLocalRecovery": ("flipcheck.reference_impl.local_recovery", "TaskLocalRecovery"),
    "BatchJob": ("flipcheck.reference_impl.batch_recovery", "BatchJob"),
    "SourceJob": ("flipcheck.reference_impl.split_assignment", "SourceJob"),
}


class _Package(_types.ModuleType):
    """This package. The import system binds a subpackage to its parent's attribute of the same
    name once imported, and ``flipcheck.sweep`` is both the public function and the sweep layer's
    package (imported by the function itself): the function keeps the name. The subpackage is
    still imported by its full name (``from flipcheck.sweep.runner import ...``)."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, _types.ModuleType) and _EXPORTS.get(name, ("",))[0] == "flipcheck.api":
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'flipcheck' has no attribute {name!r}")
    import importlib

    module, attribute = _EXPORTS[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
