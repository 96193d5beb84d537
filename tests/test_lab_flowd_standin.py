"""The flowd-go stand-in (lab/flowd_standin.py) has flowd-go's shape: the members it emits are
the ones flowd-go's types define (read from flowd-go's own Go source: FLOWD_GO_SRC, a checkout
or a bare mirror of scitags/flowd-go), and the collector reads what it emits, syslog-wrapped
(with the empty timestamp flowd-go writes for start and end) or bare.
"""

import json
import os
import re
import socket
import subprocess

import pytest

from lab import flowd_standin as fs
from jumbo.archive import firefly

FLOWD_GO_SRC = os.environ.get("FLOWD_GO_SRC", "/work/.mirror/scitags+flowd-go/repo")


def _go_source(path):
    """A file of flowd-go's source: from a work tree, else from a bare mirror's HEAD."""
    if os.path.isfile(os.path.join(FLOWD_GO_SRC, path)):
        with open(os.path.join(FLOWD_GO_SRC, path)) as handle:
            return handle.read()
    done = subprocess.run(["git", "--git-dir", FLOWD_GO_SRC, "show", "HEAD:" + path],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if done.returncode != 0:
        pytest.skip("flowd-go's source is not at %s (set FLOWD_GO_SRC): %s" % (FLOWD_GO_SRC, path))
    return done.stdout


def _struct(source, name):
    match = re.search(r"type %s struct \{(.*?)\n\}" % name, source, re.S)
    assert match, name
    return match.group(1)


def test_members_are_flowd_gos():
    firefly_go = _go_source("types/firefly.go")
    body = _struct(firefly_go, "Firefly")
    # Firefly's JSON names, its nested objects' members in the order Go writes them.
    names, depth = [], 0
    for line in body.splitlines():
        before = depth
        depth += line.count("{") - line.count("}")
        tag = re.search(r'json:"([^",]+)', line)
        if tag and depth == 0 and (before == 0 or "}" in line):
            names.append(tag.group(1))
    assert names == ["version", "flow-lifecycle", "flow-id", "context", "netlink", "skOps"]
    for obj in ("flow-lifecycle", "flow-id", "context"):
        block = re.search(r"(\w+) struct \{([^}]*)\}\s*`json:\"%s\"" % obj, body).group(2)
        assert tuple(re.findall(r'json:"([^",]+)', block)) == fs.FIREFLY[obj]
    enrichment = _go_source("types/enrichment.go")
    lean = {}
    for field, tags in re.findall(r"^\s*(\w+)\s+[\w*]+\s+`([^`]*)`", _struct(enrichment, "TCPInfo"), re.M):
        tag = re.search(r'lean:"([^"]*)"', tags)
        if tag is None:
            lean[field] = field.lower()             # no lean tag: fatih/structs uses the Go name
        elif tag.group(1) != "-":
            lean[tag.group(1).split(",")[0]] = field.lower()
    assert lean == fs.LEAN_TCP_INFO
    flow_info = [t for t in re.findall(r'lean:"([^",]+)', _struct(enrichment, "FlowInfo")) if t != "-"]
    assert sorted(flow_info) == sorted(fs.FIREFLY["netlink"])
    assert tuple(re.findall(r'lean:"([^",]+)', _struct(enrichment, "Cong"))) == fs.LEAN_CONG
    assert '"firefly-json"' in firefly_go and "SYSLOG_FACILITY_LOCAL0        int    = 16" in firefly_go


def _loopback_flow():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname())
    conn, _ = server.accept()
    client.sendall(b"x" * 100000)       # fits the loopback buffers: nobody needs to read it
    return server, client, conn


def test_emitted_fireflies_have_exactly_those_members_and_the_collector_reads_them():
    server, client, conn = _loopback_flow()
    try:
        local, peer = client.getsockname(), client.getpeername()
        messages = [fs.firefly("start", local, peer, 1.7e9),
                    fs.firefly("ongoing", local, peer, 1.7e9, netlink=fs.lean_flow_info(client)),
                    fs.firefly("end", local, peer, 1.7e9, end=1.7e9 + 2)]
        for ff in messages:
            assert set(ff) <= set(fs.FIREFLY)
            for key, members in fs.FIREFLY.items():
                if isinstance(members, tuple) and key in ff:
                    assert set(ff[key]) <= set(members)
        ongoing = messages[1]["netlink"]
        assert set(ongoing["tcpInfo"]) == set(fs.LEAN_TCP_INFO)
        assert ongoing["tcpInfo"]["bytesSent"] >= 100000
        for syslog in (True, False):
            for ff in messages:
                data = fs.payload(ff, syslog)
                if syslog and ff["flow-lifecycle"]["state"] != "ongoing":
                    assert data.startswith(b"<134>1  ")      # flowd-go's empty timestamp
                parsed = firefly.parse(data)
                assert parsed.src == "127.0.0.1" and parsed.src_port == local[1]
        assert firefly.parse(fs.payload(messages[1])).bytes_sent == ongoing["tcpInfo"]["bytesSent"]
        assert json.loads(fs.payload(messages[1], False))["netlink"]["tcpInfo"]["sndMss"] > 0
    finally:
        for s in (client, conn, server):
            s.close()
