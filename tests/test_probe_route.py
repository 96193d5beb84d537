"""jumbo.probe.route: the egress interface the kernel picks towards a dest and that
interface's MTU, read without privileges. Ground truth is a network namespace of the test's
own (unshare --net: it exists only as long as its one process, so nothing is left behind and
the machine's own interfaces and routes are never touched), holding two veth pairs with
MTUs set by hand: j9000 (MTU 9000, 198.18.5.0/24) and j1500 (MTU 1500, the more specific
198.18.5.128/25, which the kernel must prefer), and fd00:5::/64 on j9000. The loopback of the
test's own namespace is read as it is (its MTU from /sys, read independently)."""

import json
import os
import subprocess
import sys

import pytest

from jumbo.probe import route
from jumbo.probe.transport import ProbeError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run inside the private namespace: set it up with iproute2, then ask the module.
IN_NAMESPACE = r"""
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
from jumbo.probe import route
from jumbo.probe.transport import ProbeError

def ip(*words):
    subprocess.check_call(("ip",) + words)

answers = {}
def ask(key, *args, **kwargs):
    try:
        answers[key] = list(route.local_mtu(*args, **kwargs))
    except ProbeError as err:
        answers[key] = "ProbeError: %s" % err

ask("nothing up", "198.18.5.9", 4)
ip("link", "set", "lo", "up")
ip("link", "add", "j9000", "type", "veth", "peer", "name", "j9000p")
ip("link", "set", "j9000", "mtu", "9000", "up")
ip("link", "set", "j9000p", "up")
ip("addr", "add", "198.18.5.1/24", "dev", "j9000")
ip("-6", "addr", "add", "fd00:5::1/64", "dev", "j9000", "nodad")
ip("link", "add", "j1500", "type", "veth", "peer", "name", "j1500p")
ip("link", "set", "j1500", "mtu", "1500", "up")
ip("link", "set", "j1500p", "up")
ip("addr", "add", "198.18.5.129/25", "dev", "j1500")
ask("v4 wide", "198.18.5.9", 4)
ask("v4 specific", "198.18.5.200", 4)
ask("v6", "fd00:5::9", 6)
ask("v4 from", "198.18.5.9", 4, source="198.18.5.1")
ask("v4 unrouted", "198.19.0.1", 4)
ask("v4 foreign source", "198.18.5.9", 4, source="198.51.100.7")
answers["egress unrouted"] = route.egress_interface("198.19.0.1", 4)
print(json.dumps(answers))
"""


def _can_unshare():
    if os.geteuid() != 0:
        return False
    try:
        return subprocess.call(["unshare", "--net", "--", "true"], timeout=20) == 0
    except OSError:
        return False


@pytest.fixture(scope="module")
def answers():
    if not _can_unshare():
        pytest.skip("needs root and unshare: the routes live in a namespace of the test's own")
    out = subprocess.check_output(
        ["unshare", "--net", "--", sys.executable, "-c", IN_NAMESPACE,
         os.path.join(ROOT, "python-jumbo")], timeout=60, universal_newlines=True)
    return json.loads(out)


def test_the_interface_the_kernel_routes_through_and_its_mtu(answers):
    assert answers["v4 wide"] == ["j9000", 9000]
    assert answers["v6"] == ["j9000", 9000]
    assert answers["v4 from"] == ["j9000", 9000]


def test_the_more_specific_route_wins_as_the_kernel_decides(answers):
    assert answers["v4 specific"] == ["j1500", 1500]


def test_no_route_is_a_clear_probe_error(answers):
    assert answers["nothing up"] == \
        "ProbeError: No route to 198.18.5.9 from this host (network unreachable)"
    assert answers["v4 unrouted"] == \
        "ProbeError: No route to 198.19.0.1 from this host (network unreachable)"
    assert answers["egress unrouted"] is None


def test_a_source_not_on_this_host_is_refused_by_name(answers):
    assert answers["v4 foreign source"] == \
        "ProbeError: Source address 198.51.100.7 is not configured on this host"


def test_loopback_is_read_as_the_kernel_has_it():
    with open("/sys/class/net/lo/mtu") as handle:
        lo_mtu = int(handle.read())
    assert route.egress_interface("127.0.0.1", 4) == "lo"
    assert route.interface_mtu("lo") == lo_mtu
    assert route.local_mtu("127.0.0.1", 4) == ("lo", lo_mtu)


def test_an_interface_that_does_not_exist_has_no_mtu():
    assert route.interface_mtu("nosuchif0") is None
    assert route.interface_mtu("x" * 40) is None  # longer than IFNAMSIZ: no such device


def test_a_probe_error_is_a_jumbo_error():
    from jumbo.core.errors import JumboError
    assert issubclass(ProbeError, JumboError)
