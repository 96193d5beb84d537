"""The action list and the targets, first in every rendering: text lines, the HTML section,
CSV rows. Each function returns nothing for a report built without the Actions hook."""

from html import escape

from .formatting import pct

SHOWN_TEXT = 20


def _who(t):
    """The ticket's owner in a few words: site (and how it was found), AS, owner, contact."""
    if t["site"]:
        who = t["site"]
        if t["owner_basis"] not in ("owners file", "the host's own site"):
            who += " (%s)" % t["owner_basis"]
    elif t["candidates"]:
        who = "%s or %s (%s)" % (t["candidates"][0], t["candidates"][1], t["owner_basis"])
    else:
        who = "no site of the mesh (%s)" % t["owner_basis"]
    extra = [x for x in ("AS%s" % t["as"] if t["as"] is not None else None, t["owner"], t["contact"])
             if x]
    return who + ("; " + ", ".join(extra) if extra else "")


def _what(t):
    if t["kind"] == "hop":
        return "hop %s%s (IPv%s): %s" % (t["ip"], " %s" % t["name"] if t["name"] else "",
                                          t["ip_version"] or "?", t["problem"])
    return "host %s: %s" % (t["host"], t["problem"])


def _unlocks(t):
    u, n = t["unlocks"], t["needed_by"]
    text = "unlocks %d paths (IPv4 %d, IPv6 %d)" % (u["paths"], u["ipv4"], u["ipv6"])
    if u["traffic"] is not None:
        text += ", %s of traffic (%.3g bytes)" % (pct(u["traffic"]), u["bytes"])
    if n["paths"] > u["paths"]:
        text += "; needed by %d" % n["paths"]
    return text


def _evidence(t):
    e = t["evidence"]
    text = "%d failing paths, last seen %s" % (e["paths"], e["last_seen"])
    if e["runs"]:
        text += ", black hole seen in %d of %d runs" % (e["runs_seen"] or 0, e["runs"])
    return text + "; e.g. " + "; ".join(e["examples"])


def text(r):
    """The first lines of the printed report: the tickets, then the targets."""
    a = r.get("actions")
    if a is None:
        return []
    out = ["Do this first: %d tickets, ranked by what fixing each unlocks (%d failing paths, %d "
           "not placed on a hop or host)" % (a["total"], a["failing_paths"], a["unexplained_paths"])]
    for t in a["tickets"][:SHOWN_TEXT]:
        out.append("  %2d. %s" % (t["rank"], _what(t)))
        out.append("      owner: %s" % _who(t))
        out.append("      %s" % _unlocks(t))
        out.append("      evidence: %s" % _evidence(t))
    if a["total"] > SHOWN_TEXT:
        out.append("  ... and %d more tickets (all of the first %d in the JSON, HTML and CSV)"
                   % (a["total"] - SHOWN_TEXT, len(a["tickets"])))
    if not a["tickets"]:
        out.append("  none: no failing path is placed on a hop or a host")
    if a["resolve"]:
        s = a["resolve"]
        out.append("  (reverse names: %d asked, %d answered, %d given up at the %g s budget)"
                   % (s["asked"], s["answered"], s["given_up"], s["budget_seconds"]))
    return out + [""] + targets_text(r)


def _due(d):
    track = {True: "on track", False: "NOT on track", None: "trend cannot tell"}[d["on_track"]]
    return ("%s %s of %s by %s (%s days): now %s; %s; %s" % (
        d["target"], pct(d["goal"]), d["counted_on"], d["date"], d["days_left"], pct(d["current"]),
        "met" if d["met"] else d["distance_text"], track))


def targets_text(r):
    out = ["Targets"]
    for d in r.get("targets_due") or ():
        out.append("  " + _due(d))
    if r.get("targets_due"):
        d = r["targets_due"][0]
        out.append("  (dates: %s; trend: %s)" % (d["date_source"], d["trend_basis"]))
    return out


def html(r, table):
    """The HTML section that opens the page (above every table); `table` is html._table."""
    a = r.get("actions")
    if a is None:
        return ""
    rows = [(t["rank"], _what(t), _who(t), _unlocks(t), _evidence(t)) for t in a["tickets"][:50]]
    parts = ['<h2 id="actions">Do this first: %d tickets, ranked by what fixing each unlocks</h2>'
             % a["total"],
             "<p>%d failing paths; %d not placed on a hop or a host.</p>"
             % (a["failing_paths"], a["unexplained_paths"]),
             table(["#", "what", "owner", "fixing it", "evidence"], rows) if rows else
             "<p>No failing path is placed on a hop or a host.</p>"]
    if a["total"] > len(rows):
        parts.append("<p>... and %d more (the JSON and CSV hold the first %d).</p>"
                     % (a["total"] - len(rows), len(a["tickets"])))
    due = "".join("<li>%s</li>" % escape(_due(d)) for d in r.get("targets_due") or ())
    if due:
        parts.append('<h2 id="targets">Targets</h2><ul>%s</ul><p class="meta">dates: %s; trend: %s'
                     "</p>" % (due, escape(r["targets_due"][0]["date_source"]),
                               escape(r["targets_due"][0]["trend_basis"])))
    return "\n".join(parts)


def rows(r):
    """CSV rows (section, item, metric, value) of the tickets and the targets."""
    a = r.get("actions")
    if a is None:
        return
    for t in a["tickets"]:
        item = "%d:%s" % (t["rank"], t["ip"] or t["host"])
        for k in ("kind", "ip", "host", "ip_version", "name", "as", "site", "owner_basis", "owner",
                  "contact", "problem", "mtu"):
            yield ("action", item, k, t[k])
        for k in ("paths", "ipv4", "ipv6", "bytes", "traffic"):
            yield ("action", item, "unlocks_" + k, t["unlocks"][k])
        yield ("action", item, "needed_by_paths", t["needed_by"]["paths"])
        for k in ("runs", "runs_seen", "last_seen"):
            yield ("action", item, k, t["evidence"][k])
    for d in r.get("targets_due") or ():
        for k in ("date", "days_left", "current", "met", "distance_text", "projected", "on_track"):
            yield ("target", d["target"], k, d[k])
