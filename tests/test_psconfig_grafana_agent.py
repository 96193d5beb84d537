"""perfSONAR's own pSConfig Grafana agent turns the suite's display config into dashboards.

The REAL upstream agent (`bin/psconfig_grafana_agent` of perfsonar/psconfig 5.2.4, from
psconfig-5.2.4-*.tar.gz in PSCHEDULER_SRC, default ../shared/real-pscheduler/) runs once on the
system Python (its Debian dependencies; pyjq from var/real-pscheduler/pydeps as scripts/setup.sh
builds it; python-pscheduler's source from the pscheduler 5.2.5 tarball on PYTHONPATH) against
the shipped template psconfig/lhcone-jumbo-mesh.json and the shipped displays
dashboards/psconfig-grafana-agent-pmtu.json, posting to tests/grafana_standin.py (Grafana cannot
be had here). The test checks what it posted: one path-MTU and one black-hole matrix per pmtu
task (IPv4 and IPv6), each querying its own task, each cell linking to the pair page the agent
rendered from dashboards/grafana-pmtu-pair-agent.json.j2.
"""

import glob
import json
import os
import re
import subprocess
import tarfile
import threading
import time
import uuid

import pytest

from grafana_standin import ENDPOINTS, GrafanaStandIn

jinja2 = pytest.importorskip("jinja2")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASHBOARDS = os.path.join(ROOT, "dashboards")
DISPLAYS = os.path.join(DASHBOARDS, "psconfig-grafana-agent-pmtu.json")
PAIR = os.path.join(DASHBOARDS, "grafana-pmtu-pair.json")
TEMPLATE = os.path.join(ROOT, "psconfig", "lhcone-jumbo-mesh.json")
PYDEPS = os.path.join(ROOT, "var", "real-pscheduler", "pydeps")
SRC = os.environ.get("PSCHEDULER_SRC",
                     os.path.normpath(os.path.join(ROOT, "..", "shared", "real-pscheduler")))
# where the archiver package installs the agent's files (rpm spec, debian/rules)
DATADIR = "/usr/share/pscheduler-archiver-jumbo/grafana/"
# psconfig/grafana/agent.py: Agent.UUID_NAMESPACE_PS, DEFAULT_GRAFANA_FOLDER/_DASHBOARD_TAG
UUID_NAMESPACE_PS = uuid.UUID(hex="8caa5877-053a-42ae-9fc7-2681c3d02511")
FOLDER, TAG = "perfSONAR pSConfig", "perfsonar-psconfig"
DATASOURCE = {"id": 7, "uid": "os-archive", "name": "Jumbo archive",
              "type": "grafana-opensearch-datasource"}
TOKEN = "standin-token"
AGENT_WAIT = 180      # seconds: one pass of the agent over the 12-host template


def _tarball(pattern):
    found = sorted(glob.glob(os.path.join(SRC, pattern)))
    if not found:
        if os.environ.get("CI"):
            pytest.fail("%s missing in %s (PSCHEDULER_SRC)" % (pattern, SRC))
        pytest.skip("%s missing in %s (PSCHEDULER_SRC)" % (pattern, SRC))
    return found[-1]


def _extract(tarball, prefix, dest):
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)
                   and (m.isfile() or m.isdir())]
        tar.extractall(dest, members=members)
    return os.path.join(dest, prefix)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    """The psconfig source tree and python-pscheduler's source (holding the package), unpacked."""
    base = str(tmp_path_factory.mktemp("upstream"))
    psconfig = _extract(_tarball("psconfig-5.2.4-*.tar.gz"), "psconfig/psconfig/perfsonar-psconfig",
                        base)
    pscheduler = _extract(_tarball("pscheduler-5.2.5-*.tar.gz"),
                          "pscheduler/python-pscheduler/pscheduler", base)
    if not glob.glob(os.path.join(PYDEPS, "pyjq*")):
        pytest.fail("pyjq missing in %s: run scripts/setup.sh" % PYDEPS)
    return {"psconfig": psconfig, "pscheduler": pscheduler}


def _displays():
    with open(DISPLAYS) as f:
        return json.load(f)["displays"]


