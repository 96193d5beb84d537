"""The plugins' enumerations under both pScheduler plugin contracts (issue 30), checked by
upstream's own code (tests/upstream_pscheduler.py builds it from the source tarballs):

  * every plugin's `enumerate`, run on a node whose python-pscheduler is 5.2.5's, answers in
    5.2's shape, and 5.2.5's server check (its SQL json_validate) accepts it;
  * run on a 5.3-dev node (python-pscheduler 5.3 + pscheduler-json-dictionary), it answers in
    5.3's shape, and 5.3's server check and its `json-validate` program accept it;
  * each shape is refused by the other version's check (one fixed document cannot serve
    both: the reason the answer is decided at run time);
  * the JSON schemas 5.3 reads are the suite's validators: a spec accepted by spec-is-valid is
    accepted by the enumerated schema and a refused one is refused, through upstream's
    plugins.py (the code upstream's own spec-is-valid methods call)."""

import json
import os
import subprocess

import pytest

from upstream_pscheduler import PYTHON, ROOT, Upstream, missing

from jumbo.core import contract
from jumbo.protocol import enumeration

LIBRARY = os.path.join(ROOT, "python-jumbo")
PLUGINS = [("test", "pmtu", "pscheduler-test-pmtu/pmtu"),
           ("test", "jumbo-throughput", "pscheduler-test-jumbo-throughput/jumbo-throughput"),
           ("tool", "jumbocheck", "pscheduler-tool-jumbocheck/jumbocheck"),
           ("archiver", "jumbo", "pscheduler-archiver-jumbo/jumbo")]
VERSIONS = {"5.2.5": 1, "5.3": 2}


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    why = missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return Upstream(tmp_path_factory.mktemp("upstream-pscheduler"))


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize("kind,name,directory", PLUGINS)
def test_enumerate_answers_in_the_shape_the_installed_pscheduler_accepts(
        upstream, version, kind, name, directory):
    status, out, err = upstream.enumerate_under(version, os.path.join(ROOT, directory), LIBRARY)
    assert status == 0, err
    answer = json.loads(out)
    assert answer == dict(enumeration.candidates(kind, name))[VERSIONS[version]]
    assert answer["name"] == name
    assert upstream.server_check(version, kind, answer) is None
    if version == "5.3":
        status, said = upstream.json_validate_tool(kind, answer)
        assert status == 0, said
        assert ("label" in answer) and (kind == "tool" or answer["schema"] == 2)
    else:
        assert "label" not in answer and "spec" not in answer


def test_each_shape_is_refused_by_the_other_version(upstream):
    shapes = [(kind, dict(enumeration.candidates(kind, name))) for kind, name, _d in PLUGINS]
    for message in upstream.server_checks("5.2.5", [(k, s[2]) for k, s in shapes]):
        assert message and "label" in message, message
    for message in upstream.server_checks("5.3", [(k, s[1]) for k, s in shapes]):
        assert message and "label" in message, message
    for kind, shape in shapes:
        status, said = upstream.json_validate_tool(kind, shape[1])
        assert status != 0 and "label" in said, said


SPECS = {
    "pmtu": [({"dest": "198.18.201.2"}, True),
             ({"dest": "198.18.201.2", "flows": 40, "reflector": True, "timeout": "PT1S"}, True),
             ({"dest": "198.18.201.2", "flows": 65}, False),
             ({"dest": "198.18.201.2", "colour": "red"}, False),
             ({"source": "a"}, False)],
    "jumbo-throughput": [({"dest": "198.18.201.2", "duration": "PT7S"}, True),
                         ({"dest": "198.18.201.2", "order": "baab"}, False),
                         ({"dest": "198.18.201.2", "parallel": 65}, False)],
}

@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_enumerated_spec_schema_is_the_suites_validator(upstream, tmp_path, name):
    directory = dict((n, d) for _k, n, d in PLUGINS)[name]
    status, out, err = upstream.enumerate_under("5.3", os.path.join(ROOT, directory), LIBRARY)
    assert status == 0, err
    (tmp_path / "enumerate.json").write_text(out)
    specs = [spec for spec, _expected in SPECS[name]]
    verdicts = upstream.spec_checks(str(tmp_path), specs)
    for (spec, expected), (valid, message) in zip(SPECS[name], verdicts):
        ours = subprocess.run([os.path.join(ROOT, directory, "spec-is-valid")],
                              input=json.dumps(spec), stdout=subprocess.PIPE,
                              universal_newlines=True,
                              env=dict(os.environ, PYTHONPATH=LIBRARY), timeout=120)
        assert json.loads(ours.stdout)["valid"] is expected, (spec, ours.stdout)
        assert valid is expected, (spec, message)


def test_one_version_for_every_plugin():
    import jumbo
    for kind, name, _directory in PLUGINS:
        for number, shape in enumeration.candidates(kind, name):
            assert shape["version"] == jumbo.__version__
            assert shape["maintainer"] == contract.maintainer()


def test_the_maintainer_is_the_packages_or_says_unset():
    # the tree holds the placeholder make dist stamps (scripts/make-tarball.sh): never an
    # address of nobody in `pscheduler plugins`
    assert contract.maintainer() == contract.UNSET_MAINTAINER
    assert contract.UNSET_MAINTAINER["email"].endswith(".invalid")
    assert contract.maintainer("Jane Doe <jane@example.net>") == \
        {"name": "Jane Doe", "email": "jane@example.net", "href": "mailto:jane@example.net"}
    for bad in ("@JUMBO_MAINTAINER@", "jane@example.net", "Jane <jane>", "<a@b.c>", ""):
        assert contract.maintainer(bad) == contract.UNSET_MAINTAINER, bad


def test_an_unknown_contract_or_plugin_is_refused():
    with pytest.raises(ValueError, match="contract 3"):
        contract.enumeration("test", "pmtu", 3)
    with pytest.raises(ValueError, match="no plugin"):
        contract.enumeration("test", "nope", 1)
    with pytest.raises(ValueError, match="without a gap"):
        contract.versions({1: {}, 3: {}})


def test_only_enumerate_loads_python_pscheduler(upstream):
    """On a node every method imports its protocol module; python-pscheduler (psycopg2, pyjq,
    ...) must load only when `enumerate` asks it which contract to answer in: can-run has 5 s."""
    import subprocess as sp
    probe = ("import sys\nimport jumbo.protocol.jumbocheck, jumbo.protocol.pmtu, "
             "jumbo.protocol.archiver\nprint('pscheduler' in sys.modules)\n"
             "jumbo.protocol.pmtu.enumerate_plugin()\nprint('pscheduler' in sys.modules)")
    done = sp.run([PYTHON, "-c", probe], stdout=sp.PIPE, stderr=sp.PIPE,
                  universal_newlines=True, env=upstream.env("5.3", [LIBRARY]), timeout=120)
    assert done.stdout.split() == ["False", "True"], done.stderr
