"""flipcheck: an executable specification and verification suite for checkpointing and
recovery in dataflow engines, starting with Apache Flink's FLIP-147 (checkpoints after tasks
finished).

Layout (dependencies point one way): ``model`` ← ``reference_impl`` ← ``properties`` ←
``generators`` ← the CLI, sweep and rendering modules in this package.
"""

__version__ = "0.1.0"
