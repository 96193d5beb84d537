"""The `jumbocheck` tool: everything behind its pScheduler methods.

It runs two tests (a tool may serve several): `pmtu` (background: forward, reverse, hops,
flows; no bulk traffic) and `jumbo-throughput` (exclusive: the path MTU with one flow, then
the paired 1500/9000 iperf3 legs; jumbo.testtype.pair). A jumbo-throughput spec is turned into the
tool's internal, pmtu-shaped spec with a `throughput` object (jumbo.testtype.pair.internal_spec), so
both tests share one run path below; only the result differs (jumbo.testtype.pair.assemble).

Participants (from the test's `participants`):
  p0 = the source = the lead: probes the forward path (jumbo.probe; through p1's reflector
       when p1 takes part, which spends no ICMP budget on the dest), measures the reverse path
       against p1's reflector (jumbo.tool.reverse) and runs the iperf3 clients
       (jumbo.tool.throughput);
  p1 = the dest, present only when the spec asks for `reverse` or `throughput`: runs the
       reflector (UDP) and, for the throughput phase, one `iperf3 -s` for this run's legs.

Participant data (computed at scheduling time, on each participant for its own index):
  p0: {"schema": 1, "protocol": 1}
  p1: {"schema": 1, "protocol": 1, "reflector-port": <UDP port, random in REFLECTOR_PORTS>,
       "iperf3-port": <TCP port: spec throughput.port, else random in throughput.PORT_RANGE>
       (only with a throughput phase), "_token": <128-bit random hex, one per run>}
  The ports are only chosen here; p1 binds them when its `run` starts and fails clearly
  ("port N is busy") if something else holds them by then. `_token` is private: the server
  gives it to both `run`s (part-data-full is fetched with the task key) but nulls it in
  everything else. With a throughput phase both add `iperf3-auth` and p1 `_iperf3-key`: the
  iperf3 server's key pair and authentication (jumbo.tool.iperf_auth).

Time budget (`duration`, a pure function of the spec, rounded up to whole seconds):
  START_WAIT (clock skew between the nodes, p1 start-up)
  + jumbo.probe.max_duration(spec)                  forward phase (jumbo-throughput: at
                                                    most PATH_MTU_BUDGET, enforced)
  + jumbo.tool.reverse.max_duration(spec)           reverse phase, when `reverse`
  + jumbo.tool.throughput.duration(spec)            throughput phase, when `throughput`
  + STATUS_BUDGET + TEARDOWN
  Every phase runs against a hard deadline derived from schedule.start + the slot, and a
  last-resort alarm turns an overrun into a clean `succeeded: false` line before the runner's
  kill (slot end + 1 s).

Output of `run`: exactly one JSON line {"succeeded", "result", "error", "diags"}.
  p0's `result` is already the test's result object (jumbo.tool.result.assemble); p1's is
  {"role": "dest", "reflector": {...}, "throughput-server": {...}|null}. `merged-results`
  (jumbo.tool.result.merge) folds p1's view into p0's.

Size: over 400 lines, with _run_source over 60: the run's timeline (slot, phases, alarms,
budget) is one state machine; _run_source is its source-side sequence (forward, reverse, legs,
goodbye) with each phase's failure handled where it happens, which reads best in order.
"""

import math
import random
import signal
import threading
import time

from ..testtype import pair as pairs
from . import iperf_auth, reflector, reverse as reverse_search
from . import result as results
from ..testtype import spec as specs
from ..core import terminate
from ..core import units
from ..core.resolve import ResolveError, resolve

TOOL = "jumbocheck"
PROTOCOL = 1
SCHEMA = 1
# UDP ports the dest's reflector picks from (participant-data).
REFLECTOR_PORTS = (5500, 5599)

START_WAIT = 2.0      # p0 waits this long after start before talking to p1 (skew, start-up)
STATUS_BUDGET = 2.0   # the final STATUS exchange with p1 when no reverse search ran
TEARDOWN = 2.0        # stopping servers, writing the result
DEST_EXIT_MARGIN = 1.0  # p1 stops this long before the slot ends
SLOT_ALARM_MARGIN = 0.3  # the last-resort alarm fires this long before the slot ends
# jumbo-throughput measures the path MTU (one flow) before its legs, inside its exclusive slot:
# that step gets at most this long. When it runs out the legs still run, the jumbo leg at 9000
# (or the local MTU) with the stall check deciding, and the result says why the path MTU is
# unknown. pmtu itself has no such cap: its forward phase runs in the background.
PATH_MTU_BUDGET = 8.0
TESTS = ("pmtu", "jumbo-throughput")


