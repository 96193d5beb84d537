"""The `jumbocheck` tool: the methods' inputs and the run's dispatch (runner.py), the slot's
budget and alarms (slot.py), the source's phases (source.py) and the dest's (dest.py), the
reverse path (reverse*.py) against the dest's reflector (reflector.py), the paired iperf3 legs
(throughput/), and the results assembled on the source and merged with the dest's view
(result.py for pmtu, pair_result.py for jumbo-throughput). The probe engine it drives is
jumbo.probe; the spec it runs is jumbo.core.spec's RunSpec."""
