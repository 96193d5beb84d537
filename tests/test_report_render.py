"""The JSON rendering streamed (render.json_pieces): the same text as to_json, the per-path
list written a chunk at a time (never held whole), and a stream that fails mid-way leaves no
file behind (safe_output.write_atomic over pieces)."""

import collections
import json
import os

import pytest

import store_fixtures
from jumbo.report import render
from jumbo.report.cli import main as cli_main
from jumbo.report.path_record import FIELDS, PathRecord
from jumbo.report.safe_output import write_atomic


def _path(i):
    return PathRecord("h%05d" % i, "d%05d" % i, 4 if i % 2 else 6, "S%d" % (i % 7), "T", "2026-11-02T10:00:00Z",
                      9000 if i % 3 else 1500, 9000, True, 9000, "ok", False, False, False, bool(i % 3),
                      "jumbo" if i % 3 else "standard", (), True, None)


def _report(n):
    return collections.OrderedDict([("schema", 1), ("paths", [_path(i) for i in range(n)]),
                                    ("paths_measured", n)])


def test_the_pieces_are_the_json_text_and_the_path_list_comes_in_chunks():
    n = 3 * render.PATH_CHUNK + 5
    report = _report(n)
    pieces = list(render.json_pieces(report))
    text = "".join(pieces)
    assert text == render.to_json(report)
    parsed = json.loads(text)
    assert parsed["path_fields"] == list(FIELDS) and len(parsed["paths"]) == n
    assert parsed["paths"][4] == list(report["paths"][4].values())
    # the header, one piece per chunk of paths, the closing brackets
    assert len(pieces) == 1 + 4 + 1
    rows = [json.loads("[%s]" % piece.lstrip(",\n ")) for piece in pieces[1:-1]]
    assert [len(r) for r in rows] == [render.PATH_CHUNK] * 3 + [5]


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 1000])
def test_the_header_is_the_same_text_whatever_its_batches(monkeypatch, batch):
    """The indented part before the paths comes in batches of HEADER_BATCH encoder pieces and
    its closing "\n}" is cut: any batch size, down to one piece (a last batch of "}" alone),
    gives the same text as one json.dumps of the report."""
    report = _report(3)
    report["blackholes"] = [{"source": "h%d" % i, "hops": list(range(i))} for i in range(40)]
    whole = render.to_json(report)
    monkeypatch.setattr(render, "HEADER_BATCH", batch)
    pieces = list(render.json_pieces(report))
    assert "".join(pieces) == whole
    header = json.dumps(collections.OrderedDict((k, v) for k, v in report.items() if k != "paths"),
                        indent=2)
    assert whole.startswith(header[:-2] + ',\n  "path_fields": ')
    parsed = json.loads(whole)
    assert parsed["blackholes"] == report["blackholes"] and len(parsed["paths"]) == 3
    if batch == 1:
        assert len(pieces) > 100        # batched, not held whole


def test_an_empty_path_list_renders_as_it_always_did():
    assert render.to_json(_report(0)).endswith('"path_fields": %s,\n  "paths": [\n    \n  ]\n}\n'
                                              % json.dumps(list(FIELDS)))


def test_a_stream_that_fails_midway_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old\n")

    def pieces():
        yield "{\n"
        raise ValueError("Out of range float values are not JSON compliant")
    with pytest.raises(ValueError):
        write_atomic(str(out), pieces())
    assert out.read_text() == "old\n" and os.listdir(str(tmp_path)) == ["r.json"]
    write_atomic(str(out), iter(["a", "b\n"]))
    assert out.read_text() == "ab\n"


def test_the_command_writes_what_to_json_renders(tmp_path, capsys):
    url = "sqlite:///" + str(tmp_path / "s.db")
    store_fixtures.load(url, [
        {"id": "%s-%s" % (a, b), "test_type": "pmtu", "source": a, "dest": b, "ip_version": 4,
         "start": "2026-11-02T10:00:00Z", "succeeded": True, "path_mtu": 9000, "local_mtu": 9000,
         "target_mtu": 9000, "pmtud": "not-needed", "partial": False, "flows": 4,
         "source_site": a.upper(), "dest_site": b.upper()}
        for a in ("a", "b", "c") for b in ("a", "b", "c") if a != b])
    out = tmp_path / "r.json"
    assert cli_main(["--store", url, "--format", "json", "--out", str(out), "--no-resolve"]) == 0
    assert cli_main(["--store", url, "--format", "json", "--no-resolve"]) == 0
    printed = capsys.readouterr().out
    written = out.read_text()
    assert json.loads(written)["paths_measured"] == 6

    def without_time(text):
        return [line for line in text.splitlines() if '"generated"' not in line]
    assert without_time(written) == without_time(printed)


def test_a_long_section_before_the_paths_is_passed_on_in_batches_and_indented_as_before():
    report = _report(3)
    report["blackholes"] = [collections.OrderedDict([("source", "h%d" % i), ("hop_ip", None),
                                                     ("size", 9000), ("partial", i % 2 == 0)])
                            for i in range(3000)]
    pieces = list(render.json_pieces(report))
    whole = json.dumps(render.dict_without(report, "paths"), indent=2)
    assert len(pieces) > 3 and "".join(pieces).startswith(whole[:-2] + ',\n  "path_fields": ')
    assert json.loads("".join(pieces))["blackholes"] == report["blackholes"]