def _agent_environment(template_dir):
    """The Jinja2 environment the agent builds for a matrix_url_template (_build_matrix_url):
    a FileSystemLoader on the file's directory and Jinja2's defaults otherwise."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(template_dir))


# -- the stand-in against the agent's source -------------------------------------------------

def test_standin_answers_exactly_the_calls_the_agent_makes(upstream):
    with open(os.path.join(upstream["psconfig"], "psconfig", "grafana", "agent.py")) as f:
        source = f.read()
    calls = set()
    for _, path, rest in re.findall(r"_gf_http\(f?(['\"])(.+?)\1,([^\n]*)", source):
        method = re.search(r"method=\"(\w+)\"", rest)
        calls.add((method.group(1) if method else "get", re.sub(r"\{[^}]*\}", "{}", path)))
    assert calls == {(m, re.sub(r"\{[^}]*\}", "{}", p)) for m, p in ENDPOINTS}
    # the answer fields the agent reads are the ones the stand-in gives
    for field in ('.get("uid", None)', '.get("type", None)', '.get("datasource", {})',
                  '.get("url", None)', 'folder.get("title", None)'):
        assert field in source, field
    assert 'header["Authorization"] = "Bearer {}"' in source and "HTTPBasicAuth(" in source


def test_standin_refuses_what_grafana_refuses():
    standin = GrafanaStandIn(token=TOKEN)
    auth = {"Authorization": "Bearer " + TOKEN}
    assert standin.handle("get", "/api/org", {}, b"")[0] == 401
    assert standin.handle("get", "/api/org", {"Authorization": "Bearer x"}, b"")[0] == 401
    assert standin.handle("get", "/api/org", auth, b"")[0] == 200
    post = json.dumps({"dashboard": {"title": "t", "uid": "u"}, "folderUid": "nope"}).encode()
    assert standin.handle("post", "/api/dashboards/db", auth, post)[0] == 400
    assert standin.handle("post", "/api/dashboards/db", auth, b"{not json")[0] == 400
    bad_uid = json.dumps({"dashboard": {"title": "t", "uid": "a" * 41}}).encode()
    assert standin.handle("post", "/api/dashboards/db", auth, bad_uid)[0] == 400
    good = json.dumps({"dashboard": {"title": "A b", "uid": "u-1", "tags": ["x"]}}).encode()
    assert standin.handle("post", "/api/dashboards/db", auth, good) == \
        (200, {"id": 1, "uid": "u-1", "status": "success", "version": 1, "slug": "a-b",
               "url": "/d/u-1/a-b"})
    assert standin.handle("get", "/api/search?type=dash-db&tag=x", auth, b"")[1][0]["uid"] == "u-1"
    assert standin.handle("get", "/api/search?type=dash-db&tag=y", auth, b"")[1] == []


# -- every shipped display template renders as the agent renders it --------------------------

def _render_vars():
    # the variables _build_matrix_url passes (ds_jv_obj), with hostile-looking values
    return {"grafana_datasource_name": "Archive \"A\" {{x}}", "grafana_datasource": DATASOURCE,
            "grafana_uuid": "u-1", "grafana_folder_uid": "f-1", "dashboard_tag": TAG}


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(DASHBOARDS, "*.j2"))),
                         ids=os.path.basename)
def test_display_template_renders_under_the_agents_jinja2(path):
    env = _agent_environment(os.path.dirname(path))
    rendered = env.get_template(os.path.basename(path)).render(_render_vars())
    dash = json.loads(rendered)
    assert dash["uid"] == "u-1" and TAG in dash["tags"]


def test_every_matrix_url_template_is_a_shipped_template_in_the_data_dir():
    shipped = {os.path.basename(p) for p in glob.glob(os.path.join(DASHBOARDS, "*.j2"))}
    for name, display in _displays().items():
        path = display["matrix_url_template"]
        assert path.startswith(DATADIR) and not path.startswith("/usr/share/doc/"), name
        assert os.path.basename(path) in shipped, name


# -- the real agent, once ----------------------------------------------------------------------

def _run_agent(upstream, config_path, log_path):
    """Start bin/psconfig_grafana_agent, wait for the end of its first pass, stop it by PID."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [upstream["psconfig"], upstream["pscheduler"], PYDEPS]))
    env.pop("PYTHONHOME", None)
    agent = os.path.join(upstream["psconfig"], "bin", "psconfig_grafana_agent")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["/usr/bin/python3", agent, "--config", config_path,
                                 "--disable-inotify"], stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=os.path.dirname(config_path))
    done = threading.Event()
    try:
        deadline = time.monotonic() + AGENT_WAIT
        while time.monotonic() < deadline and proc.poll() is None and not done.is_set():
            with open(log_path) as f:
                if "Agent completed running" in f.read():
                    done.set()
                    break
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    with open(log_path) as f:
        log_text = f.read()
    assert done.is_set(), "agent did not finish a pass in %d s:\n%s" % (AGENT_WAIT, log_text[-4000:])
    return log_text


