"""Validation of a `pmtu` spec beyond its JSON schema: offline (host names are checked for
syntax only, never resolved: the contract forbids DNS in spec-is-valid; an unresolvable host
fails at run time). jumbo.testtype.spec answers spec-is-valid with it; the tool checks every
spec it is given with it."""

import ipaddress
import re

from .. import mtu as mtus
from .. import schema as schemas
from .. import validate as validation
from ..units import duration_seconds_or_none
from .typed import DEFAULTS

# The throughput phase left pmtu (a background test) for its own exclusive test.
MOVED_TO_PAIR_TEST = (
    "the paired 1500/9000 throughput is no longer part of pmtu (pmtu runs in the background; "
    "bulk traffic needs an exclusive slot): use the %s test, e.g. "
    "`pscheduler task %s --dest HOST`" % (schemas.PAIR_TEST, schemas.PAIR_TEST))

# Bounds that the JSON schema cannot express (durations are strings there).
TIMEOUT_MAX = 60.0
THROUGHPUT_DURATION_MIN = 1.0
THROUGHPUT_DURATION_MAX = 3600.0
THROUGHPUT_OMIT_MAX = 600.0


# ------------------------------------------------------------------------------------------
# Addresses and host names (syntax only, never resolved)

_IPV4_RE = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\Z")
_LABEL_RE = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\Z")
_ZONE_RE = re.compile(r"^[A-Za-z0-9_.-]{1,15}\Z")


def _is_ipv4(text):
    match = _IPV4_RE.match(text)
    return bool(match) and all(int(part) <= 255 and (part == "0" or not part.startswith("0"))
                               for part in match.groups())


def _is_ipv6(text):
    if "%" in text:
        text, zone = text.split("%", 1)
        if not _ZONE_RE.match(zone):
            return False
    if ":" not in text or not re.match(r"^[0-9A-Fa-f:.]+\Z", text):
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def address_family(text):
    """4 or 6 for an IP literal, None for a host name (or anything else)."""
    if not isinstance(text, str):
        return None
    if _is_ipv4(text):
        return 4
    if _is_ipv6(text):
        return 6
    return None


def host_problem(text):
    """None if `text` is an IP literal or a syntactically valid host name, else the problem."""
    if address_family(text) == 6 and "%" in text:
        # A zone only names a link: probes, the reverse path and iperf3 would each need it
        # carried to their sockets, and pScheduler reaches a node by its address alone.
        return "%r is a scoped (link-local) IPv6 address: a zone (%%%s) is not supported; " \
            "use the host's global or unique-local address" % (text, text.split("%", 1)[1])
    if address_family(text):
        return None
    if text.startswith("[") or ":" in text:
        return "%r is neither a host name nor an IP address (write IPv6 without brackets or port)" \
            % text
    if _IPV4_RE.match(text):
        return "%r is not a valid IPv4 address" % text
    name = text[:-1] if text.endswith(".") else text
    if len(name) > 253 or not name:
        return "%r is too long for a host name" % text
    for label in name.split("."):
        if not _LABEL_RE.match(label):
            return "%r is not a valid host name (label %r)" % (text, label)
    if re.match(r"^[0-9.]+\Z", name):
        return "%r is not a valid IPv4 address" % text
    return None


def node_problem(text):
    """Like host_problem, but a participant node may also carry a port: host:port, [v6]:port."""
    match = re.match(r"^\[([^\]]+)\](?::(\d+))?\Z", text)
    if match:
        host, port = match.group(1), match.group(2)
        if address_family(host) != 6:
            return "%r: only an IPv6 address may be written in brackets" % text
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, None
    if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
        return "%r has an invalid port" % text
    return host_problem(host)


# ------------------------------------------------------------------------------------------
# Validation

def effective_ip_version(spec):
    """The spec's ip-version, else the family of a literal dest or source, else None."""
    if spec.get("ip-version") in (4, 6):
        return spec["ip-version"]
    for key in ("dest", "source"):
        family = address_family(spec.get(key))
        if family:
            return family
    return None


