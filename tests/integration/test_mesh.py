"""The real mesh, smaller: four upstream pScheduler 5.2.5 nodes (a jumbo site, a 1500 site, an
ECMP pair with a PTB-dropping 8950 member, an asymmetric return path), perfSONAR's pSConfig
pScheduler agent on each reading the shipped template; the tasks the agents created archive
through the `jumbo` archiver into a real OpenSearch; what is read back must match the lab's
ground truth on every directed pair in both families (lab/real_mesh.py, demo/mesh_real.py).

Skipped where the rest of tests/integration is (no upstream source outside CI, not root); in
CI (env CI set) a missing part fails.

UNFINISHED: not yet seen passing, so it runs only with JUMBO_MESH_TEST=1 (see NOT_YET_PASSED).
On the shared two-core machine it was written on (load 26-42 from other work) the mesh came up
and the agents created tasks, but pScheduler refused many submissions (`Unable to determine
participants: Process took too long to run`) and every run that did execute ended `Tool
jumbocheck failed to merge results: Process took too long to run.` (upstream's runner gives
merged-results 5 s; importing jumbo.protocol.jumbocheck alone took 3.2 s there). Remove the
gate once it has passed on a quiet machine.
"""

import os

import pytest

import real_pscheduler
from demo import mesh_real
from lab import real_mesh

SITES = real_mesh.TEST_SITES
# One round: the lab's hourly schedule repeats every 10 minutes, the runs' starts spread
# over 4 of them; 2 cores shared with everything else need the rest of the wait.
WAIT_SECONDS = 900
NOT_YET_PASSED = (
    "real mesh test not yet seen passing (every run's merged-results exceeded upstream's 5 s "
    "budget on a saturated machine): set JUMBO_MESH_TEST=1 to run it")


def _psconfig_present(src):
    return any(name.startswith("psconfig-5.2.4-") and name.endswith(".tar.gz")
               for name in os.listdir(src)) if os.path.isdir(src) else False


@pytest.fixture(scope="module")
def mesh():
    src = real_pscheduler.pscheduler_source()
    reason = None
    if src is None:
        reason = real_pscheduler.WHERE_TO_GET
    elif not _psconfig_present(src):
        reason = ("perfSONAR pSConfig source missing: %s holds no psconfig-5.2.4-*.tar.gz "
                  "(github.com/perfsonar/psconfig at 3ba9927, psconfig/perfsonar-psconfig)" % src)
    if reason:
        if real_pscheduler.in_ci():
            pytest.fail("CI: " + reason, pytrace=False)
        pytest.skip(reason)
    if os.geteuid() != 0:
        pytest.skip("the real mesh needs root (namespaces, PostgreSQL clusters)")
    if os.environ.get("JUMBO_MESH_TEST") != "1":
        pytest.skip(NOT_YET_PASSED)
    lab = real_mesh.Mesh(sites=SITES, repeat="PT10M", slip="PT4M", say=lambda text: None)
    try:
        lab.up()
        yield lab
    finally:
        lab.down()


def test_template_as_the_agents_read_it_keeps_the_shipped_tests(mesh):
    served = real_mesh.template(mesh.topology, SITES, mesh.archive_url)
    assert sorted(served["tests"]) == ["jumbo-throughput-v4", "pmtu-v4", "pmtu-v6"]
    assert len(served["addresses"]) == len(SITES)


def test_agent_created_tasks_match_the_truth_on_every_pair_and_family(mesh, tmpdir):
    memory = mesh_real.MemoryPeak(mesh)
    arrived = mesh_real.wait_rounds(mesh, 1, WAIT_SECONDS, memory)
    runs = mesh_real.by_pair(mesh.records("pmtu"))
    results = mesh_real.check_round(mesh, runs, 1)
    wrong = ["%s: %s" % (c.what, c.detail) for c in results if not c.ok]
    assert arrived and not wrong, "\n".join(wrong)
    # every directed pair, both families, each judged on path MTU and PMTUD at least
    assert len(results) >= 2 * len(mesh_real.wanted(SITES))
    # the tasks are the agents': every record carries the template's reference sites
    sites = set((r["source_site"], r["dest_site"]) for r in mesh.records("pmtu"))
    assert len(sites) == len(real_mesh.pairs(SITES))
    # the coordinator's view of the same archive: report and alarms read it without error
    assert mesh_real.report(mesh, str(tmpdir))