@pytest.fixture(scope="module")
def agent_run(upstream, tmp_path_factory):
    work = str(tmp_path_factory.mktemp("grafana-agent"))
    for sub in ("include", "archives", "transforms", "cache"):
        os.mkdir(os.path.join(work, sub))
    with open(TEMPLATE) as f:
        template = json.load(f)
    with open(os.path.join(work, "include", "lhcone-jumbo-mesh.json"), "w") as f:
        json.dump(template, f)
    # the displays as shipped; only matrix_url_template moves from the data dir the package
    # installs into to this checkout's copy of the same file
    displays = _displays()
    for display in displays.values():
        display["matrix_url_template"] = os.path.join(
            DASHBOARDS, os.path.basename(display["matrix_url_template"]))
    config = {
        "remotes": [],
        "include-directory": os.path.join(work, "include"),
        "archive-directory": os.path.join(work, "archives"),
        "transform-directory": os.path.join(work, "transforms"),
        "requesting-agent-file": os.path.join(work, "requesting-agent.json"),
        "cache-directory": os.path.join(work, "cache"),
        "grafana-dashboard-template": os.path.join(upstream["psconfig"], "templates",
                                                   "grafana.json.j2"),
        "grafana-token": TOKEN,
        "grafana-datasource-name": DATASOURCE["name"],
        "displays": displays,
    }
    standin = GrafanaStandIn(token=TOKEN, datasources=[DATASOURCE])
    config["grafana-url"] = standin.start()
    config_path = os.path.join(work, "grafana-agent.json")
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2)
    try:
        log = _run_agent(upstream, config_path, os.path.join(work, "agent.log"))
    finally:
        standin.stop()
    return {"standin": standin, "log": log, "template": template, "displays": displays}


def test_agent_runs_without_template_errors(agent_run):
    log = agent_run["log"]
    assert "TemplateSyntaxError" not in log and "Traceback" not in log, log[-4000:]
    assert all(status < 400 for m, p, b, status in agent_run["standin"].requests), \
        [r for r in agent_run["standin"].requests if r[3] >= 400]


def _pair_uid(displays):
    template = displays["pmtu_path_mtu"]["matrix_url_template"]
    return str(uuid.uuid5(UUID_NAMESPACE_PS, "%s::%s" % (template, DATASOURCE["name"])))


def test_agent_posts_the_pair_page(agent_run):
    standin, displays = agent_run["standin"], agent_run["displays"]
    uid = _pair_uid(displays)
    pages = [d for d in standin.posted_dashboards() if d["uid"] == uid]
    assert len(pages) == 1       # built once, shared by both displays and both families
    page = pages[0]
    with open(PAIR) as f:
        pair = json.load(f)
    # the same panels as the hand-imported pair page, Grafana's own {{term ...}} alias intact
    assert page["panels"] == pair["panels"]
    assert any(t.get("alias") == "IPv{{term test.spec.ip-version}}"
               for p in page["panels"] for t in p.get("targets", []))
    assert TAG in page["tags"] and page["title"].endswith(DATASOURCE["name"])
    variables = {v["name"]: v for v in page["templating"]["list"]}
    assert variables["datasource"]["current"]["value"] == DATASOURCE["name"]
    assert standin.dashboards[uid]["folderUid"] == standin.folders[0]["uid"]
    assert standin.folders[0]["title"] == FOLDER


def test_agent_posts_pmtu_matrices_per_task_and_family(agent_run):
    standin, displays, template = agent_run["standin"], agent_run["displays"], agent_run["template"]
    group_uid = str(uuid.uuid5(UUID_NAMESPACE_PS, "Jumbo frames"))
    boards = [d for d in standin.posted_dashboards() if d["uid"] == group_uid]
    assert len(boards) == 1
    matrices = [p for p in boards[0]["panels"] if p["type"] == "esnet-matrix-panel"]
    # ground truth from the template: each pmtu task, its display name and its family
    pmtu_tasks = {}
    for name, task in template["tasks"].items():
        test = template["tests"][task["test"]]
        if test["type"] == "pmtu":
            pmtu_tasks[task["reference"]["display-task-name"]] = test["spec"]["ip-version"]
    assert sorted(pmtu_tasks.values()) == [4, 6]
    hosts = sorted(template["addresses"])
    pair_url = "/d/%s/" % _pair_uid(displays)
    seen = set()
    for panel in matrices:
        target = panel["targets"][0]
        metric = target["metrics"][0]
        display = [n for n, d in displays.items()
                   if (d["stat_field"], d["stat_type"]) == (metric["field"], metric["type"])]
        assert len(display) == 1, metric
        d = displays[display[0]]
        assert panel["title"] in pmtu_tasks
        assert target["query"] == 'reference.display-task-name.keyword: "%s"' % panel["title"]
        assert [b["field"] for b in target["bucketAggs"]] == [d["row_field"], d["col_field"]]
        assert panel["fieldConfig"]["defaults"]["thresholds"]["steps"] == d["thresholds"]
        assert panel["datasource"] == {"type": DATASOURCE["type"], "uid": DATASOURCE["uid"]}
        options = panel["options"]
        assert options["url"].startswith(pair_url) and options["url"].endswith("?")
        assert (options["urlVar1"], options["urlVar2"]) == ("source", "dest")
        assert (options["sourceField"], options["targetField"]) == (d["row_field"], d["col_field"])
        # the mesh's 12 hosts on both axes: gridPos grows with them up to Grafana's 24 columns
        assert panel["gridPos"]["w"] == min(24, 3 + 2 * len(hosts))
        seen.add((panel["title"], display[0]))
    # every pmtu task (both families) has both matrices, once; nothing else got a matrix
    assert len(matrices) == len(seen) == 2 * len(pmtu_tasks)
    assert seen == {(t, n) for t in pmtu_tasks for n in displays}
