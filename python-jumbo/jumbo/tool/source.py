"""Participant 0, the source (the lead): the forward phase (jumbo.probe; through p1's reflector
when p1 takes part, which spends no ICMP budget on the dest), then, with p1, the reverse path
against its reflector (jumbo.tool.reverse) and the iperf3 legs (jumbo.tool.throughput), the
final goodbye, and the test's result (the run's kind assembles it: jumbo.tool.kinds)."""

import time

from .. import probe
from ..core import units
from ..core.resolve import ResolveError, resolve
from ..core.result import Reverse, Throughput
from . import iperf_auth, reflector_port, reverse as reverse_search, throughput
from ..core.spec.slot import START_WAIT, STATUS_BUDGET, TEARDOWN
from .slot import SCHEMA, RunError, bounded, budget_text, sleep_until


def _resolve(host, version):
    try:
        return resolve(host, version)
    except ResolveError as err:
        raise RunError(str(err))


def forward_phase(run, peer=None, starting=0.0):
    """The forward phase: (jumbo.probe.PathResult or None, error or None). The engine keeps itself
    within jumbo.probe.max_duration(spec), which the slot includes. With the dest's
    participant data (`peer`), forward probes go through its reflector (no ICMP budget
    spent on the dest; the engine falls back to echo / UDP if it does not answer)."""
    via = None
    if peer is not None and isinstance(peer.get("reflector-port"), int) \
            and isinstance(peer.get("_token"), str):
        via = {"port": peer["reflector-port"], "token": peer["_token"], "starting": starting}
    try:
        outcome = probe.measure(run.full, reflector=via)
    except probe.ProbeError as err:
        return None, str(err)
    return outcome, None


def located_peer(run, until):
    """p1's participant data with `reflector-port` (the candidate its reflector answered on)
    and `secret` (what the answer carried), or without them and with `reflector-error`,
    greeting until `until` (time.monotonic()); once found, kept for the run (a dest that
    started late is greeted again by the next phase). RunError without p1's data."""
    if getattr(run, "located", None) is not None and "reflector-port" in run.located:
        return run.located
    peer = dict(run.peer())
    peer.pop("reflector-port", None)
    ports, token = reflector_port.candidates(peer), peer.get("_token")
    try:
        dest_ip, version = _resolve(run.full.dest, run.full.ip_version)
    except RunError as err:
        peer["reflector-error"] = str(err)
        run.located = peer
        return peer
    found = None
    if ports and isinstance(token, str):
        try:
            found = reflector_port.find(dest_ip, ports, token, version, until,
                                        _source_address(run.full, version))
        except (OSError, ValueError) as err:
            peer["reflector-error"] = "cannot greet the dest's reflector: %s" % err
    if found is not None:
        peer["reflector-port"], peer["secret"] = found.port, found.secret
    elif "reflector-error" not in peer:
        peer["reflector-error"] = (
            "the dest participant's reflector did not answer on any of its %d candidate ports "
            "at %s (dest not running the tool, UDP %s filtered, or this node is not the "
            "source address it expects)" % (len(ports), dest_ip, _port_span(ports)))
    run.located = peer
    return peer


def _port_span(ports):
    return "%d-%d" % (min(ports), max(ports)) if ports else "ports"


def run_source(run):
    sleep_until(run.start)
    diags = []
    forward, forward_error = run.kind.forward(run)
    reverse, legs, peer_error = None, None, None
    if run.two:
        reverse, legs, peer_error = _with_dest(run, forward, diags)
    result = run.kind.assemble(run, forward, forward_error, reverse, legs, peer_error)
    diags.append("phase budget: %s" % budget_text(run.budget))
    diags.append("run took %.1f s of a %d s slot" % (time.time() - run.start, run.slot))
    if result.diags:
        diags.insert(0, result.diags)
    result.diags = "; ".join(diags)
    return {"schema": SCHEMA, "succeeded": bool(result.succeeded), "result": result.as_json(),
            "error": result.error, "diags": result.diags}


def forward_bounded(run):
    """A jumbo-throughput run's forward phase: the path MTU within its budget (the legs
    still run when it runs out)."""
    return bounded(
        run, run.budget["forward"], forward_phase,
        "the path MTU was not measured within its %g s budget: the jumbo leg tries 9000 "
        "and the stall check decides" % run.budget["forward"])


def forward_early(run):
    """A pmtu run's forward phase: through p1's reflector when p1 takes part and the slot has
    room for its start-up."""
    early_peer = None
    needed = sum(run.budget.values())
    if run.two and run.end - run.start >= needed:
        # Forward probes go through p1's reflector: p0 greets its candidate ports from
        # the start and through p1's start-up time (the START_WAIT the slot already
        # has), so a run with both nodes up probes at once. A slot shorter than the
        # budget (a clock that jumped) has no room for it: then the forward phase probes
        # single-ended.
        try:
            early_peer = located_peer(
                run, time.monotonic() + max(0.0, run.start + START_WAIT - time.time()) + 1.0)
        except RunError:
            early_peer = None  # reported below
    return forward_phase(run, early_peer, 0.0)


def _dest_address(run, forward):
    """(dest ip or None, version, error or None): as the forward phase reached it."""
    dest_ip, version, error = None, None, None
    if forward is not None and forward.dest_ip:
        dest_ip, version = forward.dest_ip, forward.ip_version
    if dest_ip is None:
        try:
            dest_ip, version = _resolve(run.full.dest, run.full.ip_version)
        except RunError as err:
            error = str(err)
    version = 6 if version == 6 or (dest_ip and ":" in dest_ip) else 4
    return dest_ip, version, error


