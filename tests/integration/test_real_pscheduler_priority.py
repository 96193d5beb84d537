"""The template's priority for jumbo-throughput (-1) under the real pScheduler 5.2.5: an
upstream `throughput` task (no priority, as WLCG's pSConfig template makes it) whose wanted
start falls inside a pending jumbo-throughput run.

Why (upstream database/schedule.sql, api_proposed_times, and run.sql, run_has_conflicts):
the times a node proposes skip pending runs whose priority is NULL, while the check made when
the run is inserted counts them as priority 0. A task without a priority proposes the pending
exclusive run's own time, is refused at insert, retries the same proposal and gives up (the
conflict drop, docs/operator.md). A pending run with a priority is avoided by those proposals;
at -1 it also yields at insert and at start to any run at 0 or NULL, so it never pushes out
another test.

Truth: with jumbo-throughput at -1 the throughput run is placed after it and both finish; the
same two tasks with jumbo-throughput at no priority: the throughput run is a Non-Starter that
gave up on conflicts (the control: this test fails where the priority makes no difference).
"""

from collide import JUMBO_THROUGHPUT, THROUGHPUT, collide, parse


def test_jumbo_throughput_at_minus_one_never_pushes_out_a_throughput_test(nodes):
    # The control first: without a priority, pScheduler's conflict drop.
    jumbo, other = collide(nodes, JUMBO_THROUGHPUT, THROUGHPUT)
    assert jumbo["state"] == "finished", jumbo
    assert other["state"] == "nonstart", other
    assert "conflict" in str(other.get("errors") or other.get("result-merged")), other
    # The template's priority: the throughput run is placed after it, and both run.
    jumbo, other = collide(nodes, JUMBO_THROUGHPUT, THROUGHPUT, first_priority=-1)
    assert other["state"] == "finished", other
    assert jumbo["state"] == "finished", jumbo
    assert parse(other["start-time"]) >= parse(jumbo["end-time"]), (jumbo, other)
