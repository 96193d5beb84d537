"""Who owns a hop: the operator's map of prefixes, and reverse DNS within a strict time budget.

The owners file (jumbo-report --owners FILE) is JSON (the coordinator's dependencies carry no
YAML parser, and JSON is what every tool that exports an IPAM or a CRIC dump writes):

    {"prefixes": [
       {"prefix": "198.18.5.0/24", "site": "SITE-E", "as": 64500,
        "owner": "Site E network team", "contact": "noc@site-e.example"},
       ...]}

It comes from outside and is read as hostile input: at most MAX_FILE bytes and MAX_PREFIXES
entries, only the keys above, a prefix that parses (either family), an AS number in 0..2^32-1
("AS64500" or 64500), printable strings of at most MAX_TEXT characters. The longest prefix
holding an address wins. Any fault is a ReportError naming the file, the entry and the key.

Reverse names: `Resolver(budget)` asks the system resolver (socket.gethostbyaddr) for every
address in daemon threads and waits at most `budget` seconds in all; a lookup still running
then is given up (the thread may finish on its own but never holds the report or the
process's exit). A name is kept only when it is a plausible host name (a PTR record is
whatever the address's owner wrote). Answers are cached for the process (jumbo-alarms and a
long-running caller ask again about the same hops).
"""

import ipaddress
import json
import os
import queue
import re
import socket
import threading
import time

from .errors import ReportError

MAX_FILE = 4 << 20
MAX_PREFIXES = 100000
MAX_TEXT = 200
MAX_AS = (1 << 32) - 1
KEYS = ("prefix", "site", "as", "owner", "contact")
_PRINTABLE = re.compile(r"^[^\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                        r"\u2066-\u2069]*$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})"
                       r"(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*$")
DEFAULT_BUDGET = 2.0
MAX_BUDGET = 30.0
MAX_LOOKUPS = 1000


class OwnerMap(object):
    """Longest-prefix match over the operator's prefixes, per IP version."""

    def __init__(self, entries, source=None):
        self.source = source
        self._by_len = {4: {}, 6: {}}
        for net, entry in entries:
            self._by_len[net.version].setdefault(net.prefixlen, {})[net] = entry
        self._lens = {v: sorted(d, reverse=True) for v, d in self._by_len.items()}

    def __len__(self):
        return sum(len(d) for by in self._by_len.values() for d in by.values())

    def lookup(self, address):
        """The entry (dict without 'prefix', plus 'prefix' as text) of the longest prefix
        holding `address`, or None (also for a text that is no address)."""
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return None
        for plen in self._lens[ip.version]:
            net = ipaddress.ip_network((ip, plen), strict=False)
            entry = self._by_len[ip.version][plen].get(net)
            if entry is not None:
                return entry
        return None


def _text(path, i, key, value):
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT \
            or not _PRINTABLE.match(value):
        raise ReportError("owners file %s entry %d: %r must be printable text of 1-%d characters"
                          % (path, i, key, MAX_TEXT))
    return value.strip()


def _as_number(path, i, value):
    text = value
    if isinstance(value, str) and value.upper().startswith("AS"):
        text = value[2:]
    if isinstance(text, bool):
        text = None
    try:
        number = int(text) if isinstance(text, (int, str)) else None
    except ValueError:
        number = None
    if number is None or not 0 <= number <= MAX_AS:
        raise ReportError("owners file %s entry %d: 'as' must be an AS number (0-%d, or "
                          "'AS64500')" % (path, i, MAX_AS))
    return number


def _entry(path, i, item):
    if not isinstance(item, dict):
        raise ReportError("owners file %s entry %d: expected an object" % (path, i))
    unknown = sorted(str(k)[:40] for k in item if k not in KEYS)
    if unknown:
        raise ReportError("owners file %s entry %d: unknown key(s) %s (known: %s)"
                          % (path, i, ", ".join(repr(k) for k in unknown), ", ".join(KEYS)))
    prefix = item.get("prefix")
    try:
        net = ipaddress.ip_network(prefix, strict=False) if isinstance(prefix, str) else None
    except ValueError:
        net = None
    if net is None:
        raise ReportError("owners file %s entry %d: 'prefix' must be an IPv4 or IPv6 prefix "
                          "(198.18.5.0/24, fd00:5::/48)" % (path, i))
    entry = {"prefix": str(net)}
    for key in ("site", "owner", "contact"):
        if item.get(key) is not None:
            entry[key] = _text(path, i, key, item[key])
    if item.get("as") is not None:
        entry["as"] = _as_number(path, i, item["as"])
    if len(entry) == 1:
        raise ReportError("owners file %s entry %d: names no site, as, owner or contact" % (path, i))
    return net, entry


