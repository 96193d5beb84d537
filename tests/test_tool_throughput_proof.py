"""jumbo.tool.throughput.proof: what one leg's iperf3 JSON proves. The documents are built in
iperf3's -J shape (intervals[].streams[] with socket/bytes/snd_cwnd/pmtu, end.sum_received,
end.sum_sent, end.cpu_utilization_percent, end.streams[].sender with mean_rtt/max_rtt in
microseconds); the congestion windows are the ones recorded from real iperf3 3.12 runs
(cwnd x tcpi_snd_mss)."""

import pytest

from jumbo.core.mtu import MSS_TOLERANCE
from jumbo.tool.throughput import proof

LEG = {"order": 1, "round": 0, "size": "jumbo", "direction": "forward", "mtu": 9000,
       "mss": 8960}


def test_observed_mss_from_window_samples():
    # Congestion windows printed by iperf3 3.12 on this machine (cwnd x tcpi_snd_mss).
    assert proof.observed_mss([457568, 553136], 1460) == (1448, None)
    assert proof.observed_mss([17896, 8948, 8948], 8960) == (8948, None)
    assert proof.observed_mss([411608, 1020072], 8960) == (8948, None)
    # A 1448-byte MSS on a leg that asked for 8960 is caught, whatever the divisor.
    seen, _ = proof.observed_mss([14480, 28960, 43440], 8960)
    assert not 8960 - MSS_TOLERANCE <= seen <= 8960
    assert proof.observed_mss([], 1460) == (None, "no congestion-window samples")
    assert proof.observed_mss([0, None], 1460) == (None, "no congestion-window samples")


def test_a_window_that_shares_a_factor_is_said_to_be_inferred():
    # 2 x 8948 = 17896 in every sample: the largest divisor under 8960 is 8948.
    assert proof.observed_mss([17896 * 3, 17896 * 5], 8960) == (8948, None)
    # No size in 1420..1460 divides both; their gcd 2800 does not fit, 2800 / 2 does.
    assert proof.observed_mss([2800 * 3, 2800 * 5], 1460) == (
        1400, "inferred from 2 window sample(s) sharing a factor")


def _doc(cwnds, stream_bytes, pmtu=9000, received=9.4e9, total_bytes=11750000000,
         retransmits=3, sockets=(5,), omitted=0):
    intervals = []
    for i, (cwnd, moved) in enumerate(zip(cwnds, stream_bytes)):
        streams = [{"socket": s, "bytes": moved, "snd_cwnd": cwnd, "pmtu": pmtu}
                   for s in sockets]
        intervals.append({"streams": streams, "sum": {"bytes": moved * len(sockets),
                                                      "omitted": i < omitted}})
    return {"intervals": intervals, "end": {
        "sum_received": {"bits_per_second": received, "bytes": total_bytes},
        "sum_sent": {"retransmits": retransmits},
        "cpu_utilization_percent": {"host_total": 41.5, "remote_total": 12.25},
        "streams": [{"sender": {"mean_rtt": 250, "max_rtt": 900, "max_snd_cwnd": max(cwnds)}}
                    for _ in sockets]}}


def test_a_clean_jumbo_leg():
    doc = _doc([411608, 1020072, 1020072, 1020072], [10 ** 9] * 4)
    run = proof.run_from_json(LEG, doc, None, False)
    assert run["succeeded"] and run["error"] is None and not run["stalled"]
    assert (run["throughput"], run["bytes"], run["retransmits"]) == (9.4e9, 11750000000, 3)
    assert (run["cpu-sender"], run["cpu-receiver"]) == (41.5, 12.25)
    assert (run["rtt"], run["max-rtt"]) == (250e-6, 900e-6)
    assert (run["observed-mss"], run["pmtu"], run["stalled-streams"]) == (8948, 9000, 0)
    assert (run["order"], run["mtu"], run["mss"]) == (1, 9000, 8960)


def test_in_reverse_the_sender_is_the_server_and_the_cpus_swap():
    sender = _doc([1020072, 1020072], [10 ** 9] * 2)
    doc = _doc([0, 0], [10 ** 9] * 2)
    doc["server_output_json"] = sender
    run = proof.run_from_json(dict(LEG, direction="reverse"), doc, None, False)
    assert run["succeeded"] and run["observed-mss"] == 8948
    assert (run["cpu-sender"], run["cpu-receiver"]) == (12.25, 41.5)


