"""The whole-job exploration spread over several processes: the same search as
:func:`flipcheck.properties.protocol_explore.explore_job` (which stays the single-process one),
with one expansion and one numbering (:mod:`.expansion`) shared by two ways of spreading it:

* :mod:`.workers`: forked processes on one machine (``flipcheck explore --workers N``);
* :mod:`.spark`: the executors of a Spark cluster (``flipcheck explore --master URL``).

Both give the single-process explorer's counts, state numbers and counterexamples; their driver
numbers every state. :mod:`.spark_partitioned` (``--master URL --seen executors``) keeps the
seen-set on the executors instead and its driver does per-level work only: the same counts and
violated step, state and deadlock properties with traces of the same length, no state numbers,
no liveness properties.
The submodules are imported on use (Spark's is only needed with ``--master``).
"""

__all__: list[str] = []