def semantic_problem(spec):
    """First problem the JSON schema cannot see, as "At /field: ...", or None."""
    for check in (_hosts_problem, _families_problem, _sizes_problem, _timeout_problem):
        problem = check(spec)
        if problem:
            return problem
    return None


def _hosts_problem(spec):
    for key in ("source", "dest"):
        if key in spec:
            problem = host_problem(spec[key])
            if problem:
                return "At /%s: %s" % (key, problem)
    for key in ("source-node", "dest-node"):
        if key in spec:
            problem = node_problem(spec[key])
            if problem:
                return "At /%s: %s" % (key, problem)
    return None


def _families_problem(spec):
    version = spec.get("ip-version")
    families = {}
    for key in ("dest", "source"):
        family = address_family(spec.get(key))
        if family:
            families[key] = family
            if version is not None and family != version:
                return "At /%s: %s is an IPv%d address but ip-version is %d" % (
                    key, spec[key], family, version)
    if len(set(families.values())) > 1:
        return "At /source: %s is an IPv%d address but dest %s is IPv%d" % (
            spec["source"], families["source"], spec["dest"], families["dest"])
    return None


def _sizes_problem(spec):
    family = effective_ip_version(spec)
    floor = mtus.MIN_MTU[6 if family == 6 else 4]
    for key in ("target-mtu", "max-mtu", "min-mtu"):
        if key in spec and spec[key] < floor:
            return "At /%s: %d is below the IPv%d minimum MTU of %d" % (
                key, spec[key], family or 4, floor)
    if "min-mtu" in spec and "max-mtu" in spec and spec["min-mtu"] > spec["max-mtu"]:
        return "At /min-mtu: %d is larger than max-mtu %d" % (spec["min-mtu"], spec["max-mtu"])
    # Against the default target too: min-mtu 50000 alone passed and then failed at run time.
    target = spec.get("target-mtu", DEFAULTS["target-mtu"])
    if "min-mtu" in spec and spec["min-mtu"] > target:
        return "At /min-mtu: %d is larger than target-mtu %d" % (spec["min-mtu"], target)
    return None


def _timeout_problem(spec):
    if "timeout" in spec:
        seconds = duration_seconds_or_none(spec["timeout"])
        if seconds is None:
            return "At /timeout: %r is not a usable duration" % (spec["timeout"],)
        if not 0 < seconds <= TIMEOUT_MAX:
            return "At /timeout: %s must be more than 0 and at most PT%dS" % (
                spec["timeout"], TIMEOUT_MAX)
    return None


def shape_problem(spec):
    """Unknown or missing members, named by their own path (clearer than the schema's "At /")."""
    properties = schemas.SPEC_VERSIONS[spec.get("schema", 1)]["properties"]
    if "throughput" in spec:
        return "At /throughput: %s" % MOVED_TO_PAIR_TEST
    for key in sorted(spec, key=str):
        if key not in properties:
            return "At /%s: unknown field (allowed: %s)" % (key, ", ".join(sorted(properties)))
    if "dest" not in spec:
        return "At /dest: required field is missing"
    # Host syntax first: a friendlier message than the schema's pattern.
    for key, check in (("source", host_problem), ("dest", host_problem),
                       ("source-node", node_problem), ("dest-node", node_problem)):
        if isinstance(spec.get(key), str):
            problem = check(spec[key])
            if problem:
                return "At /%s: %s" % (key, problem)
    return None


def validate(spec):
    """Full validation of a pmtu spec: (True, None) or (False, "At /field: problem")."""
    return validation.validate_spec(spec, schemas.MAX_SPEC_SCHEMA, shape_problem,
                                    validation.check_spec, semantic_problem)


def require_valid(spec):
    """Raise ValueError("Invalid spec: At /...") unless the spec is valid."""
    return validation.require_valid(spec, validate)
