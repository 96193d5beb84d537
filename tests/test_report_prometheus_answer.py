"""report/prometheus_answer.py: a Prometheus answer decoded one series at a time (issue 32
row 5: a 60 MB range answer took the report to about 1 GiB of RSS), its envelope as strict as
a whole-document parse."""

import json
import os
import subprocess
import sys

import pytest

from jumbo.report.errors import ReportError
from jumbo.report.prometheus import Prometheus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _prom():
    return Prometheus("http://127.0.0.1:9")


def _series(i, kind):
    metric = {"src": "S%d" % i, "dst": "D%d" % i}
    if kind == "vector":
        return {"metric": metric, "value": [1700000000, "%d" % i]}
    return {"metric": metric, "values": [[1700000000 + 86400 * k, "%d" % k] for k in range(3)]}


def _body(doc):
    return json.dumps(doc).encode()


def test_members_in_any_order_give_the_same_series():
    result = [_series(i, "vector") for i in range(3)]
    usual = {"status": "success", "data": {"resultType": "vector", "result": result}}
    shuffled = {"data": {"result": result, "warnings": ["x"], "resultType": "vector"},
                "status": "success", "infos": [{"deep": [1, 2]}]}
    assert _prom().vector(_body(usual)) == _prom().vector(_body(shuffled)) == \
        [({"src": "S%d" % i, "dst": "D%d" % i}, float(i)) for i in range(3)]
    assert _prom().matrix(_body({"status": "success", "data": {
        "resultType": "matrix", "result": [_series(0, "matrix")]}}))[0][1] == \
        [(1700000000.0, 0.0), (1700086400.0, 1.0), (1700172800.0, 2.0)]


@pytest.mark.parametrize("text, message", [
    ('{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, '
     '"value": [1, "1"]}]}}', "expected a vector answer"),
    ('{"data": {"result": [], "resultType": "vector"}, "status": "error"}', "unexpected answer"),
    ('{"status": "success", "data": {"resultType": "vector", "result": {}}}', "expected a vector"),
    ('{"status": "success", "data": {"resultType": "vector"}}', "expected a vector"),
    ('{"status": "success", "data": null}', "unexpected answer"),
    ('{"status": "success", "data": {"resultType": "vector", "result": []}} x', "not JSON"),
    ('{"status": "success", "data": {"resultType": "vector", "result": [] "x": 1}}', "not JSON"),
    ('{"status": "success", "data": {"resultType": "vector", "result": [],}}', "not JSON"),
    ('{"status": "success", "data": {"resultType": "vector", "result": [], "result": []}}',
     "two result"),
    ('{"status": "success", "data": {}, "data": {}}', "two data"),
    ('{"status": "success", "data": {"resultType": "vector", "result": [[1]]}}', "without labels"),
    ('[1, 2]', "not JSON"),
    ('', "not JSON"),
    ('{"status": "success", "data": {"resultType": "vector", "result": [' + "[" * 100000 + "]"
     * 100000 + "]}}", "not JSON"),
])
def test_a_malformed_answer_is_refused_by_name(text, message):
    with pytest.raises(ReportError) as err:
        _prom().vector(text.encode())
    assert message in str(err.value)


def test_too_many_series_are_refused(monkeypatch):
    from jumbo.report import prometheus_answer
    monkeypatch.setattr(prometheus_answer, "MAX_SERIES", 5)
    body = _body({"status": "success", "data": {"resultType": "vector",
                                                "result": [_series(i, "vector") for i in range(6)]}})
    with pytest.raises(ReportError, match="more than 5 series"):
        _prom().vector(body)


_RSS_PROBE = r"""
import resource
from jumbo.report.prometheus import Prometheus
# the answer's text made without its objects, so the peak before the parse is the text's
points = ",".join('[%d,"12345.5"]' % (1700000000 + 86400 * k) for k in range(400))
body = ('{"status":"success","data":{"resultType":"matrix","result":[%s]}}' % ",".join(
    '{"metric":{"src":"site-%06d","dst":"dst-%06d"},"values":[%s]}' % (i, i, points)
    for i in range(3000))).encode()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = Prometheus("http://127.0.0.1:9").matrix(body)
assert len(out) == 3000
print(len(body), before * 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def test_a_large_answer_costs_a_bounded_multiple_of_its_size():
    # A 28 MB range answer (3,000 series of 400 points): decoded whole, the peak grew by 14.3
    # times the answer's size; one series at a time with the times shared, by 4.6 (measured
    # 2026-11-26).
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python-jumbo"))
    out = subprocess.run([sys.executable, "-c", _RSS_PROBE], env=env, stdout=subprocess.PIPE,
                         universal_newlines=True, check=True, timeout=600).stdout.split()
    size, before, peak = (int(v) for v in out)
    assert size > 25e6
    growth = peak - before
    print("peak RSS grew by %.1f times the answer" % (growth / size))
    assert growth < 8 * size, "peak RSS grew by %.1f times the answer" % (growth / size)