class RunError(Exception):
    """A run cannot go on; the text is for the operator."""


class _Deadline(BaseException):
    """The slot's end (SIGALRM). A BaseException, so that no `except Exception` in a phase
    swallows it."""


class _Terminated(BaseException):
    """SIGTERM (the runner's kill)."""


# ----------------------------------------------------------------------------------------------
# Input checks shared by the methods

def _test_spec(test, what="input"):
    """The tool's spec for a {"type", "spec"} object, checked; raises ValueError with the
    reason. A jumbo-throughput spec comes back as its internal pmtu-shaped spec (see top)."""
    if not isinstance(test, dict):
        raise ValueError("%s must be a JSON object with type and spec" % what)
    if test.get("type") not in TESTS:
        raise ValueError("%s: this tool runs the %s tests, not %r"
                         % (what, " and ".join(TESTS), test.get("type")))
    spec = test.get("spec")
    if not isinstance(spec, dict):
        raise ValueError("%s: spec must be a JSON object" % what)
    if test["type"] == pairs.TEST:
        valid, error = pairs.validate(spec)
        if not valid:
            raise ValueError("Invalid spec: %s" % error)
        return pairs.internal_spec(spec)
    valid, error = specs.validate(spec)
    if not valid:
        raise ValueError("Invalid spec: %s" % error)
    return spec


def is_pair_run(spec):
    """True for the internal spec of a jumbo-throughput run (pmtu specs carry no throughput)."""
    return spec.get("throughput") is not None


def _throughput_module():
    from . import throughput
    return throughput


# ----------------------------------------------------------------------------------------------
# can-run, duration, participant-data

def can_run(test):
    """{"can-run": true} or {"can-run": false, "reasons": [...]}; never raises."""
    reasons = []
    try:
        spec = _test_spec(test, "test")
    except ValueError as err:
        return {"can-run": False, "reasons": [str(err)]}
    except Exception as err:  # noqa: BLE001 - can-run must always answer valid JSON
        return {"can-run": False, "reasons": ["cannot check the spec: %s" % err]}
    if spec.get("throughput") is not None:
        try:
            ok, reason = _throughput_module().available()
        except Exception as err:  # noqa: BLE001 - can-run must answer, not crash
            ok, reason = False, "the throughput phase is not available: %s" % err
        if ok:
            ok, reason = iperf_auth.can_run()
        if not ok:
            reasons.append("throughput phase: %s" % reason)
    if reasons:
        return {"can-run": False, "reasons": reasons}
    return {"can-run": True}


def phase_budget(spec):
    """Seconds per phase for a spec: {"start", "forward", "reverse", "throughput", "end"}."""
    full = specs.with_defaults(spec)
    from .. import probe  # imported when needed: the plugin methods that never probe stay quick
    forward = float(probe.max_duration(full))
    if is_pair_run(full):
        forward = min(forward, PATH_MTU_BUDGET)
    reverse = reverse_search.max_duration(full) if full.get("reverse") else 0.0
    throughput = 0.0
    if full.get("throughput") is not None:
        throughput = float(_throughput_module().duration(full))
    two = specs.needs_dest_participant(full)
    return {"start": START_WAIT if two else 0.0, "forward": forward, "reverse": reverse,
            "throughput": throughput,
            # The final STATUS exchange runs only without a reverse search (which ends with
            # its own STATUS, inside its budget).
            "end": (STATUS_BUDGET if two and not full.get("reverse") else 0.0) + TEARDOWN}


def duration_seconds(spec):
    return int(math.ceil(sum(phase_budget(spec).values())))


def duration(test):
    """{"duration": "PT<n>S"}: an honest upper bound of the whole run (pure function)."""
    spec = _test_spec(test, "test")
    return {"duration": "PT%dS" % duration_seconds(spec)}


