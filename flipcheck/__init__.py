"""flipcheck: an executable specification and verification suite for checkpointing and
recovery in dataflow engines, starting with Apache Flink's FLIP-147 (checkpoints after tasks
finished).

Layout (dependencies point one way; ``tests/cover/test_layering.py`` enforces it):
``model`` ← ``reference_impl`` ← ``properties`` ← ``generators`` ← this package, whose own
subpackages are layered too: ``render``, ``flink`` ← ``designs`` ← ``sweep`` ← ``bench`` ←
``cli``. The designs it checks are registered in :data:`flipcheck.designs.DESIGNS`
(docs/architecture.md).
"""

__version__ = "0.1.0"