def test_a_leg_that_ran_at_a_smaller_size_fails():
    doc = _doc([1448 * 3, 1448 * 5], [10 ** 9] * 2)
    run = proof.run_from_json(LEG, doc, None, False)
    assert not run["succeeded"] and run["observed-mss"] == 1448
    # The socket's path MTU was the leg's: the size was refused by the receiver's MSS.
    assert run["error"] == ("observed MSS 1448 does not match the leg's MSS 8960 (allowed "
                            "8920..8960) while the socket's path MTU was 9000: the receiver "
                            "advertised a smaller MSS (its route back to the sender has a "
                            "smaller path MTU) or a middlebox clamped it")
    assert proof.mss_capped(run)
    # Without the kernel's path MTU (iperf3 before 3.9) either cause stays open.
    run = proof.run_from_json(LEG, _doc([1448 * 3, 1448 * 5], [10 ** 9] * 2, pmtu=None),
                              None, False)
    assert run["error"] == ("observed MSS 1448 does not match the leg's MSS 8960 (allowed "
                            "8920..8960): the flow ran at a smaller size (a smaller MSS "
                            "advertised by the peer, or a path MTU it learnt)")
    assert not proof.mss_capped(run)
    run = proof.run_from_json(LEG, _doc([1020072], [10 ** 9], pmtu=1500), None, False)
    assert run["error"] == "the kernel's path MTU for this flow was 1500, below the leg's MTU 9000"


def test_a_capped_legs_mss_is_the_standard_legs_when_it_divides_the_windows():
    # Seen on the real mesh (bnl->cern, cern's way back 1500): every window an even count of
    # 1448-byte segments, so the windows alone give 2896.
    run = proof.run_from_json(LEG, _doc([1448 * 40, 1448 * 64, 1448 * 54], [10 ** 9] * 3),
                              None, False)
    assert run["observed-mss"] == 2896 and proof.mss_capped(run)
    proof.settle_capped_mss(run, [1448, 1448])
    assert run["observed-mss"] == 1448
    assert run["mss-note"] == ("window samples are multiples of 2896; 1448, the standard "
                               "legs' MSS, divides them")
    assert run["error"].startswith("observed MSS 1448 does not match the leg's MSS 8960")
    # A size that does not divide them is not taken; nor is one without standard legs.
    run = proof.run_from_json(LEG, _doc([2800 * 3, 2800 * 5], [10 ** 9] * 2), None, False)
    proof.settle_capped_mss(run, [1448, None])
    assert run["observed-mss"] == 2800 and "mss-note" not in run
    # A stalled leg or one whose socket learnt a smaller path MTU is not capped by the MSS.
    assert not proof.mss_capped(proof.run_from_json(
        LEG, _doc([1448 * 3] * 4, [10 ** 9, 10 ** 9, 0, 0]), None, False))
    assert not proof.mss_capped(proof.run_from_json(
        LEG, _doc([1448 * 3] * 2, [10 ** 9] * 2, pmtu=1500), None, False))


def test_a_leg_whose_bytes_stop_stalled():
    doc = _doc([1020072] * 4, [10 ** 9, 10 ** 9, 0, 0])
    run = proof.run_from_json(LEG, doc, None, False)
    assert run["stalled"] and not run["succeeded"]
    assert run["error"] == "stalled: no bytes flowed at MSS 8960 after the first interval(s)"
    # Omitted intervals do not count: what moved before -O ended proves nothing. Of the two
    # measured intervals the last carried nothing: stalled (counting the four omitted ones,
    # the last half would have carried 2 GB).
    doc = _doc([1020072] * 6, [10 ** 9] * 5 + [0], omitted=4)
    assert proof.run_from_json(LEG, doc, None, False)["stalled"]
    assert not proof.run_from_json(LEG, _doc([1020072] * 6, [10 ** 9] * 5 + [0]), None,
                                   False)["stalled"]


def test_one_stream_of_several_stopping_is_a_stall():
    doc = _doc([1020072] * 4, [10 ** 9] * 4, sockets=(5, 7))
    for interval in doc["intervals"][2:]:
        interval["streams"][1]["bytes"] = 0
    run = proof.run_from_json(LEG, doc, None, False)
    assert run["stalled"] and run["stalled-streams"] == 1
    assert run["error"].startswith("stalled: 1 of 2 streams stopped at MSS 8960")


def test_no_document_or_a_timeout():
    run = proof.run_from_json(LEG, None, "iperf3 printed nothing", True)
    assert run["stalled"] and not run["succeeded"] and run["error"] == "iperf3 printed nothing"
    assert run["throughput"] is None and run["observed-mss"] is None
    run = proof.run_from_json(LEG, _doc([1020072] * 2, [10 ** 9] * 2), None, True)
    assert run["stalled"] and not run["succeeded"]
    failed = proof.failed_run(LEG, "no time left before the deadline")
    assert failed == dict(proof.blank_run(LEG), error="no time left before the deadline")
    assert not failed["succeeded"] and failed["stalled"] is False


@pytest.mark.parametrize("end", [{}, {"sum_received": {}}, {"sum_received": None}])
def test_a_document_without_totals_is_no_success(end):
    doc = _doc([1020072], [10 ** 9])
    doc["end"] = end
    run = proof.run_from_json(LEG, doc, None, False)
    assert run["throughput"] is None and not run["succeeded"]
