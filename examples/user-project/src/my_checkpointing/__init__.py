"""Two changes to how the checkpoint coordinator picks the tasks to trigger (FLIP-147), each a
:class:`flipcheck.Protocol` subclass: one with a bug, one a correct refactoring."""

from .protocols import ForwardPassTrigger, VertexLevelTrigger

__all__ = ["ForwardPassTrigger", "VertexLevelTrigger"]
