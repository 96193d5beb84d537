"""A firefly datagram read as hostile input (jumbo.archive.firefly): flowd-go's own sample
messages parse; every malformed, oversized, too deep or mistyped one is a FireflyError
naming why, and nothing else escapes."""

import json

import pytest

from jumbo.archive import firefly

# scitags/flowd-go types/testdata/sample.firefly (a syslog-wrapped start), written out here.
FLOWD_SAMPLE = (
    b'<134>1 2024-03-28T08:58:48.899646+00:00 etf-cs9.cern.ch flowd - firefly-json - '
    b'{"version": 1, "flow-lifecycle": {"state": "start", "current-time": '
    b'"2024-03-28T08:58:48.899660+00:00", "start-time": "2024-03-28T08:58:44.899660+00:00"}, '
    b'"flow-id": {"afi": "ipv6", "src-ip": "2600:900:6:1101:a288:c2ff:fed2:34de", "dst-ip": '
    b'"2620:6a:0:8421:f0:0:189:154", "protocol": "tcp", "src-port": 1234, "dst-port": 5678}, '
    b'"context": {"experiment-id": 1, "activity-id": 1, "application": "flowd v1.0.2"}}')


def message(**changes):
    ff = {"version": 1,
          "flow-lifecycle": {"state": "ongoing", "current-time": "2026-11-26T04:00:01.5+00:00",
                             "start-time": "2026-11-26T04:00:00+00:00"},
          "flow-id": {"afi": "ipv4", "src-ip": "198.18.0.1", "dst-ip": "198.18.1.2",
                      "protocol": "tcp", "src-port": 40000, "dst-port": 1094},
          "context": {"experiment-id": 2, "activity-id": 3, "application": "xrootd"},
          "netlink": {"cong": {"algorithm": "cubic"},
                      "tcpInfo": {"sndMss": 8948, "pMtu": 9000, "bytesSent": 123456}}}
    for path, value in changes.items():
        obj = ff
        keys = path.split("__")
        for key in keys[:-1]:
            obj = obj[key.replace("_", "-")]
        if value is None:
            del obj[keys[-1].replace("_", "-")]
        else:
            obj[keys[-1].replace("_", "-")] = value
    return json.dumps(ff).encode()


def test_flowd_sample_parses():
    ff = firefly.parse(FLOWD_SAMPLE)
    assert (ff.state, ff.ip_version, ff.src_port, ff.dst_port) == ("start", 6, 1234, 5678)
    assert ff.src == "2600:900:6:1101:a288:c2ff:fed2:34de"
    assert ff.bytes_sent is None and ff.snd_mss is None


def test_an_ongoing_message_bare_and_wrapped():
    for data in (message(), b"<134>1  host flowd-go - firefly-json - " + message(),
                 b"<134>1 - host app 77 firefly-json [x@1 a=\"b\"] \xef\xbb\xbf" + message()):
        ff = firefly.parse(data)
        assert (ff.snd_mss, ff.pmtu, ff.bytes_sent) == (8948, 9000, 123456)


def test_skops_when_there_is_no_netlink_and_usage():
    data = json.loads(message(netlink=None))
    data["skOps"] = {"tcpInfo": {"sndMss": 1448, "bytesSent": 7}}
    data["usage"] = {"sent": 99, "received": 1}
    ff = firefly.parse(json.dumps(data).encode())
    assert (ff.snd_mss, ff.bytes_sent, ff.usage_sent) == (1448, 7, 99)


@pytest.mark.parametrize("data, why", [
    (b"x" * (firefly.MAX_DATAGRAM + 1), "datagram of"),
    (b"<999>1 - h a - m - {}", "syslog"),
    (b"<134>garbage", "syslog"),
    (b"hello", "no JSON object"),
    (b"\xff\xfe{", "UTF-8"),
    (b'{"a":' * 20 + b"1" + b"}" * 20, "nested deeper"),
    (b'{"version": 1,', "invalid JSON"),
    (message(version=2), "version 2"),
    (message(version=True), "not an integer"),
    (message(version="1"), "not an integer"),
    (message(flow_lifecycle__state="closing"), "state"),
    (message(flow_id__afi="ipx"), "afi"),
    (message(flow_id__src_ip="198.18.0.256"), "not an IP address"),
    (message(flow_id__dst_ip="fd00::1"), "not of afi ipv4"),
    (message(flow_id__dst_ip="0.0.0.0"), "no host's address"),
    (message(flow_id__dst_ip="224.0.0.1"), "no host's address"),
    (message(flow_id__src_port=70000), "out of range"),
    (message(flow_id__src_port=-1), "out of range"),
    (message(flow_id__protocol="sctp"), "protocol"),
    (message(flow_id=None), "flow-id missing"),
    (message(flow_id=[1]), "not an object"),
    (message(netlink={"tcpInfo": {"sndMss": 1.5}}), "not an integer"),
    (message(netlink={"tcpInfo": {"bytesSent": 10 ** 19}}), "out of range"),
    (message(netlink={"tcpInfo": {"sndMss": 70000}}), "out of range"),
    (message(netlink={"tcpInfo": "x"}), "not an object"),
    (message(usage={"sent": -5}), "out of range"),
    (b'{"version": NaN}', "not a JSON number"),
])
def test_hostile_datagrams_are_refused_with_the_reason(data, why):
    with pytest.raises(firefly.FireflyError) as err:
        firefly.parse(data)
    assert why in str(err.value)


def test_depth_is_checked_before_the_parser_recurses():
    deep = b'{"version": 1, "x": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    with pytest.raises(firefly.FireflyError):
        firefly.parse(deep[:firefly.MAX_DATAGRAM])
    assert not firefly.depth_ok("[" * 9)
    assert firefly.depth_ok('{"a": "[[[[[[[[[[[[[[[[["}')  # brackets inside strings do not count
