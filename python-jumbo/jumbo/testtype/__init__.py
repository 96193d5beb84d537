"""The suite's pScheduler tests: `pmtu` (spec.py: spec, participants, CLI <-> spec; render.py:
its result and spec formatting and the one verdict line) and `jumbo-throughput` (pair.py)."""
