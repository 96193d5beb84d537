"""jumbo.report.actions_view: the action list and the targets as text lines, the HTML section
and CSV rows. Two tickets written by hand in the report's shape (jumbo.report.actions): a hop
with an owner found in the owners file and its traffic known, and a host whose site is one
of two candidates; expected lines written out in full. A hostile hop name (markup) is shown
as text in HTML, never as markup; a report without the Actions hook renders nothing."""

from jumbo.report import actions_view
from jumbo.report.html import _table

HOP = {"rank": 1, "kind": "hop", "ip": "198.18.5.2", "host": None, "ip_version": 4,
       "name": "fw.site-e.example", "as": 64500, "site": "SITE-E", "owner_basis": "owners file",
       "owner": "Site E NOC", "contact": "noc@site-e.example", "problem": "drops 9000 silently",
       "mtu": 1500,
       "unlocks": {"paths": 12, "ipv4": 10, "ipv6": 2, "bytes": 3.2e12, "traffic": 0.25},
       "needed_by": {"paths": 14},
       "evidence": {"paths": 12, "last_seen": "2026-11-20", "runs": 40, "runs_seen": 38,
                    "examples": ["a -> b IPv4", "c -> b IPv4"]}}
HOST = {"rank": 2, "kind": "host", "ip": None, "host": "ps-b.example", "ip_version": None,
        "name": None, "as": None, "site": None, "owner_basis": "hop between two sites",
        "candidates": ["SITE-A", "SITE-B"], "owner": None, "contact": None,
        "problem": "interface MTU 1500", "mtu": 1500,
        "unlocks": {"paths": 3, "ipv4": 3, "ipv6": 0, "bytes": None, "traffic": None},
        "needed_by": {"paths": 3},
        "evidence": {"paths": 3, "last_seen": "2026-11-19", "runs": 0, "runs_seen": None,
                     "examples": ["ps-b -> d IPv4"]}}
DUE = [{"target": "DC26", "goal": 0.5, "counted_on": "results", "date": "2026-12-31",
        "days_left": 35, "current": 0.435, "met": False, "distance_text": "6.5 points short",
        "on_track": False, "projected": 0.47, "date_source": "--target-date",
        "trend_basis": "17 days of results"},
       {"target": "DC28", "goal": 0.99, "counted_on": "results", "date": "2028-12-31",
        "days_left": 766, "current": 0.435, "met": False, "distance_text": "55.5 points short",
        "on_track": None, "projected": None, "date_source": "--target-date",
        "trend_basis": "17 days of results"}]


def report(tickets=(HOP, HOST), total=None, resolve=None):
    tickets = [dict(t, candidates=t.get("candidates", [])) for t in tickets]
    return {"actions": {"total": len(tickets) if total is None else total, "failing_paths": 16,
                        "unexplained_paths": 1, "tickets": tickets, "resolve": resolve},
            "targets_due": DUE}


def test_text_lists_each_ticket_with_owner_what_it_unlocks_and_evidence():
    lines = actions_view.text(report())
    assert lines[:9] == [
        "Do this first: 2 tickets, ranked by what fixing each unlocks (16 failing paths, 1 not "
        "placed on a hop or host)",
        "   1. hop 198.18.5.2 fw.site-e.example (IPv4): drops 9000 silently",
        "      owner: SITE-E; AS64500, Site E NOC, noc@site-e.example",
        "      unlocks 12 paths (IPv4 10, IPv6 2), 25.0% of traffic (3.2e+12 bytes); needed by 14",
        "      evidence: 12 failing paths, last seen 2026-11-20, black hole seen in 38 of 40 "
        "runs; e.g. a -> b IPv4; c -> b IPv4",
        "   2. host ps-b.example: interface MTU 1500",
        "      owner: SITE-A or SITE-B (hop between two sites)",
        "      unlocks 3 paths (IPv4 3, IPv6 0)",
        "      evidence: 3 failing paths, last seen 2026-11-19; e.g. ps-b -> d IPv4"]