def participant_data(request):
    """What one participant tells the others, at scheduling time."""
    if not isinstance(request, dict):
        raise ValueError("input must be a JSON object with participant and test")
    index = request.get("participant")
    if isinstance(index, bool) or not isinstance(index, int) or index not in (0, 1):
        raise ValueError("participant must be 0 or 1, not %r" % (index,))
    spec = _test_spec(request.get("test"), "test")
    data = {"schema": SCHEMA, "protocol": PROTOCOL}
    if spec.get("throughput") is not None:
        data.update(iperf_auth.participant_data(index))  # keys: see iperf_auth
    if index == 0:
        return data
    rng = random.SystemRandom()
    data["reflector-port"] = rng.randint(REFLECTOR_PORTS[0], REFLECTOR_PORTS[1])
    phase = spec.get("throughput")
    if phase is not None:
        data["iperf3-port"] = phase.get("port") or _throughput_module().choose_port()
    data["_token"] = reflector.new_token()
    return data


# ----------------------------------------------------------------------------------------------
# run

def parse_time(text):
    """Unix time of an ISO 8601 timestamp with offset (as the runner writes schedule.start)."""
    if not isinstance(text, str):
        raise ValueError("schedule.start must be an ISO 8601 timestamp")
    try:
        return units.unix_time(text)
    except ValueError:
        raise ValueError("schedule.start %r is not an ISO 8601 timestamp" % text)


class _Run(object):
    """A parsed run input."""

    def __init__(self, run_input):
        if not isinstance(run_input, dict):
            raise ValueError("run input must be a JSON object")
        self.spec = _test_spec(run_input.get("test"), "test")
        self.full = specs.with_defaults(self.spec)
        index = run_input.get("participant")
        if isinstance(index, bool) or index not in (0, 1):
            raise ValueError("participant must be 0 or 1, not %r" % (index,))
        self.index = index
        schedule = run_input.get("schedule")
        if not isinstance(schedule, dict):
            raise ValueError("schedule must be an object with start and duration")
        self.start = parse_time(schedule.get("start"))
        slot = schedule.get("duration")
        try:
            self.slot = units.duration_seconds(slot) if slot is not None \
                else float(duration_seconds(self.spec))
        except ValueError as err:
            raise ValueError("schedule.duration: %s" % err)
        self.end = self.start + self.slot
        data = run_input.get("participant-data")
        self.data = data if isinstance(data, list) else []
        self.two = specs.needs_dest_participant(self.full)
        self.budget = phase_budget(self.spec)

    def peer(self):
        """p1's participant data (ports, token), or raise RunError."""
        if len(self.data) < 2 or not isinstance(self.data[1], dict):
            raise RunError("no participant data from the dest participant")
        data = self.data[1]
        if data.get("protocol") != PROTOCOL:
            raise RunError("the dest participant speaks jumbocheck protocol %r, this node %d"
                           % (data.get("protocol"), PROTOCOL))
        return data


def _sleep_until(moment):
    while True:
        remaining = moment - time.time()
        if remaining <= 0:
            return
        time.sleep(min(remaining, 1.0))


def failure(error, diags=""):
    return {"schema": SCHEMA, "succeeded": False, "result": None, "error": error,
            "diags": diags}


def run_participant(run_input):
    """Run one participant; returns its output object (never raises)."""
    try:
        run = _Run(run_input)
    except ValueError as err:
        return failure(str(err), "the run input was rejected before measuring")
    except Exception as err:  # noqa: BLE001 - never a traceback
        return failure("cannot read the run input: %s: %s" % (type(err).__name__, err))
    alarm = _arm_alarm(run.end - SLOT_ALARM_MARGIN)
    try:
        if terminate.received():
            raise _Terminated()  # before our handler was in place
        if run.index == 1:
            return _run_dest(run)
        return _run_source(run)
    except _Deadline:
        return failure("the run reached the end of its time slot and was stopped",
                        "phase budget: %s" % _budget_text(run.budget))
    except _Terminated:
        return failure("the run was terminated (SIGTERM) before it finished",
                        "phase budget: %s" % _budget_text(run.budget))
    except RunError as err:
        return failure(str(err))
    except Exception as err:  # noqa: BLE001 - never a traceback
        return failure("%s: %s" % (type(err).__name__, err), "unexpected failure in run")
    finally:
        _disarm_alarm(alarm)