def read_owners(path):
    """The operator's owners file as an OwnerMap; ReportError on any fault."""
    try:
        size = os.path.getsize(path)
    except OSError:
        raise ReportError("owners file %s: no such file" % path)
    if size > MAX_FILE:
        raise ReportError("owners file %s: %d bytes, more than the %d allowed"
                          % (path, size, MAX_FILE))
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.loads(handle.read(MAX_FILE + 1))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ReportError("owners file %s: not readable JSON: %s" % (path, err))
    if not isinstance(doc, dict) or set(doc) != {"prefixes"} or not isinstance(doc["prefixes"], list):
        raise ReportError('owners file %s: expected {"prefixes": [{"prefix": ..., "site": ...}, '
                          '...]}' % path)
    items = doc["prefixes"]
    if not items or len(items) > MAX_PREFIXES:
        raise ReportError("owners file %s: 1 to %d prefixes, not %d" % (path, MAX_PREFIXES, len(items)))
    seen = set()
    entries = []
    for i, item in enumerate(items, 1):
        net, entry = _entry(path, i, item)
        if net in seen:
            raise ReportError("owners file %s entry %d: prefix %s given twice" % (path, i, net))
        seen.add(net)
        entries.append((net, entry))
    return OwnerMap(entries, source=path)


def hop_owner(ip, end_sites, owners=None):
    """(site, basis, candidates, the owners file's entry or {}) of a hop: the owners file's
    site where a prefix holds it; else the site at one end of every path through it (its
    paths may start or end there: a site's firewall blocks inbound and outbound alike); the
    two sites of a link when two are at the ends of every path (candidates); else transit.
    `end_sites` is the set of sites at an end of every path through the hop."""
    entry = owners.lookup(ip) if owners is not None else None
    if entry and entry.get("site"):
        return entry["site"], "owners file", [], entry
    sites = sorted(end_sites or ())
    if len(sites) == 1:
        return sites[0], "every path through it starts or ends there", [], entry or {}
    if len(sites) == 2:
        return None, "link between two sites", sites, entry or {}
    return None, "transit: no site is at an end of every path", [], entry or {}


# -- reverse DNS ------------------------------------------------------------------------------

_CACHE = {}
_CACHE_LOCK = threading.Lock()


def system_lookup(address):
    """The system resolver's PTR name of `address` (socket.gethostbyaddr), or None."""
    try:
        return socket.gethostbyaddr(address)[0]
    except (OSError, UnicodeError, ValueError):
        return None


def plausible_name(name):
    if not isinstance(name, str):
        return None
    name = name.rstrip(".")
    return name if _HOSTNAME.match(name) else None


class Resolver(object):
    """Reverse names of addresses, `budget` seconds in all, `workers` lookups at a time."""

    def __init__(self, lookup=system_lookup, budget=DEFAULT_BUDGET, workers=8, cache=_CACHE):
        if not 0 < budget <= MAX_BUDGET:
            raise ReportError("--resolve-budget must be above 0 and at most %g seconds" % MAX_BUDGET)
        self.lookup = lookup
        self.budget = float(budget)
        self.workers = int(workers)
        self.cache = cache
        self.stats = None

    def names(self, addresses):
        """{address: name or None}; self.stats says how many were asked, answered, given up."""
        wanted = []
        out = {}
        hits = 0
        for a in addresses:
            if a in out or a in wanted:
                continue
            with _CACHE_LOCK:
                hit = a in self.cache
                if hit:
                    out[a] = self.cache[a]
                    hits += 1
            if not hit:
                wanted.append(a)
        wanted = wanted[:MAX_LOOKUPS]
        answers = queue.Queue()
        todo = queue.Queue()
        for a in wanted:
            todo.put(a)

        def work():
            while True:
                try:
                    a = todo.get_nowait()
                except queue.Empty:
                    return
                answers.put((a, plausible_name(self.lookup(a))))

        for _ in range(min(self.workers, len(wanted))):
            threading.Thread(target=work, daemon=True).start()
        deadline = time.monotonic() + self.budget
        got = 0
        while got < len(wanted):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                a, name = answers.get(timeout=left)
            except queue.Empty:
                break
            got += 1
            out[a] = name
            with _CACHE_LOCK:
                self.cache[a] = name
        given_up = [a for a in wanted if a not in out]
        for a in given_up:
            out[a] = None
        self.stats = {"asked": len(wanted), "cached": hits,
                      "answered": got, "given_up": len(given_up), "budget_seconds": self.budget}
        return out