def test_the_targets_follow_with_their_dates_and_trend():
    lines = actions_view.text(report())
    assert lines[9:] == [
        "", "Targets",
        "  DC26 50.0% of results by 2026-12-31 (35 days): now 43.5%; 6.5 points short; "
        "NOT on track",
        "  DC28 99.0% of results by 2028-12-31 (766 days): now 43.5%; 55.5 points short; "
        "trend cannot tell",
        "  (dates: --target-date; trend: 17 days of results)"]


def test_text_says_how_many_more_and_the_resolvers_figures():
    many = report(tickets=[dict(HOP, rank=i + 1) for i in range(25)],
                  resolve={"asked": 5, "answered": 3, "given_up": 2, "budget_seconds": 2.0})
    lines = actions_view.text(many)
    assert sum(1 for line in lines if line.startswith("      owner:")) == actions_view.SHOWN_TEXT
    assert "  ... and 5 more tickets (all of the first 25 in the JSON, HTML and CSV)" in lines
    assert "  (reverse names: 5 asked, 3 answered, 2 given up at the 2 s budget)" in lines


def test_no_ticket_is_said_and_no_hook_renders_nothing():
    lines = actions_view.text(report(tickets=()))
    assert lines[1] == "  none: no failing path is placed on a hop or a host"
    assert actions_view.text({}) == []
    assert actions_view.html({}, _table) == ""
    assert list(actions_view.rows({})) == []
    assert actions_view.targets_text({}) == ["Targets"]


def test_html_shows_a_hostile_name_as_text():
    hostile = dict(HOP, name="<script>alert(1)</script>", problem="a & b")
    page = actions_view.html(report(tickets=[hostile], total=60), _table)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "a &amp; b" in page
    assert page.startswith('<h2 id="actions">Do this first: 60 tickets, ranked by what fixing '
                           "each unlocks</h2>\n<p>16 failing paths; 1 not placed on a hop or a "
                           "host.</p>\n<table>")
    assert "<p>... and 59 more (the JSON and CSV hold the first 1).</p>" in page
    assert "<li>DC26 50.0% of results by 2026-12-31 (35 days): now 43.5%; 6.5 points short; " \
           "NOT on track</li>" in page
    marked = dict(report(), targets_due=[dict(DUE[0], distance_text="<b>far</b>",
                                              trend_basis="<i>x</i>")])
    page = actions_view.html(marked, _table)
    assert "<b>" not in page and "<i>" not in page
    assert "&lt;b&gt;far&lt;/b&gt;" in page and "trend: &lt;i&gt;x&lt;/i&gt;" in page


def test_html_without_tickets_says_so():
    page = actions_view.html(report(tickets=()), _table)
    assert "<p>No failing path is placed on a hop or a host.</p>" in page
    assert "<table>" not in page


def test_csv_rows_carry_every_ticket_member_and_target_figure():
    rows = list(actions_view.rows(report()))
    hop = {(item, metric): value for section, item, metric, value in rows if section == "action"}
    assert hop[("1:198.18.5.2", "site")] == "SITE-E"
    assert hop[("1:198.18.5.2", "unlocks_traffic")] == 0.25
    assert hop[("1:198.18.5.2", "needed_by_paths")] == 14
    assert hop[("1:198.18.5.2", "runs_seen")] == 38
    assert hop[("2:ps-b.example", "kind")] == "host"
    assert hop[("2:ps-b.example", "unlocks_bytes")] is None
    # 12 members + 5 unlocks + needed_by + 3 evidence = 21 rows a ticket; 7 a target.
    assert len(rows) == 2 * 21 + 2 * 7
    target = [(item, metric, value) for section, item, metric, value in rows
              if section == "target"]
    assert target[:7] == [("DC26", "date", "2026-12-31"), ("DC26", "days_left", 35),
                          ("DC26", "current", 0.435), ("DC26", "met", False),
                          ("DC26", "distance_text", "6.5 points short"),
                          ("DC26", "projected", 0.47), ("DC26", "on_track", False)]
