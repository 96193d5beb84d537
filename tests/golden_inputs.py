"""The inputs of the plugins' golden answers (tests/golden_plugins.py): every case, in a
fixed order, made from the tests' own fixtures. Only a new capture reads them; the replay
(tests/golden/test_plugin_golden.py) takes them from the golden file."""

import json

import golden_plugins  # noqa: F401 - sets sys.path for the imports below
from fixtures import samples
from test_plugin_pair import GOOD as PAIR_GOOD, RESULT as PAIR_RESULT
from test_plugin_pmtu import BAD_SPECS, BLACKHOLE, CLEAN, GOOD_SPECS, ROUND_TRIP

def _text(stdin):
    if stdin is None:
        return ""
    return stdin if isinstance(stdin, str) else json.dumps(stdin, sort_keys=True)


def _case(cases, plugin, method, stdin=None, argv=(), volatile=()):
    cls, name = plugin
    cases.append({"class": cls, "name": name, "method": method, "stdin": _text(stdin),
                  "argv": [str(a) for a in argv], "volatile": list(volatile)})


PMTU = ("test", "pmtu")
PAIR = ("test", "jumbo-throughput")
TOOL = ("tool", "jumbocheck")
ARCHIVER = ("archiver", "jumbo")
MIMES = ([], ["text/plain"], ["text/html"])
NOT_JSON = ["", "{", "[]", "42", "null", '"x"']


def _pmtu_results():
    """Sample pmtu results: clean, black hole, partial and undecided, failed, legacy
    throughput, reverse, and a few the method must refuse."""
    hole = {"ttl": 2, "ip": "198.18.2.1", "size": 9000}
    partial = samples.pmtu_result(flows=4)
    partial["flows"][1].update({"path-mtu": 1500, "pmtud": "blackhole"})
    partial["pmtud"] = "blackhole"
    undecided = samples.pmtu_result(pmtud="unknown", flows=3)
    undecided["flows"][2].update({"path-mtu": None, "pmtud": "unknown"})
    undecided["flows-not-measured"] = 2
    legacy = dict(CLEAN, throughput={
        "runs": [{"order": 0, "direction": "forward", "mtu": 1500, "mss": 1460,
                  "observed-mss": 1448, "throughput": 4.5e9, "retransmits": 0,
                  "succeeded": True, "error": None}],
        "standard": {"mean": 4.5e9, "stdev": 1e8, "runs": 1}, "jumbo": None,
        "gain": 1.25, "gain-noise": None, "verdict": "jumbo-faster"})
    good = [CLEAN, BLACKHOLE, partial, undecided, legacy,
            samples.pmtu_result(path_mtu=1500, pmtud="ok"),
            samples.pmtu_result(path_mtu=8950, pmtud="blackhole", blackhole=hole),
            samples.pmtu_result(path_mtu=None, pmtud="blackhole", blackhole=hole),
            samples.pmtu_result(path_mtu=1500, pmtud="unknown", ip_version=6,
                                dest_ip="fd00::2"),
            samples.pmtu_result(succeeded=False),
            dict(samples.pmtu_result(), **{"reverse-path-mtu": 1500, "reverse-pmtud": "ok"}),
            {"schema": 1, "succeeded": True, "path-mtu": 1500},
            {"succeeded": True}]
    bad = [dict(CLEAN, schema=2), dict(CLEAN, bogus=1), [1]]
    return good, bad


def _pair_results():
    failed = dict(PAIR_RESULT, succeeded=False, verdict="failed", error="iperf3: refused",
                  gain=None)
    skipped = dict(samples.pair_result(), verdict="skipped", gain=None, jumbo=None,
                   skipped="path MTU 1500 < 9000")
    hole = dict(samples.pair_result(gain=0.4), verdict="blackhole", pmtud="blackhole")
    good = [PAIR_RESULT, failed, skipped, hole, samples.pair_result(gain=0.97),
            samples.pair_result(gain=1.02, path_mtu=8000),
            {"schema": 1, "succeeded": True, "runs": [], "verdict": "no-difference"}]
    bad = [dict(PAIR_RESULT, gain="big"), dict(PAIR_RESULT, verdict="maybe"),
           {"succeeded": True}, [1]]
    return good, bad


