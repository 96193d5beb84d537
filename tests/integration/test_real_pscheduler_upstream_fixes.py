"""The runs the mesh loses to scheduling conflicts are upstream pScheduler's to fix, measured:
the same collisions on upstream 5.2.5 as released, then on the same nodes restarted with
three one-line changes to its scheduling (lab/real_pscheduler/nodes.sh, RPS_UPSTREAM_FIXES:
proposals avoid pending runs whose priority is NULL, a task with a priority is proposed times
that avoid pending runs, and the scheduler gives up only on a conflict).

Truth, upstream as released (database/schedule.sql, api_proposed_times): a jumbo-throughput
task at the template's -1 asking for a start inside a pending upstream `throughput` run is
proposed that very time (it has a priority, so its proposals avoid nothing), refused at insert
each time and dropped: a Non-Starter. With the changes, it is placed after the throughput run,
and so is the control of test_real_pscheduler_priority.py (an upstream throughput task asking
for a start inside a pending jumbo-throughput run with no priority), which upstream drops.
The nodes are restarted as released at the end."""

import pytest

from collide import JUMBO_THROUGHPUT, THROUGHPUT, collide, parse


@pytest.fixture
def fixed_then_restored(nodes):
    nodes.restart(upstream_fixes=True)
    try:
        yield nodes
    finally:
        nodes.restart(upstream_fixes=False)


def _placed_after(first, second):
    assert first["state"] == "finished", first
    assert second["state"] == "finished", second
    assert parse(second["start-time"]) >= parse(first["end-time"]), (first, second)


def test_upstream_drops_a_prioritised_run_proposed_on_a_pending_one(nodes):
    other, jumbo = collide(nodes, THROUGHPUT, JUMBO_THROUGHPUT, second_priority=-1)
    assert other["state"] == "finished", other
    assert jumbo["state"] == "nonstart", jumbo
    assert "conflict" in str(jumbo.get("errors")), jumbo


def test_with_the_changes_both_collisions_are_placed_after(fixed_then_restored):
    nodes = fixed_then_restored
    other, jumbo = collide(nodes, THROUGHPUT, JUMBO_THROUGHPUT, second_priority=-1)
    _placed_after(other, jumbo)
    jumbo, other = collide(nodes, JUMBO_THROUGHPUT, THROUGHPUT)
    _placed_after(jumbo, other)
