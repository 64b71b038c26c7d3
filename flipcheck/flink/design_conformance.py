"""One design's verdict on a real run, in the shape every design's conformance returns.

``flipcheck conform`` validates FLIP-147's protocol always and each other design whose lines
the logs hold; its JSON gives each one under ``"designs"`` (docs/conformance.md).

>>> DesignConformance("split-assignment", True, 12, None).as_json()
{'conforms': True, 'events': 12, 'first_unexplained': None, 'checks': []}
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DESIGN_NAMES", "DesignConformance"]

# The designs conform knows, by the name --design and the JSON use.
DESIGN_NAMES = ("protocol", "split-assignment", "local-recovery", "batch-recovery")


@dataclass
class DesignConformance:
    """``events``: the log events of this design read; ``first_unexplained``: the first one no
    behaviour of the design's model explains (None: all explained); ``checks``: end-to-end
    checks read from the run (:class:`flipcheck.flink.conform.Check`)."""

    design: str
    conforms: bool
    events: int
    first_unexplained: dict | None
    checks: list = field(default_factory=list)

    def as_json(self) -> dict:
        return {"conforms": self.conforms, "events": self.events,
                "first_unexplained": self.first_unexplained,
                "checks": [check.as_json() for check in self.checks]}
