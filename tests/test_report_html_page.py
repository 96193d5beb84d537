"""The report's HTML page (jumbo.report.html) on the synthetic mesh of test_report.py
(fixtures.synth.Mesh.small): self-contained, its plots, and rendered by a real headless Chromium."""

import os
import subprocess

import pytest

from fixtures import synth
from jumbo.report import build_report as build
from jumbo.report.cli import main as cli_main
from jumbo.report.html import to_html
import store_fixtures

MESH = synth.Mesh.small()
sqlite_url = store_fixtures.both_stores(MESH.records, "rhtml")[0]


# -- the HTML page -------------------------------------------------------------------------------

class _Svg(object):
    def __init__(self, text):
        from html.parser import HTMLParser
        found = self.found = []

        class P(HTMLParser):
            def handle_starttag(self, tag, attrs):
                found.append((tag, dict(attrs)))
        P().feed(text)

    def tags(self, tag, **attrs):
        return [a for t, a in self.found if t == tag and all(
            v in (a.get(k) or "").split() if k == "class" else a.get(k) == v for k, v in attrs.items())]


def test_html_is_self_contained_with_plots(sqlite_url):
    r = build(sqlite_url)
    page = to_html(r)
    doc = _Svg(page)
    assert not doc.tags("script") and not doc.tags("link")
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page
    for plot in ("trend-plot", "matrix-plot", "gains-plot"):
        assert len(doc.tags("svg", id=plot)) == 1
    assert len(doc.tags("rect", **{"class": "cell"})) == 36
    assert len(doc.tags("circle", **{"class": "bh-marker"})) == sum(
        1 for c in r["matrix"]["cells"] if c["blackholes"])
    fills = set(a["fill"] for a in doc.tags("rect", **{"class": "cell"}))
    from jumbo.report.html import GREEN, RED
    assert {GREEN, RED} <= fills
    targets = doc.tags("line", **{"class": "target-line"})
    assert sorted(t["data-target"] for t in targets) == ["DC26", "DC28"]
    assert [p["data-series"] for p in doc.tags("polyline", **{"class": "trend-line"})] == [
        "capable", "configured"]
    assert doc.tags("rect", **{"class": "bar-measured"}) and doc.tags("rect", **{"class": "bar-expected"})


def _png_pixels(path):
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes) with zlib only."""
    import struct
    import zlib
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _c, _f, interlace = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    assert depth == 8 and ctype in (2, 6) and interlace == 0
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def _chromium():
    for name in ("chromium", "chromium-browser"):
        for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin"]:
            if os.access(os.path.join(d, name), os.X_OK):
                return os.path.join(d, name)
    return None


@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed (scripts/setup.sh installs it)")
def test_html_renders_in_headless_chromium(sqlite_url, tmp_path):
    page = tmp_path / "report.html"
    assert cli_main(["--store", sqlite_url, "--format", "html", "--out", str(page)]) == 0
    shot = tmp_path / "shot.png"
    profile = tmp_path / "profile"
    profile.mkdir()
    proc = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--user-data-dir=%s" % profile, "--screenshot=%s" % shot, "--window-size=1400,2000",
         "file://%s" % page],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=90)
    assert shot.exists(), proc.stderr[-2000:]
    width, height, bpp, rows = _png_pixels(str(shot))
    assert (width, height) == (1400, 2000)
    colours = {}
    for row in rows[::4]:
        for x in range(0, width * bpp, bpp * 4):
            px = tuple(row[x:x + 3])
            colours[px] = colours.get(px, 0) + 1
    total = float(sum(colours.values()))
    white = colours.get((255, 255, 255), 0) / total
    assert white < 0.97, "screenshot is (nearly) blank"
    assert len(colours) > 20

    def near(rgb, tol=12):
        return sum(n for px, n in colours.items() if all(abs(p - q) <= tol for p, q in zip(px, rgb)))
    # The matrix is drawn: red (<= 1500) and green (target) cells are on the screen.
    assert near((0xd7, 0x30, 0x27)) > 50
    assert near((0x1a, 0x98, 0x50)) > 50
