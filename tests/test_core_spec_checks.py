"""jumbo.core.spec.checks: a pmtu spec's validation beyond its JSON schema, offline (host
names by syntax, never resolved). Every refusal is (False, "At /<field>: <why>") naming the
field to fix; the expected messages are the module's own wording, the bounds are the family
minimum MTUs of RFC 791 (68) and RFC 8200 (1280)."""

import pytest

from jumbo.core.errors import JumboError

from jumbo.core.spec import checks


# ------------------------------------------------------------------------------------------
# Addresses and host names

@pytest.mark.parametrize("text,family", [
    ("198.18.0.1", 4), ("255.255.255.255", 4), ("0.0.0.0", 4),
    ("fd00::1", 6), ("fe80::1%veth0", 6), ("::ffff:198.18.0.1", 6), ("::", 6),
    ("host.example", None), ("01.2.3.4", None), ("256.1.1.1", None), ("1.2.3", None),
    ("192.0.2.2\n", None), ("2001:db8::1\n", None), ("fd00::1%", None),
    ("fd00::1%" + "a" * 16, None), ("[fd00::1]", None), ("fd00:::1", None),
    (None, None), (4, None), (b"198.18.0.1", None),
])
def test_address_family(text, family):
    assert checks.address_family(text) == family


@pytest.mark.parametrize("text,problem", [
    ("198.18.0.1", None), ("fd00::2", None), ("ps-1.cern.ch", None), ("ps-1.cern.ch.", None),
    ("_srv.example", None), ("a" * 63 + ".example", None),
    ("fe80::1%eth0", "'fe80::1%eth0' is a scoped (link-local) IPv6 address: a zone (%eth0) is "
                     "not supported; use the host's global or unique-local address"),
    ("[fd00::1]", "'[fd00::1]' is neither a host name nor an IP address (write IPv6 without "
                  "brackets or port)"),
    ("host:80", "'host:80' is neither a host name nor an IP address (write IPv6 without "
                "brackets or port)"),
    ("999.1.1.1", "'999.1.1.1' is not a valid IPv4 address"),
    ("1.2.3", "'1.2.3' is not a valid IPv4 address"),
    ("010.1.1.1", "'010.1.1.1' is not a valid IPv4 address"),
    ("a..b", "'a..b' is not a valid host name (label '')"),
    ("-a.b", "'-a.b' is not a valid host name (label '-a')"),
    ("a" * 64 + ".example", "%r is not a valid host name (label %r)" % (
        "a" * 64 + ".example", "a" * 64)),
    ("h;rm -rf", "'h;rm -rf' is not a valid host name (label 'h;rm -rf')"),
    (".", "'.' is too long for a host name"),
    ("a." * 127 + "a", "%r is too long for a host name" % ("a." * 127 + "a")),
])
def test_a_host_is_an_ip_literal_or_a_host_name_by_syntax(text, problem):
    assert checks.host_problem(text) == problem


@pytest.mark.parametrize("text,problem", [
    ("ps-1.example", None), ("ps-1.example:443", None), ("198.18.0.1:1", None),
    ("[fd00::1]", None), ("[fd00::1]:65535", None), ("fd00::1", None),
    ("h:0", "'h:0' has an invalid port"), ("h:65536", "'h:65536' has an invalid port"),
    ("h:x", "'h:x' has an invalid port"), ("h:", "'h:' has an invalid port"),
    ("[198.18.0.1]:80", "'[198.18.0.1]:80': only an IPv6 address may be written in brackets"),
    ("[h]", "'[h]': only an IPv6 address may be written in brackets"),
    ("bad_host!:80", "'bad_host!' is not a valid host name (label 'bad_host!')"),
])
def test_a_node_may_carry_a_port(text, problem):
    assert checks.node_problem(text) == problem


def test_effective_ip_version():
    assert checks.effective_ip_version({"dest": "h"}) is None
    assert checks.effective_ip_version({"dest": "fd00::1"}) == 6
    assert checks.effective_ip_version({"dest": "h", "source": "198.18.0.1"}) == 4
    assert checks.effective_ip_version({"dest": "h", "ip-version": 6}) == 6
    assert checks.effective_ip_version({"dest": "198.18.0.1", "ip-version": 6}) == 6
    assert checks.effective_ip_version({"dest": "h", "ip-version": 5}) is None


# ------------------------------------------------------------------------------------------
# Whole specs

