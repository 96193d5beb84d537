"""A `direction: both` pair run on the namespace lab, through the real `jumbo` archiver process
into SQLite, read back by the report as two directed gains (jumbo.archive.directed)."""

import harness
from lab_support import needs_lab
from fixtures import samples
from jumbo.core import validate

TEST = "jumbo-throughput"
USER = "jumbotest"
SOURCE = "ps-src.lab"


@needs_lab
def test_a_both_ways_run_reaches_the_report_as_two_directed_gains(lab_factory, tmp_path):
    from jumbo.report import build_report
    lab = lab_factory("clean-jumbo")
    argv = ["--dest", lab.address("dst", 4), "--duration", "2", "--omit", "0",
            "--direction", "both", "--order", "ab"]
    spec = harness.invoke("test", TEST, "cli-to-spec", argv=argv).json()
    places = [{"lab": lab, "node": node, "user": USER} for node in ("src", "dst")]
    merged = harness.run_tool_participants("jumbocheck", {"type": TEST, "spec": spec}, places,
                                           start_in=1.0).merged
    assert validate.check_pair_result(merged)[0], merged
    split = merged["by-direction"]
    # Truth: 9000 both ways and offload off in the lab, so jumbo wins in each direction.
    assert lab.truth("src", "dst")["path-mtu"] == lab.truth("dst", "src")["path-mtu"] == 9000
    assert split["forward"]["gain"] > 1 and split["reverse"]["gain"] > 1, split
    dest = spec["dest"]
    envelopes = [samples.pmtu_envelope(source=SOURCE, dest=dest, minutes=0),
                 samples.envelope(TEST, merged, spec, lead=SOURCE)]
    url = "sqlite:///%s" % (tmp_path / "both.db")
    for _ in range(2):  # the replay stores nothing twice
        outcomes = harness.archive_stream("jumbo", [dict(e, data={"_url": url})
                                                    for e in envelopes])
        assert [o.succeeded for o in outcomes] == [True, True], [o.error for o in outcomes]
    report = build_report(url)
    gains = {(i["source"], i["dest"]): i["gain"] for i in report["gains"]["items"]}
    assert gains == {(SOURCE, dest): split["forward"]["gain"],
                     (dest, SOURCE): split["reverse"]["gain"]}
    assert report["gains"]["paths"] == 2