def _test_plugin_cases(cases, plugin, specs, results, argvs):
    """specs: (good, bad); results: (good, bad)."""
    good_specs, bad_specs = specs
    good_results, bad_results = results
    _case(cases, plugin, "enumerate")
    for spec in good_specs[::2] + bad_specs[::3] + NOT_JSON[:2]:
        _case(cases, plugin, "spec-is-valid", spec)
    for spec in good_specs[:4] + bad_specs[:2] + NOT_JSON[:1]:
        _case(cases, plugin, "participants", spec)
        _case(cases, plugin, "spec-to-cli", spec)
    for argv in argvs:
        _case(cases, plugin, "cli-to-spec", argv=argv)
    for stdin in argvs[1:2] + ["[--dest", ["--dest", True]]:
        _case(cases, plugin, "cli-to-spec", stdin)
    for spec in good_specs[:2] + bad_specs[:1] + [{"dest": "<h2>"}]:
        for mime in MIMES[1:]:
            _case(cases, plugin, "spec-format", spec, argv=mime)
    for stdin, mime in ((good_specs[0], []), (good_specs[0], ["image/png"])):
        _case(cases, plugin, "spec-format", stdin, argv=mime)
    spec = good_specs[-1]
    for number, result in enumerate(good_results):
        for mime in MIMES[1:] if number % 2 == 0 else MIMES[1:2]:
            _case(cases, plugin, "result-format", {"spec": spec, "result": result}, argv=mime)
    _case(cases, plugin, "result-format", {"result": good_results[1]})
    for result in bad_results[::2]:
        _case(cases, plugin, "result-format", {"spec": spec, "result": result})
    for stdin in NOT_JSON[1:2] + [{"spec": spec}]:
        _case(cases, plugin, "result-format", stdin)
    _case(cases, plugin, "result-format", {"spec": spec, "result": good_results[0]},
          argv=["image/png"])


def _pmtu_cases(cases):
    specs = [s for s in GOOD_SPECS] + [{"dest": "h2", "source": "h1", "reverse": True},
                                       {"dest": "h2", "dest-node": "n2", "reverse": True},
                                       {"dest": "h2", "reflector": True}] + ROUND_TRIP[-1:]
    argvs = [["--help"], ["--dest", "h2"],
             ["--dest", "h2", "--source", "h1", "-6", "--max-mtu", "9216", "--hops",
              "--no-reverse", "--timeout", "0.5"],
             ["--dest", "h2", "--flows", "8", "--target-mtu", "9000", "--reverse"],
             ["--dest", "h2", "--bogus"], ["--dest", "h2", "--rounds", "2"],
             ["--dest", "h2", "--min-mtu", "9000", "--max-mtu", "1500"],
             ["--dest", "198.18.0.2", "-6"], ["--source", "h1"]]
    bad_specs = [s for s, _ in BAD_SPECS if not isinstance(s, str)]
    _test_plugin_cases(cases, PMTU, (specs, bad_specs), _pmtu_results(), argvs)


def _pair_cases(cases):
    specs = list(PAIR_GOOD) + [{"dest": "h2", "source": "h1", "dest-node": "n2"},
                               {"dest": "h2", "direction": "reverse", "port": 6201}]
    bad_specs = [{}, {"dest": "h2", "rounds": 0}, {"dest": "h2", "direction": "sideways"},
                 {"dest": "h2", "duration": "PT0S"}, {"dest": "h2", "omit": "PT601S"},
                 {"dest": "h2", "throughput": {}}, {"dest": "h2", "hops": True},
                 {"dest": "h2", "reverse": True}, {"dest": "198.18.0.2", "ip-version": 6},
                 {"dest": "h2", "timeout": "PT61S"}, {"dest": "h2", "schema": 2},
                 {"dest": "h2", "bogus": 1}]
    argvs = [["--help"], ["--dest", "h2"],
             ["--dest", "h2", "--duration", "5", "--omit", "1", "--rounds", "2",
              "--fq-rate", "5G", "-6", "--order", "ab"],
             ["--dest", "h2", "--direction", "both", "--parallel", "4", "--port", "5201"],
             ["--dest", "h2", "--hops"], ["--dest", "h2", "--duration", "0"]]
    _test_plugin_cases(cases, PAIR, (specs, bad_specs), _pair_results(), argvs)


def _as(kind, spec):
    return {"type": kind, "spec": spec}


