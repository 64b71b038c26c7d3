"""The ``protocol`` suite for sweeps: the whole job, FLIP-147 end to end (issue 4's model).

* Random space (token = a seed): case ``i`` is an example graph
  (:mod:`flipcheck.generators.protocol`), a mode, bounds and a seeded random schedule of up to
  400 steps through the composed model (:func:`flipcheck.designs.protocol.generate_case`),
  checked with every step and state property and for a deadlock at its end.
* Exhaustive space (token ``exhaustive-default``): the configurations of
  :data:`flipcheck.designs.protocol.EXHAUSTIVE_CONFIGS`, each explored completely, breadth-first,
  with every property including the graph properties (the end stays reachable).

Counterexamples are minimised to a shortest trace and drawn as message-sequence charts
(:mod:`flipcheck.render.protocol`). Built by :class:`~flipcheck.designs.generated_suite.GeneratedSuite`.

Example
-------
>>> space = PROTOCOL_SUITE.space("7")
>>> space.check(space.case(3), "flip-147").violations
[]
>>> exhaustive = PROTOCOL_SUITE.space(PROTOCOL_SUITE.exhaustive_token())
>>> exhaustive.check(exhaustive.case(0), "flip-147").violations, exhaustive.shape(exhaustive.case(0))
([], 'pair aligned r0 c1 f0')
"""

from __future__ import annotations

from flipcheck.designs.generated_suite import GeneratedSuite

__all__ = ["PROTOCOL_SUITE"]

# A random case takes about 1 ms (a plan case about 0.1 ms): 200 per Spark task.
PROTOCOL_SUITE = GeneratedSuite("protocol", "the whole job: coordinator, tasks and channels (FLIP-147)",
                                "flipcheck.designs.protocol", random_batch=200, relative_cost=10)