def _arm_alarm(moment):
    """A last resort: SIGALRM just before the slot ends, and SIGTERM (the runner's kill),
    both turned into exceptions so that `finally` clauses stop our servers and the run still
    prints its one line (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def fire(signum, frame):
        raise _Deadline()

    def terminate(signum, frame):
        raise _Terminated()

    previous = (signal.signal(signal.SIGALRM, fire), signal.signal(signal.SIGTERM, terminate))
    signal.setitimer(signal.ITIMER_REAL, max(0.01, moment - time.time()))
    return previous


def _disarm_alarm(previous):
    if previous is None:
        return
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous[0])
    signal.signal(signal.SIGTERM, previous[1])


def _budget_text(budget):
    return ", ".join("%s %.1f s" % (k, budget[k]) for k in
                     ("start", "forward", "reverse", "throughput", "end"))


# -- p1 -------------------------------------------------------------------------------------------

def _reflector_versions(spec):
    """The families the dest's reflector listens in: the one the source will probe (its
    `dest` resolved as the source resolves it), both only when that cannot be told. A run
    of the other family at the same moment (a mesh runs v4 and v6 side by side, pmtu is a
    background test) then never finds its port taken by this one."""
    if spec.get("ip-version") in (4, 6):
        return (spec["ip-version"],)
    try:
        return (resolve(spec["dest"])[1],)
    except (ResolveError, KeyError, TypeError):
        return (4, 6)


def _run_dest(run):
    data = run.peer()
    port, token = data.get("reflector-port"), data.get("_token")
    if not isinstance(port, int) or not isinstance(token, str):
        raise RunError("participant data of the dest lacks the reflector port or token")
    server = reflector.Reflector(port, token, _reflector_versions(run.full))
    try:
        server.open()
    except reflector.ReflectorError as err:
        raise RunError(str(err))
    deadline = run.end - DEST_EXIT_MARGIN
    iperf = {}
    thread = None
    access_notes = []
    try:
        if run.full.get("throughput") is not None:
            iperf_port = data.get("iperf3-port")
            access, access_notes = _iperf_access(run)

            def serve():
                try:
                    _sleep_until(run.start)
                    with iperf_auth.Credentials(access["auth"], server=True) as cred:
                        iperf["result"] = _throughput_module().serve(
                            run.full, iperf_port, deadline, access["address"], cred.argv)
                    iperf["result"]["access"] = dict(access, auth=access["auth"] is not None,
                                                     open=access_notes)
                except Exception as err:  # noqa: BLE001 - the server thread's failure becomes p1's result
                    iperf["result"] = {"succeeded": False, "error": "%s: %s"
                                       % (type(err).__name__, err)}

            thread = threading.Thread(target=serve)
            thread.daemon = True
            thread.start()
        # The reflector answers from now on (a little before start is harmless, and covers
        # clock skew) until p0 says it is done or the slot ends.
        server.serve(time.monotonic() + (deadline - time.time()))
        if thread is not None:
            thread.join(max(0.0, deadline - time.time()))
    finally:
        server.close()
    report = server.report()
    served = iperf.get("result")
    notes = list(access_notes)
    if not report["stats"]["answered"]:
        notes.append("no valid request reached the reflector")
    if thread is not None and served is None:
        notes.append("the iperf3 server had not finished at the deadline")
    output = {"role": "dest", "reflector": report, "throughput-server": served}
    error = None
    if served is not None and not served.get("succeeded"):
        error = "iperf3 server: %s" % served.get("error")
    return {"schema": SCHEMA, "succeeded": error is None, "result": output, "error": error,
            "diags": "; ".join(notes + report["notes"]) or "reflector on port %d" % port}


def _iperf_access(run):
    """({address, auth}, notes): where the dest's iperf3 server listens, whom it lets in,
    and what that leaves open (jumbo.tool.iperf_auth)."""
    address, unbound = iperf_auth.bind_address(run.full)
    auth, why = iperf_auth.decide(run.data)
    if auth is not None and not iperf_auth.features()["auth"]:
        auth, why = None, "the dest's iperf3 cannot authenticate clients"
    notes = [] if why is None else iperf_auth.open_notes(why, address)
    if unbound:
        notes.append("the iperf3 server listens on all addresses: %s" % unbound)
    return {"address": address, "auth": auth}, notes


# -- p0 -------------------------------------------------------------------------------------------

def _resolve(host, version):
    try:
        return resolve(host, version)
    except ResolveError as err:
        raise RunError(str(err))


def _forward(run, peer=None, starting=0.0):
    """The forward phase: (result dict or None, error or None). The engine keeps itself
    within jumbo.probe.max_duration(spec), which the slot includes. With the dest's
    participant data (`peer`), forward probes go through its reflector (no ICMP budget
    spent on the dest; the engine falls back to echo / UDP if it does not answer)."""
    from .. import probe
    spec = dict(run.full)
    via = None
    if peer is not None and isinstance(peer.get("reflector-port"), int) \
            and isinstance(peer.get("_token"), str):
        via = {"port": peer["reflector-port"], "token": peer["_token"], "starting": starting}
    try:
        outcome = probe.measure(spec, reflector=via) if via else probe.measure(spec)
    except probe.ProbeError as err:
        return None, str(err)
    return outcome.as_json(), None


def _run_source(run):
    _sleep_until(run.start)
    diags = []

    if is_pair_run(run.full):
        forward, forward_error = _bounded(
            run, run.budget["forward"], _forward,
            "the path MTU was not measured within its %g s budget: the jumbo leg tries 9000 "
            "and the stall check decides" % run.budget["forward"])
    else:
        early_peer = None
        needed = sum(run.budget.values())
        if run.two and run.end - run.start >= needed:
            try:
                early_peer = run.peer()
            except RunError:
                early_peer = None  # reported below
        # Forward probes go through p1's reflector: the engine greets it from the start and
        # keeps greeting through p1's start-up time (the START_WAIT the slot already has),
        # so a run with both nodes up probes at once. A slot shorter than the budget (a
        # clock that jumped) has no room for it: then the forward phase probes
        # single-ended.
        starting = max(0.0, run.start + START_WAIT - time.time())
        forward, forward_error = _forward(run, early_peer, starting)
    if forward is not None and forward.get("succeeded") is False and not forward_error:
        forward_error = forward.get("error") or "the forward measurement failed"

    reverse = None
    throughput = None
    peer_error = None
    if run.two:
        try:
            peer = run.peer()
        except RunError as err:
            peer, peer_error = None, str(err)
        dest_ip, version = None, None
        if forward is not None and forward.get("dest-ip"):
            dest_ip, version = forward["dest-ip"], forward.get("ip-version")
        if dest_ip is None:
            try:
                dest_ip, version = _resolve(run.full["dest"], run.full.get("ip-version"))
            except RunError as err:
                peer_error = peer_error or str(err)
        version = 6 if version == 6 or (dest_ip and ":" in dest_ip) else 4
        if peer is not None and dest_ip is not None:
            # Give p1 its start-up time (and clock skew) before talking to it, unless its
            # reflector already answered the forward probes.
            if not (forward and forward.get("method") == "reflector"):
                _sleep_until(run.start + START_WAIT)
            path_mtu = forward.get("path-mtu") if forward else None
            if run.full.get("reverse"):
                try:
                    reverse = _reverse(run, peer, dest_ip, version, path_mtu)
                except Exception as err:  # noqa: BLE001 - keep the forward answer
                    reverse = {"error": "reverse phase failed: %s: %s"
                               % (type(err).__name__, err)}
            if run.full.get("throughput") is not None:
                try:
                    throughput = _throughput(run, peer, dest_ip, version, forward, path_mtu)
                    diags.extend((throughput or {}).pop("open", None) or [])
                except Exception as err:  # noqa: BLE001 - keep the forward answer
                    throughput = {"runs": [], "verdict": "failed", "skipped": None,
                                  "error": "throughput phase failed: %s: %s"
                                  % (type(err).__name__, err)}
            if not run.full.get("reverse") and isinstance(peer.get("reflector-port"), int):
                # Tell p1's reflector we are done (its STATUS answer carries its report).
                goodbye = reverse_search.say_goodbye(
                    dest_ip, peer.get("reflector-port"), peer.get("_token") or "0" * 32, version,
                    time.monotonic() + min(STATUS_BUDGET, max(0.0, run.end - time.time() - 1.0)))
                if goodbye is None:
                    diags.append("the dest's reflector did not answer the final STATUS")
        elif run.full.get("reverse"):
            reverse = {"reverse-path-mtu": None, "reverse-pmtud": "unknown",
                       "error": peer_error or "the dest participant is not available"}

    if is_pair_run(run.full):
        result = pairs.assemble(forward, forward_error, throughput, peer_error=peer_error)
    else:
        result = results.assemble(run.full, forward, forward_error, reverse, throughput,
                                  peer_error=peer_error)
    diags.append("phase budget: %s" % _budget_text(run.budget))
    diags.append("run took %.1f s of a %d s slot" % (time.time() - run.start, run.slot))
    if result.get("diags"):
        diags.insert(0, result["diags"])
    result["diags"] = "; ".join(diags)
    return {"schema": SCHEMA, "succeeded": bool(result.get("succeeded")), "result": result,
            "error": result.get("error"), "diags": result["diags"]}


class _StepOver(BaseException):
    """A bounded step's own alarm (not the slot's end)."""


def _bounded(run, seconds, step, reason):
    """step(run) -> (value, error), stopped after `seconds` with (None, reason). The slot's
    alarm is suspended meanwhile and re-armed after (main thread only; elsewhere unbounded)."""
    if threading.current_thread() is not threading.main_thread():
        return step(run)

    def over(signum, frame):
        raise _StepOver()

    slot_left = run.end - SLOT_ALARM_MARGIN - time.time()
    previous = signal.signal(signal.SIGALRM, over if seconds < slot_left else
                             signal.getsignal(signal.SIGALRM))
    signal.setitimer(signal.ITIMER_REAL, max(0.01, min(seconds, slot_left)))
    try:
        outcome = step(run)
    except _StepOver:
        outcome = (None, reason)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # Only reached without an exception in flight (a _Deadline propagates as it is).
    left = run.end - SLOT_ALARM_MARGIN - time.time()
    if left <= 0:
        raise _Deadline()
    signal.setitimer(signal.ITIMER_REAL, left)
    return outcome


def _reverse(run, peer, dest_ip, version, path_mtu):
    port, token = peer.get("reflector-port"), peer.get("_token")
    if not isinstance(port, int) or not isinstance(token, str):
        return {"reverse-path-mtu": None, "reverse-pmtud": "unknown",
                "error": "participant data of the dest lacks the reflector port or token"}
    budget = run.budget["reverse"]
    deadline = time.monotonic() + max(0.0, min(budget, run.end - TEARDOWN - time.time()
                                               - run.budget["throughput"]))
    timeout = units.duration_seconds(run.full.get("timeout") or "PT1S")
    try:
        return reverse_search.measure_reverse(
            dest_ip, port, token, version, forward_mtu=path_mtu,
            min_size=run.full.get("min-mtu"), max_size=run.full.get("max-mtu"),
            timeout=timeout, deadline=deadline, flows=run.full.get("flows") or 1,
            source=_source_address(run.full, version))
    except ValueError as err:
        return {"reverse-path-mtu": None, "reverse-pmtud": "unknown", "error": str(err)}


def _source_address(spec, version):
    """The spec's `source` as an address of the probing family, or None."""
    source = spec.get("source")
    if not source:
        return None
    try:
        return _resolve(source, version)[0]
    except RunError:
        return None


def _throughput(run, peer, dest_ip, version, forward, path_mtu):
    port = peer.get("iperf3-port")
    if not isinstance(port, int):
        return {"runs": [], "error": "participant data of the dest lacks the iperf3 port",
                "verdict": "failed", "skipped": None}
    deadline = run.end - TEARDOWN
    local_mtu = forward.get("local-mtu") if forward else None
    auth, why = iperf_auth.decide(run.data)
    with iperf_auth.Credentials(auth, server=False) as cred:
        result = _throughput_module().run_legs(run.full, dest_ip, port, path_mtu, version,
                                               deadline=deadline, local_mtu=local_mtu, auth=cred)
    if why is not None and result is not None:
        result["open"] = iperf_auth.open_notes(why, dest_ip)
    return iperf_auth.explain(result)