def _tool_cases(cases):
    spec = {"schema": 1, "dest": "198.18.0.2"}
    reverse = dict(spec, reverse=True)
    pair = dict(spec, duration="PT2S")
    tests = [_as("pmtu", spec), _as("pmtu", reverse), _as("pmtu", dict(spec, hops=True)),
             _as("pmtu", dict(reverse, flows=16, hops=True, timeout="PT2S")),
             _as("pmtu", dict(spec, reflector=True)), _as("pmtu", {"dest": "fd00::2"}),
             _as("jumbo-throughput", pair), _as("jumbo-throughput", dict(pair, omit="PT0S")),
             _as("jumbo-throughput", dict(pair, direction="both", rounds=2)),
             _as("jumbo-throughput", dict(pair, port=6201))]
    refused = NOT_JSON[:3] + [{"type": 5}, _as("pmtu", []), _as("pmtu", {"dest": 7}),
                          _as("rtt", {"dest": "a.example"}),
                          _as("pmtu", {"dest": "a.example", "bogus": 1}),
                          _as("pmtu", dict(spec, schema=2)),
                          _as("pmtu", dict(spec, throughput={})),
                          _as("jumbo-throughput", dict(pair, hops=True))]
    _case(cases, TOOL, "enumerate")
    for test in tests[::2] + refused[::2]:
        _case(cases, TOOL, "can-run", test)
    for test in tests + refused[3::2]:
        _case(cases, TOOL, "duration", test)
    for test in tests[1:2] + tests[4:5] + tests[6:7] + tests[-1:]:
        for index in (0, 1):
            _case(cases, TOOL, "participant-data", {"participant": index, "test": test},
                  volatile=("reflector-ports", "_token", "iperf3-port", "source-address?")
                  if "port" not in test["spec"]
                  else ("reflector-ports", "_token", "source-address?"))
    for request in NOT_JSON[1:2] + [{"participant": 2, "test": tests[0]},
                               {"participant": "1", "test": tests[0]},
                               {"participant": True, "test": tests[0]},
                               {"participant": 1}, {"test": tests[0]},
                               {"participant": 1, "test": refused[-4]}]:
        _case(cases, TOOL, "participant-data", request)
    for stdin in NOT_JSON[1:2] + [{"participant": 0, "test": tests[0]}]:
        _case(cases, TOOL, "run", stdin)
    _merged_cases(cases, tests)


def _source(result, **fields):
    output = {"succeeded": True, "result": result, "error": None, "diags": ""}
    output.update(fields)
    return output


def _merged_cases(cases, tests):
    hole = {"ttl": 2, "ip": "198.18.2.1", "size": 9000}
    blackhole = samples.pmtu_result(path_mtu=8950, pmtud="blackhole", blackhole=hole)
    pending = dict(samples.pmtu_result(), **{"reverse-pmtud": "unknown",
                                             "reverse": {"pending": True}})
    reflector = {"role": "dest", "throughput-server": None,
                 "reflector": {"ptb": [{"from": "198.18.3.1", "mtu": 1500, "size": 1501,
                                        "useful": True, "count": 2}],
                               "stats": {"answered": 10}, "local-limit": None}}
    dest = _source(reflector)
    server = {"succeeded": False, "error": "port 5601 is busy on the dest", "served": 0}
    pair_dest = {"succeeded": False, "error": "iperf3 server: port busy", "diags": "",
                 "result": {"role": "dest", "reflector": {}, "throughput-server": server}}
    pmtu_sets = [[_source(samples.pmtu_result()), None], [_source(blackhole), None],
                 [_source(pending), dest], [_source(pending), None],
                 [_source(samples.pmtu_result(), _private="secret"),
                  {"succeeded": True, "result": {"role": "dest", "reflector": None},
                   "_x": None}],
                 [{"succeeded": False, "error": "Tool failed: boom", "diags": "x"}, None],
                 [], [None], [{"result": 5}], [_source(PAIR_RESULT), None]]
    pair_sets = [[_source(PAIR_RESULT), None], [_source(PAIR_RESULT), pair_dest],
                 [_source(samples.pair_result(gain=0.9)), _source(reflector)],
                 [{"succeeded": False, "error": "no peer data", "diags": ""}, None],
                 [_source(samples.pmtu_result()), None], []]
    for results in pmtu_sets:
        _case(cases, TOOL, "merged-results", {"test": tests[1], "results": results})
    for results in pair_sets:
        _case(cases, TOOL, "merged-results", {"test": tests[6], "results": results})
    for stdin in NOT_JSON[1:2] + [{"test": tests[0]}, {"test": 3, "results": "x"}]:
        _case(cases, TOOL, "merged-results", stdin)


def _archiver_cases(cases):
    _case(cases, ARCHIVER, "enumerate")
    for data in [{}, {"schema": 1, "_url": "sqlite:////var/lib/jumbo/jumbo.db",
                      "retry-policy": [{"attempts": 2, "wait": "PT1M"}]},
                 {"_url": "https://archive:9200", "_auth": {"username": "w", "password": "p"},
                  "verify-ssl": True, "timeout": "PT20S"},
                 {"_url": "https://archive:9200", "pscheduler-streams": False},
                 {"_url": "ftp://x/y"}, {"_url": "sqlite://"},
                 {"_url": "https://h", "_auth": {"username": "u"}},
                 {"_url": "https://h", "_auth": {"username": "u", "password": 7}},
                 {"pscheduler-streams": False}, {"timeout": "PT5M"}, {"retry-policy": [{"attempts": 0, "wait": "PT1M"}]},
                 {"schema": 2}, {"colour": "red"}] + NOT_JSON[1:3]:
        _case(cases, ARCHIVER, "data-is-valid", data)


def cases():
    """Every call, in a fixed order."""
    collected = []
    _pmtu_cases(collected)
    _pair_cases(collected)
    _tool_cases(collected)
    _archiver_cases(collected)
    return collected