def greet_window(run, now=None):
    """Seconds p0 may go on greeting p1's reflector before the phases with p1: HELLO_WINDOW,
    or up to the end the slot planned for the forward phase when it ended early. A dest whose
    tool started late (a loaded node: seen at load 45 in the mesh lab, where 2.5 s was not
    enough) is then still met inside the slot, which is never lengthened: the window never
    reaches into the time the reverse search, the legs and the goodbye were given."""
    now = time.time() if now is None else now
    budget = run.budget
    left = run.end - TEARDOWN - now
    base = min(reverse_search.HELLO_WINDOW, left)
    unused = budget["start"] + budget["forward"] - (now - run.start)
    later = budget["reverse"] + budget["throughput"] + budget["end"] - TEARDOWN
    return max(0.0, base, min(unused, left - later))


def _with_dest(run, forward, diags):
    """The phases with p1 (reverse, legs) and the goodbye: (reverse, legs, peer error)."""
    # Give p1 its start-up time (and clock skew) before talking to it, unless its
    # reflector already answered the forward probes.
    if not (forward is not None and forward.method == "reflector"):
        sleep_until(run.start + START_WAIT)
    try:
        peer, peer_error = located_peer(run, time.monotonic() + greet_window(run)), None
    except RunError as err:
        peer, peer_error = None, str(err)
    dest_ip, version, error = _dest_address(run, forward)
    peer_error = peer_error or error
    if peer is None or dest_ip is None:
        if run.full.reverse:
            return (Reverse.not_measured(peer_error or "the dest participant is not available"),
                    None, peer_error)
        return None, None, peer_error
    path_mtu = forward.path_mtu if forward is not None else None
    reverse = _reverse_phase(run, peer, dest_ip, version, path_mtu) if run.full.reverse \
        else None
    legs = run.kind.legs(run, peer, dest_ip, version, forward)
    diags.extend(getattr(legs, "open_notes", None) or [])
    if not run.full.reverse and isinstance(peer.get("reflector-port"), int):
        _goodbye(run, peer, dest_ip, version, diags)
    return reverse, legs, peer_error


def _reverse_phase(run, peer, dest_ip, version, path_mtu):
    try:
        return _reverse(run, peer, dest_ip, version, path_mtu)
    except Exception as err:  # noqa: BLE001 - keep the forward answer
        return Reverse.not_measured("reverse phase failed: %s: %s" % (type(err).__name__, err))


def legs_phase(run, peer, dest_ip, version, forward):
    """The throughput legs (a jumbo-throughput run): their Throughput, never an exception."""
    path_mtu = forward.path_mtu if forward is not None else None
    try:
        return _throughput(run, peer, dest_ip, version, forward, path_mtu)
    except Exception as err:  # noqa: BLE001 - keep the forward answer
        return Throughput.failed("throughput phase failed: %s: %s" % (type(err).__name__, err))


def _goodbye(run, peer, dest_ip, version, diags):
    """Tell p1's reflector we are done (its STATUS answer carries its report)."""
    goodbye = reverse_search.say_goodbye(
        dest_ip, peer.get("reflector-port"), peer.get("_token") or "0" * 32, version,
        time.monotonic() + min(STATUS_BUDGET, max(0.0, run.end - time.time() - 1.0)))
    if goodbye is None:
        diags.append("the dest's reflector did not answer the final STATUS")


def _reverse(run, peer, dest_ip, version, path_mtu):
    port, token = peer.get("reflector-port"), peer.get("_token")
    if not isinstance(port, int) or not isinstance(token, str):
        return Reverse.not_measured(
            peer.get("reflector-error")
            or "participant data of the dest lacks the reflector ports or token")
    budget = run.budget["reverse"]
    deadline = time.monotonic() + max(0.0, min(budget, run.end - TEARDOWN - time.time()
                                               - run.budget["throughput"]))
    timeout = units.duration_seconds(run.full.timeout or "PT1S")
    try:
        return reverse_search.measure_reverse(
            dest_ip, port, token, version, forward_mtu=path_mtu,
            min_size=run.full.min_mtu, max_size=run.full.max_mtu,
            timeout=timeout, deadline=deadline, flows=run.full.flows or 1,
            source=_source_address(run.full, version))
    except ValueError as err:
        return Reverse.not_measured(str(err))


def _source_address(spec, version):
    """The spec's `source` as an address of the probing family, or None."""
    if not spec.source:
        return None
    try:
        return _resolve(spec.source, version)[0]
    except RunError:
        return None


def _throughput(run, peer, dest_ip, version, forward, path_mtu):
    """The legs' Throughput (None when run_legs gave nothing); `open_notes` says what a peer
    can do when the legs do not authenticate (for diags, not the result)."""
    port = peer.get("iperf3-port")
    if not isinstance(port, int):
        return Throughput.failed("participant data of the dest lacks the iperf3 port")
    deadline = run.end - TEARDOWN
    local_mtu = forward.local_mtu if forward is not None else None
    auth, why = iperf_auth.decide(run.data, peer.get("secret"))
    if auth is not None and not peer.get("secret"):
        # The dest keys the legs' password with the secret its reflector sends: without it
        # every leg would be refused.
        return Throughput.failed(
            "no leg ran: %s (the legs' password needs the secret the reflector sends)"
            % (peer.get("reflector-error") or "no secret from the dest"))
    with iperf_auth.Credentials(auth, server=False) as cred:
        result = throughput.run_legs(run.full, dest_ip, port, path_mtu, version,
                                     deadline=deadline, local_mtu=local_mtu, auth=cred)
    if result is None:
        return None
    # The legs' summary (jumbo.tool.throughput.summary) is still built as its JSON object.
    legs = Throughput.from_json(iperf_auth.explain(result))
    if why is not None:
        legs.open_notes = iperf_auth.open_notes(why, dest_ip)
    return legs
