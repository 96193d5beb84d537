"""bench/report_floor.py, the floor bench report-scale prints beside the report: every path's
latest row read from the store and written as the per-path list. On a 10-host dual-stack
mesh (180 path-families, 400 results) it writes one row per path-family, each the latest of
its path as the report lists it, and the launcher times it like the report."""

import json
import os

from bench import report_floor, report_scale


def test_the_floor_lists_every_path_family_once_with_its_latest_row(tmp_path):
    url = report_scale.sqlite_store(str(tmp_path), 10, 400)
    out = str(tmp_path / "floor.json")
    assert report_floor.main(["--store", url, "--out", out]) == 0
    with open(out) as f:
        rows = json.load(f)["paths"]
    assert len(rows) == 2 * 10 * 9
    keys = set((r[0], r[1], r[2]) for r in rows)
    assert len(keys) == len(rows) and set(r[2] for r in rows) == {4, 6}
    report = str(tmp_path / "report.json")
    seconds, mb, status, err = report_scale.run_report(report_scale.LIBRARY, url, report)
    assert status == 0, err
    with open(report) as f:
        listed = json.load(f)
    fields = listed["path_fields"]
    want = dict(((p[0], p[1], p[2]), p[fields.index("last_measured")]) for p in listed["paths"])
    assert dict(((r[0], r[1], r[2]), r[7]) for r in rows) == want      # the same latest runs
    seconds, mb = report_scale.run_floor(url, out)
    assert seconds > 0 and mb > 1 and os.path.getsize(out) > 0
