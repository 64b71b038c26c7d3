"""Pictures and text of plans, traces and counterexamples: graphviz DOT rendered with dot.

``core`` draws plans and execution graphs; ``sequence_chart`` and ``tables`` are the two
picture kinds the designs share; ``barriers``, ``protocol`` (with ``protocol_labels``),
``split_assignment`` and ``batch_recovery`` draw one design each; ``plan_text`` prints plans.
Text from input files is escaped before it reaches DOT, SVG or HTML.
"""
