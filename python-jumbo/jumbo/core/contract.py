"""The plugins' enumerations under both pScheduler plugin contracts, from one description.

Contract 1 is pScheduler 5.2's (python-pscheduler's dictionary, PluginEnumeration/Test, Tool,
Archiver): no label, no spec, and `additionalProperties: false` forbids both. Contract 2 is
the 5.3 development line's (perfsonar/pscheduler #1526, pscheduler-json-dictionary): a test
and an archiver say `"schema": 2` and carry a `label` and `spec: {jsonschema: {versions},
uischema: {versions}}` (a test optionally `result: {jsonschema: {versions}}`); a tool carries
a `label` and stays at schema 1. One fixed document cannot satisfy both validators, so every
enumeration is built here, for the contract the caller names (jumbo.core.installed decides it
at run time from the installed pScheduler).

`versions` lists are indexed by schema version, element 0 null (there is no version 0), as
upstream's plugin-makefiles build them and python-pscheduler's plugins.py reads them.
"""

import copy
import re

from .. import __maintainer__, __version__

CONTRACTS = (1, 2)

# Who answers for the plugins (shown by `pscheduler plugins -v`, which prints name, email and
# href unconditionally: all three must be there): the packages' maintainer (jumbo.__maintainer__,
# stamped by `make dist`), or in a tree not built into packages a clear "unset" under the
# reserved .invalid domain (RFC 2606), never an address of somebody.
UNSET_MAINTAINER = {
    "name": "unset (a build from the source tree: make dist JUMBO_MAINTAINER='Name <address>')",
    "email": "unset@maintainer.invalid",
    "href": "https://maintainer.invalid/",
}


def maintainer(stamped=None):
    """pScheduler's Maintainer object {name, email, href} from "Name <address>"."""
    match = re.match(r"^([^<>]+?) <([^<>@\s]+@[^<>@\s]+\.[^<>@\s]+)>$",
                     __maintainer__ if stamped is None else stamped)
    if not match:
        return dict(UNSET_MAINTAINER)
    return {"name": match.group(1), "email": match.group(2), "href": "mailto:" + match.group(2)}


# What each plugin is, once: (kind, name) -> its members. `label` is contract 2's only.
PLUGINS = {
    ("test", "pmtu"): {
        "label": "Path MTU (jumbo frames)",
        "description": "Path MTU, PMTUD black holes and jumbo-frame (MTU 9000) readiness of a path",
        "scheduling-class": "background",
    },
    ("test", "jumbo-throughput"): {
        "label": "Jumbo Throughput (1500 vs 9000)",
        "description": "Paired 1500/9000 TCP throughput (iperf3, ABBA, MSS checked on the wire): "
                       "the jumbo gain",
        "scheduling-class": "exclusive",
    },
    ("tool", "jumbocheck"): {
        "label": "Jumbocheck",
        "description": "Exact path MTU, PMTUD black holes, per-hop and per-flow MTU, the reverse "
                       "path and paired 1500/9000 throughput",
        "tests": ["pmtu", "jumbo-throughput"],
        "preference": 10,
    },
    ("archiver", "jumbo"): {
        "label": "Jumbo-frame adoption store",
        "description": "Archive pmtu (and trace, throughput, latency) results as jumbo-frame "
                       "adoption records into OpenSearch or SQLite",
    },
}

# The member order of contract 1's documents, as the plugins have always printed them.
_ORDER = ("schema", "name", "label", "description", "version", "tests", "preference",
          "scheduling-class", "maintainer", "spec", "result")


def versions(by_number):
    """{1: schema, 2: schema} -> [None, schema, schema]: the list 5.3 indexes by version.
    Raises ValueError on a gap (a version 5.3 would then read as null)."""
    numbers = sorted(by_number)
    if numbers != list(range(1, len(numbers) + 1)):
        raise ValueError("schema versions must be 1..N without a gap, not %s" % numbers)
    return [None] + [copy.deepcopy(by_number[n]) for n in numbers]


def _ordered(members):
    """A dict whose iteration order is _ORDER's (json.dumps without sort_keys keeps it)."""
    return dict((key, members[key]) for key in _ORDER if key in members)


def enumeration(kind, name, contract, spec=None, uischema=None, result=None):
    """The enumeration of plugin (kind, name) under `contract` (1 or 2).

    spec, uischema, result: {version: JSON schema / UI schema} of the plugin's spec (tests and
    archivers) and result (tests); read by contract 2 only, which requires spec and uischema
    of tests and archivers. Raises ValueError for an unknown plugin or contract."""
    if contract not in CONTRACTS:
        raise ValueError("unknown pScheduler plugin contract %r (known: %s)"
                         % (contract, ", ".join(str(c) for c in CONTRACTS)))
    try:
        members = dict(PLUGINS[(kind, name)])
    except KeyError:
        raise ValueError("no plugin %s %r in the suite" % (kind, name))
    members.update(name=name, version=__version__, maintainer=maintainer())
    if contract == 1 or kind == "tool":
        members["schema"] = 1
    else:
        members["schema"] = 2
    if contract == 1:
        members.pop("label")
        return _ordered(members)
    if kind in ("test", "archiver"):
        if not spec or not uischema:
            raise ValueError("a %s's contract-2 enumeration needs its spec's JSON and UI "
                             "schemas" % kind)
        members["spec"] = {"jsonschema": {"versions": versions(spec)},
                           "uischema": {"versions": versions(uischema)}}
    if kind == "test" and result:
        members["result"] = {"jsonschema": {"versions": versions(result)}}
    return _ordered(members)