@pytest.mark.parametrize("spec,error", [
    ({"dest": "h", "throughput": {}}, "At /throughput: " + checks.MOVED_TO_PAIR_TEST),
    ({"dest": "h", "colour": 1}, "At /colour: unknown field (allowed: dest, dest-node, flows, "
     "hops, ip-version, max-mtu, min-mtu, reflector, reverse, schema, source, source-node, "
     "target-mtu, timeout)"),
    ({"source": "h"}, "At /dest: required field is missing"),
    ({"dest": "h", "dest-node": "[198.18.0.1]:80"},
     "At /dest-node: '[198.18.0.1]:80': only an IPv6 address may be written in brackets"),
    ({"dest": "h", "timeout": "PT0S"}, "At /timeout: PT0S must be more than 0 and at most PT60S"),
    ({"dest": "h", "timeout": "PT60.5S"},
     "At /timeout: PT60.5S must be more than 0 and at most PT60S"),
    ({"dest": "h", "timeout": "P1M"}, "At /timeout: 'P1M' is not a usable duration"),
    ({"dest": "198.18.0.1", "source": "fd00::1"},
     "At /source: fd00::1 is an IPv6 address but dest 198.18.0.1 is IPv4"),
    ({"dest": "h", "source": "fd00::1", "ip-version": 4},
     "At /source: fd00::1 is an IPv6 address but ip-version is 4"),
    ({"dest": "198.18.0.1", "ip-version": 6},
     "At /dest: 198.18.0.1 is an IPv4 address but ip-version is 6"),
    ({"dest": "fd00::1", "min-mtu": 1279}, "At /min-mtu: 1279 is below the IPv6 minimum MTU of 1280"),
    ({"dest": "h", "ip-version": 6, "target-mtu": 1000},
     "At /target-mtu: 1000 is below the IPv6 minimum MTU of 1280"),
    ({"dest": "h", "min-mtu": 2000, "max-mtu": 1500},
     "At /min-mtu: 2000 is larger than max-mtu 1500"),
    ({"dest": "h", "max-mtu": 1500, "min-mtu": 1400, "target-mtu": 1300},
     "At /min-mtu: 1400 is larger than target-mtu 1300"),
    # Found on a real pScheduler: --min-mtu 50000 passed spec-is-valid, the run then failed.
    ({"schema": 1, "dest": "h2", "min-mtu": 50000},
     "At /min-mtu: 50000 is larger than target-mtu 9000"),
])
def test_a_refused_spec_names_its_field_and_the_reason(spec, error):
    assert checks.validate(spec) == (False, error)


@pytest.mark.parametrize("spec", [
    {"dest": "h"}, {"dest": "fd00::1", "min-mtu": 1280, "max-mtu": 9000},
    {"dest": "198.18.0.2", "source": "198.18.0.1", "ip-version": 4, "min-mtu": 68},
    {"dest": "h", "dest-node": "[fd00::1]:443", "timeout": "PT60S", "flows": 64},
    {"dest": "h", "min-mtu": 9000},
])
def test_a_valid_spec_is_accepted(spec):
    assert checks.validate(spec) == (True, None)
    assert checks.require_valid(spec) is spec


def test_every_validation_message_names_a_field():
    cases = [
        {"dest": "h", "min-mtu": 2000, "max-mtu": 1500},
        {"dest": "fd00::1", "max-mtu": 1279},
        {"dest": "10.0.0.1", "ip-version": 6},
        {"dest": "h", "flows": 100},
        {"dest": "h", "nope": 1},
        {"dest": "h", "schema": "x"},
        {"dest": "h", "throughput": {"omit": "PT601S"}},
        {"dest": "h", "throughput": {}},
    ]
    for spec in cases:
        valid, error = checks.validate(spec)
        assert not valid and error.startswith("At /"), (spec, error)


def test_non_objects_are_invalid_not_crashes():
    for value in (None, [], "x", 3, True):
        valid, error = checks.validate(value)
        assert not valid and "object" in error


@pytest.mark.parametrize("field", ["dest", "source"])
def test_scoped_ipv6_is_refused_at_submit(field):
    """A zone (fe80::1%eth0) passed spec-is-valid and then failed at run time; refuse it."""
    spec = {"schema": 1, "dest": "fd00::2", field: "fe80::1%a0"}
    valid, error = checks.validate(spec)
    assert not valid and error.startswith("At /%s:" % field) and "scope" in error, error


def test_require_valid_raises_with_the_message():
    with pytest.raises(ValueError) as caught:
        checks.require_valid({"dest": "h", "flows": 0})
    assert str(caught.value) == "Invalid spec: At /flows: 0 is less than the minimum of 1"
    # Under the library's one exception base, so a command explains it instead of a traceback.
    assert isinstance(caught.value, JumboError)


def test_semantic_problem_alone_sees_what_the_schema_cannot():
    assert checks.semantic_problem({"dest": "h", "timeout": "PT2S"}) is None
    assert checks.semantic_problem({"dest": "h", "timeout": "PT61S"}).startswith("At /timeout:")
    assert checks.shape_problem({"dest": "h", "max-mtu": "x"}) is None  # the schema's to say
