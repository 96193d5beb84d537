"""Issue 32, "load that a mesh makes", small: 8 sources (namespaces, each access link its own
MTU) run a two-participant pmtu run to one dest at the same schedule.start, forward through
the dest's reflector and the reverse path: every run exact in both directions against the
topology's truth, every dest run found a reflector port, and each reflector answered only
its own run's source (other runs' greetings to its port are refused). Meanwhile another
program holds half the reflector port range on the dest (every other port), as a mesh's
background runs do. With one port drawn per run (the code before) each run then failed with
probability 1/2 (all 8 succeeding: 1 in 256); with 16 candidates a run finds none free with
probability 2^-16. bench/reflector_load.py is the same with 30 sources and the dest's memory
and CPU."""

from lab_support import needs_lab

from bench import reflector_load

SOURCES = 8


@needs_lab
def test_eight_sources_at_one_start_are_all_exact_through_one_dests_reflector():
    held = reflector_load.held_ports(50)
    figures = reflector_load.measure(SOURCES, 4, held)
    assert figures["wrong"] == [], figures["wrong"]
    assert figures["exact"] == SOURCES
    assert figures["no-port"] == 0 and len(figures["ports"]) == SOURCES, figures
    assert len(set(figures["ports"])) == SOURCES  # one run per port at a time
    assert not set(figures["ports"]) & set(held)
