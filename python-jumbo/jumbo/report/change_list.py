"""The report's changes section: state changes ranked so that one flapping path cannot bury a
regression of many paths, each with what it did to the path MTU of both directions.

    add_changes(report, store_changes, paths, site)   fills changes, change_days, flapping, ...
"""

import collections

from .path_record import family


def _site_changes(ch, keys):
    """The changes and flapping paths of a site's page: those of its own paths."""
    def own(c):
        return (c["source"], c["dest"], c["ip_version"]) in keys
    changes = [c for c in ch["changes"] if own(c)]
    return dict(ch, changes=changes, flapping=[f for f in ch["flapping"] if own(f)],
                changed_paths=len(set((c["source"], c["dest"], c["ip_version"]) for c in changes)),
                total_changes=len(changes))


def _change_kind(change):
    """regression (a jumbo path lost the target), improvement (a path gained it), or change."""
    if change["from"] == "jumbo" and change["to"] != "jumbo":
        return "regression"
    if change["to"] == "jumbo":
        return "improvement"
    return "change"


def add_changes(report, ch, paths, site=None):
    """The changes ranked so that one flapping path cannot bury a regression of many paths:
    the flapping paths' changes are left to the flapping list (one line each, with its
    count); the others stay newest first, each with its MTUs before and after; and the days
    are summed up in `change_days`, the day with the most regressions first."""
    if site is not None:
        ch = _site_changes(ch, set(p.key() for p in paths))
    flapping = set((f["source"], f["dest"], f["ip_version"]) for f in ch["flapping"])
    changes = []
    for c in ch["changes"]:
        if (c["source"], c["dest"], c["ip_version"]) in flapping:
            continue
        c = collections.OrderedDict(c)
        c["family"] = family(c["ip_version"])
        c["kind"] = _change_kind(c)
        changes.append(c)
    # Newest first, as the store gives them (the alarms read the latest change per path).
    days = collections.OrderedDict()
    for c in changes:
        day = days.setdefault(c["start"][:10], collections.OrderedDict([
            ("day", c["start"][:10]), ("regressions", 0), ("improvements", 0), ("changes", 0),
            ("regressed", [])]))
        day["changes"] += 1
        if c["kind"] == "regression":
            day["regressions"] += 1
            day["regressed"].append("%s -> %s %s" % (c["source"], c["dest"], c["family"]))
        elif c["kind"] == "improvement":
            day["improvements"] += 1
    report["changes"] = changes
    # Newest day first already: a stable sort puts the most regressions first.
    report["change_days"] = sorted(days.values(), key=lambda d: -d["regressions"])
    report["changed_paths"] = ch["changed_paths"]
    report["total_changes"] = ch.get("total_changes")
    report["flapping"] = [collections.OrderedDict(f, family=family(f["ip_version"]))
                          for f in ch["flapping"]]
    report["failed_paths"] = sum(1 for p in paths if p.state == "failed")
