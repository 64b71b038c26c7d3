"""Every small job graph exactly once: DAG shapes up to isomorphism, then patterns and parallelism.

The exhaustive sweep (``flipcheck sweep --exhaustive``) needs a fixed, numbered list of job
graphs so that a case index names the same graph on every machine. The list is built in
three layers:

1. **Shapes**: every DAG on ``n`` unlabelled vertices, connected or not, exactly once up to
   isomorphism (OEIS A003087: 1, 2, 6, 31, 302 for n = 1..5). Every DAG has a topological
   labelling, so it suffices to look at edge sets ``{(i, j): i < j}``; a shape is kept in its
   *canonical* form, the lexicographically smallest sorted edge list over all topological
   relabellings (a brute-force canonical labelling: n! permutations, fine for n <= 6).
2. **Topologies**: a shape with a parallelism ``1..P`` per vertex and a pattern per edge. Two
   decorations of one canonical shape describe isomorphic job graphs exactly when an
   automorphism of the shape maps one onto the other, so only the decoration that is smallest
   in its orbit is kept: every job graph up to ``V`` vertices and parallelism ``P`` appears
   once, up to renaming its vertices.
3. **States** are not enumerated here: the sweep proves each topology for every state
   assignment (z3, or enumeration of the ``2^tasks`` assignments when that is cheaper).

Order is deterministic: by vertex count, then edge count, then canonical edge list, then
parallelism vector, then patterns. Topologies with fewer vertices come first, so the list for
``V`` vertices starts with the list for ``V - 1`` (same ``P``).

Example
-------
>>> [len(dag_shapes(n)) for n in range(1, 5)]
[1, 2, 6, 31]
>>> dag_shapes(2)
((), ((0, 1),))
>>> space = TopologySpace(max_vertices=2, max_parallelism=2)
>>> len(space), space.shapes
(13, 3)
>>> g = space.job_graph(12)
>>> [(v.id, v.parallelism) for v in g.vertices], [(e.source, e.target, e.pattern) for e in g.edges]
([('v0', 2), ('v1', 2)], [('v0', 'v1', 'POINTWISE')])
"""

from __future__ import annotations

import bisect
import itertools
from functools import cache
from typing import Iterator, NamedTuple

from flipcheck.model.jobgraph import PATTERNS, JobEdge, JobGraph, JobVertex

__all__ = ["Shape", "Topology", "TopologySpace", "dag_shapes", "automorphisms", "decorations", "topology_space"]

Shape = tuple  # canonical sorted edge list ((i, j), ...), i < j, on vertices 0..n-1


class Topology(NamedTuple):
    """One decorated shape: ``n`` vertices ``v0..v{n-1}`` in topological order."""

    vertices: int
    edges: Shape
    parallelism: tuple
    patterns: tuple  # one of PATTERNS per edge, in ``edges`` order

    @property
    def tasks(self) -> int:
        return sum(self.parallelism)

    def job_graph(self) -> JobGraph:
        """The job graph, every task RUNNING."""
        vertices = tuple(JobVertex(f"v{i}", p) for i, p in enumerate(self.parallelism))
        edges = tuple(JobEdge(f"v{i}", f"v{j}", pattern) for (i, j), pattern in zip(self.edges, self.patterns))
        return JobGraph(vertices, edges, {})


def _relabel(edges: Shape, permutation: tuple) -> Shape | None:
    """The edge list under ``permutation`` if it stays topological (every edge i < j), else None."""
    mapped = []
    for i, j in edges:
        a, b = permutation[i], permutation[j]
        if a > b:
            return None
        mapped.append((a, b))
    mapped.sort()
    return tuple(mapped)


