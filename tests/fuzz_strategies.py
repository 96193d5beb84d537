"""Hypothesis strategies for the fuzzer (tests/fuzz/test_fuzz.py): JSON values, specs that are
nearly valid, and strings that smuggle what output must never carry."""

import os

from hypothesis import HealthCheck, settings, strategies as st

from jumbo.core import schema as schemas

# The whole run's budget (`make fuzz` sets 100000): shared by the properties by weight.
TOTAL = int(os.environ.get("JUMBO_FUZZ_EXAMPLES", "1500"))
WEIGHTS = {}


def budget(weight=1.0, name=None):
    """Hypothesis settings giving a property its share of TOTAL examples."""
    share = max(3, int(TOTAL * weight / 20.0))
    return settings(max_examples=share, deadline=None, database=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture,
                                           HealthCheck.filter_too_much])


SECRET = "Zq9SECRETpw"
# What a hostile host name, label or message tries to carry into an output.
SMUGGLED = ["=HYPERLINK(\"http://x\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\tTAB",
            "\rCR", "<script>alert(1)</script>", "\x1b[2J", "\x1b]8;;http://x\x07", "a\nb",
            "\x00", "\u2028", "\x9b31m"]

hostile = st.one_of(st.sampled_from(SMUGGLED),
                    st.builds(lambda a, b: a + b, st.sampled_from(SMUGGLED), st.text(max_size=8)),
                    st.text(max_size=20))

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 40, 2 ** 40),
                    st.floats(allow_nan=False, allow_infinity=False), hostile)
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(hostile, st.sampled_from(
        ["#c", "schema", "dest", "source", "result", "test", "spec", "type"])), inner,
        max_size=4)), max_leaves=12)

hosts = st.one_of(st.sampled_from(["192.0.2.1", "198.18.0.2", "2001:db8::1", "fd00:201::2",
                                   "ps-a.example.org", "host", "[2001:db8::1]:443",
                                   "192.0.2.1:861", "fe80::1%eth0", "256.1.1.1", "a..b"]),
                  hostile)
durations = st.one_of(st.sampled_from(["PT1S", "PT0S", "PT10S", "PT0.5S", "P1D", "PT3600S",
                                       "P1Y", "PT", "PT5S\n", "pt2s"]), hostile)
numbers = st.one_of(st.integers(-5, 70000), st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from([5201.0, 1.0, 10 ** 13, True]), hostile)


def _spec_values(key):
    if key in ("source", "source-node", "dest", "dest-node"):
        return hosts
    if key in ("timeout", "duration", "omit"):
        return durations
    if key in ("hops", "reverse"):
        return st.one_of(st.booleans(), numbers)
    if key == "direction":
        return st.one_of(st.sampled_from(["forward", "reverse", "both"]), hostile)
    if key == "order":
        return st.one_of(st.sampled_from(["abba", "ab"]), hostile)
    if key == "congestion":
        return st.one_of(st.sampled_from(["cubic", "bbr", "Cubic"]), hostile)
    if key == "schema":
        return st.one_of(st.sampled_from([1, 2, 1.0, "1"]), numbers)
    return numbers


def spec_dicts(properties):
    keys = sorted(properties) + ["throughput", "colour"]
    return st.dictionaries(st.sampled_from(keys), st.none(), max_size=8).flatmap(
        lambda chosen: st.fixed_dictionaries(dict((k, _spec_values(k)) for k in chosen)))


pmtu_specs = spec_dicts(schemas.SPEC_V1["properties"])
pair_specs = spec_dicts(schemas.PAIR_SPEC_V1["properties"])

options = st.sampled_from(["--dest", "--source", "--source-node", "--dest-node", "--ip-version",
                           "--flows", "--timeout", "--reverse", "--hops", "--target-mtu",
                           "--max-mtu", "--min-mtu", "--duration", "--omit", "--rounds",
                           "--parallel", "--direction", "--order", "--fq-rate", "--port",
                           "--congestion", "--help", "--throughput", "-x"])
argvs = st.lists(st.one_of(options, hostile, st.sampled_from(["4", "6", "9000", "PT2S", "5G",
                                                              "1.5", "-1"])), max_size=8)
