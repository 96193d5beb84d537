"""The `--hops` table (jumbo.probe.scan) with the black hole in every position of the path:
on the source's own link (a switch: big packets reach no hop at all, also with the dest
directly connected), in the middle, and on the link into the dest. Each hop's address and
MTU, and where the hole is, against the topology's truth, in both families; and the text an
operator reads (jumbocheck's table and verdict line)."""

import json
import os

import pytest

from jumbo.protocol.probe_cli import text
from lab_support import ROOT, needs_lab

# This checkout's library, whatever checkout the virtualenv's editable install names (a
# worktree sharing another's virtualenv would otherwise run that one's code).
JUMBOCHECK = ["env", "PYTHONPATH=" + os.path.join(ROOT, "python-jumbo"),
              os.path.join(ROOT, ".venv", "bin", "jumbocheck")]


def expected_hops(lab, path, version):
    """[(ttl, address, MTU)] for every hop past the source: the address its time-exceeded
    messages come from (on the link the probes reach it by), the largest packet reaching it."""
    topology = lab.topology
    carried = [topology.link_between(a, b).carries() for a, b in zip(path, path[1:])]
    return [(ttl, topology.link_address(topology.link_between(path[ttl - 1], node), node,
                                        version).compressed, min(carried[:ttl]))
            for ttl, node in enumerate(path[1:], start=1)]


def check_progress(stderr, elapsed):
    """One line per phase on stderr once a run lasts a second; none for a quick run."""
    lines = [line for line in stderr.splitlines() if line.startswith("jumbocheck: ")]
    if elapsed >= 1.3:
        assert lines and all(line.endswith(" ...") for line in lines), stderr
        assert len(lines) == len(set(lines)) <= 5, stderr  # phases, not a spinner
    elif elapsed < 0.8:
        assert not lines, stderr


@needs_lab
@pytest.mark.parametrize("scenario", ["hole-first-link-direct", "hole-first-link",
                                      "hole-middle-link", "hole-last-link"])
def test_hop_table_with_the_hole_anywhere(lab_factory, scenario):
    lab = lab_factory(scenario)
    for version in (4, 6):
        truth = lab.truth("src", "dst", version)
        member = truth["members"][0]
        assert truth["pmtud"] == "blackhole" and truth["path-mtu"] == 8950, truth
        dest = lab.address("dst", version)
        done = lab.run("src", JUMBOCHECK + [dest, "--hops", "--json"], user="jumbotest",
                       check=False, timeout=120)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)  # progress never reaches stdout
        check_progress(done.stderr, result["elapsed"])
        assert (result["path-mtu"], result["pmtud"]) == (8950, "blackhole"), result
        hops = expected_hops(lab, member["path"], version)
        measured = [(h["ttl"], h["ip"], h["mtu"]) for h in result["hops"]]
        # Every hop once, the dest last at its own TTL (no silent `*` before it).
        assert measured == hops, (version, result["hops"])
        assert all(h["rtt"].startswith("PT") for h in result["hops"])  # the schema: ISO 8601
        hole = member["blackhole-ttl"]
        assert result["blackhole"] == {"ttl": hole, "ip": member["blackhole-ip"],
                                       "size": member["hop-mtus"][hole] + 1}, result
        shown = text(result)
        before = "this host" if hole == 0 else "hop %d (%s)" % (hole, member["blackhole-ip"])
        after = "hop %d (%s)" % hops[hole][:2]
        assert "black hole between %s and %s, 8951-9000 byte packets vanish" % (before, after) \
            in shown.splitlines()[0], shown
        rows = [line.split() for line in shown.splitlines() if line.startswith("  hop ")]
        assert [(int(r[1]), r[2], int(r[4])) for r in rows] == hops, shown
        # RTTs as pScheduler prints them: milliseconds.
        assert all(r[5:] and r[-1] == "ms" and float(r[-2]) > 0 for r in rows), shown
    if scenario == "hole-last-link":
        # Over UDP the dest answers about once a second: a run of seconds, quiet when asked.
        done = lab.run("src", JUMBOCHECK + [lab.address("dst", 4), "--quiet", "--hops"],
                       user="jumbotest", check=False, timeout=120)
        assert done.returncode == 0 and done.stdout.startswith("Path MTU 8950"), done.stderr
        assert "jumbocheck:" not in done.stderr and "probes in 0." not in done.stdout, \
            (done.stdout, done.stderr)