@cache
def dag_shapes(n: int) -> tuple[Shape, ...]:
    """Every DAG on ``n`` vertices once up to isomorphism, canonical, in the module's order."""
    if n < 1:
        return ()
    pairs = [(i, j) for j in range(n) for i in range(j)]
    permutations = list(itertools.permutations(range(n)))
    canonical: set[Shape] = set()
    for mask in range(1 << len(pairs)):
        edges = tuple(sorted(p for k, p in enumerate(pairs) if mask >> k & 1))
        forms = (_relabel(edges, perm) for perm in permutations)
        canonical.add(min(f for f in forms if f is not None))
    return tuple(sorted(canonical, key=lambda shape: (len(shape), shape)))


@cache
def automorphisms(n: int, edges: Shape) -> tuple[tuple, ...]:
    """The vertex permutations that map the shape onto itself (the identity first)."""
    edge_set = set(edges)
    return tuple(
        perm for perm in itertools.permutations(range(n))
        if all((perm[i], perm[j]) in edge_set for i, j in edges)
    )


def decorations(n: int, edges: Shape, max_parallelism: int) -> Iterator[Topology]:
    """Every parallelism vector and pattern assignment of a shape, one per isomorphism class."""
    others = automorphisms(n, edges)[1:]
    position = {edge: k for k, edge in enumerate(edges)}
    # Where each automorphism sends each edge: pattern k moves to slot moved[k].
    moves = [(perm, [position[(perm[i], perm[j])] for i, j in edges]) for perm in others]
    for parallelism in itertools.product(range(1, max_parallelism + 1), repeat=n):
        for patterns in itertools.product(PATTERNS, repeat=len(edges)):
            key = (parallelism, patterns)
            smallest = True
            for perm, moved in moves:
                image_par = [0] * n
                for i, p in enumerate(parallelism):
                    image_par[perm[i]] = p
                image_pat = [""] * len(edges)
                for k, pattern in enumerate(patterns):
                    image_pat[moved[k]] = pattern
                if (tuple(image_par), tuple(image_pat)) < key:
                    smallest = False
                    break
            if smallest:
                yield Topology(n, edges, parallelism, patterns)


class TopologySpace:
    """The numbered list of every job graph with ``<= max_vertices`` vertices and parallelism
    ``<= max_parallelism`` (up to isomorphism); ``space[i]`` is topology number ``i``."""

    def __init__(self, max_vertices: int, max_parallelism: int):
        if max_vertices < 1 or max_parallelism < 1:
            raise ValueError("max_vertices and max_parallelism must be at least 1")
        self.max_vertices = max_vertices
        self.max_parallelism = max_parallelism
        self._topologies: list[Topology] = []
        self.shapes_per_size: dict[int, int] = {}
        self.topologies_per_size: dict[int, int] = {}
        for n in range(1, max_vertices + 1):
            shapes = dag_shapes(n)
            self.shapes_per_size[n] = len(shapes)
            before = len(self._topologies)
            for shape in shapes:
                self._topologies.extend(decorations(n, shape, max_parallelism))
            self.topologies_per_size[n] = len(self._topologies) - before
        self._size_starts = list(itertools.accumulate([0, *self.topologies_per_size.values()]))

    @property
    def shapes(self) -> int:
        """Distinct DAG shapes (before patterns and parallelism are assigned)."""
        return sum(self.shapes_per_size.values())

    def __len__(self) -> int:
        return len(self._topologies)

    def __getitem__(self, index: int) -> Topology:
        return self._topologies[index]

    def vertices_of(self, index: int) -> int:
        """The vertex count of topology ``index`` (from the per-size blocks)."""
        return bisect.bisect_right(self._size_starts, index)

    def job_graph(self, index: int) -> JobGraph:
        return self._topologies[index].job_graph()

    def state_assignments(self) -> int:
        """How many (topology, RUNNING/FINISHED assignment) pairs the space holds."""
        return sum(1 << t.tasks for t in self._topologies)


@cache
def topology_space(max_vertices: int, max_parallelism: int) -> TopologySpace:
    """The space, built once per process (sweep executors call this for every batch)."""
    return TopologySpace(max_vertices, max_parallelism)
