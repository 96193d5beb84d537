"""The lab itself: what it builds matches the truth it claims (checked with the kernel's ping)."""

import pytest

from lab_support import needs_lab


def _ping_df(lab, source, dest, ip_size, version=4):
    header = 20 if version == 4 else 40
    argv = ["ping", "-%d" % version, "-n", "-c", "1", "-W", "1", "-M", "do",
            "-s", str(ip_size - header - 8), lab.address(dest, version)]
    return lab.run(source, argv, check=False).returncode == 0


@needs_lab
@pytest.mark.parametrize("scenario", ["clean-jumbo", "all-standard", "vxlan-blackhole"])
@pytest.mark.parametrize("version", [4, 6])
def test_true_path_mtu_crosses_and_one_more_byte_does_not(lab_factory, scenario, version):
    lab = lab_factory(scenario)
    truth = lab.truth("src", "dst")
    assert _ping_df(lab, "src", "dst", truth["path-mtu"], version)
    if truth["path-mtu"] < truth["local-mtu"]:
        assert not _ping_df(lab, "src", "dst", truth["path-mtu"] + 1, version)


def test_truth_of_the_cern_case():
    from lab import scenarios
    truth = scenarios.get("vxlan-blackhole").truth("src", "dst")
    assert truth["path-mtu"] == 8950
    assert truth["pmtud"] == "blackhole"
    assert truth["members"][0]["blackhole-ttl"] == 1


def test_truth_of_a_partial_blackhole():
    from lab import scenarios
    truth = scenarios.ecmp_partial_blackhole().truth("src", "dst")
    assert truth["partial"] is True
    assert sorted(m["path-mtu"] for m in truth["members"]) == [8950, 9000]


@needs_lab
def test_lab_removes_its_namespaces(lab_factory):
    import subprocess
    lab = lab_factory("clean-jumbo")
    names = list(lab.created)
    lab.destroy()
    listed = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                            universal_newlines=True).stdout
    assert not any(name in listed for name in names)
