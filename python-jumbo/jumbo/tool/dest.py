"""Participant 1, the dest: its reflector (UDP) for the whole run and, for the throughput
phase, one `iperf3 -s` for this run's legs; its output is {"role": "dest", "reflector": {...},
"throughput-server": {...}|null}, which merged-results folds into p0's result."""

import threading
import time

from ..core.resolve import ResolveError, resolve
from . import iperf_auth, reflector, reflector_port, throughput
from .slot import DEST_EXIT_MARGIN, SCHEMA, RunError, sleep_until


def reflector_versions(spec):
    """The families the dest's reflector listens in: the one the source will probe (its
    `dest` resolved as the source resolves it), both only when that cannot be told. A run
    of the other family at the same moment (a mesh runs v4 and v6 side by side, pmtu is a
    background test) then never finds its port taken by this one."""
    if spec.ip_version in (4, 6):
        return (spec.ip_version,)
    try:
        return (resolve(spec.dest)[1],)
    except (ResolveError, TypeError):
        return (4, 6)


def reflector_addresses(spec, versions):
    """{version: address} the reflector binds: the test's own address (the one the source
    probes), like the iperf3 server; a family whose address is not this node's (NAT) or cannot
    be told is left out, and that family then listens on every address."""
    addresses = {}
    for version in versions:
        address, _why = iperf_auth.bind_address(spec, version)
        if address is not None:
            addresses[version] = address
    return addresses


def run_dest(run):
    data = run.peer()
    ports, token = reflector_port.candidates(data), data.get("_token")
    if not ports or not isinstance(token, str):
        raise RunError("participant data of the dest lacks the reflector ports or token")
    versions = reflector_versions(run.full)
    # The run's secret: made now, known to no one else until the reflector gives it to the
    # run's source address (the legs' password is keyed with it: jumbo.tool.iperf_auth).
    secret = reflector_port.new_secret()
    server = reflector.Reflector(ports, token, versions,
                                 addresses=reflector_addresses(run.full, versions),
                                 source=reflector_port.peer_source(run.data), secret=secret)
    try:
        server.open()
    except reflector.ReflectorError as err:
        raise RunError(str(err))
    port = server.port
    deadline = run.end - DEST_EXIT_MARGIN
    iperf = {}
    try:
        thread, access_notes = run.kind.serve_legs(run, data, secret, deadline, iperf)
        # The reflector answers from now on (a little before start is harmless, and covers
        # clock skew) until p0 says it is done or the slot ends.
        server.serve(time.monotonic() + (deadline - time.time()))
        if thread is not None:
            thread.join(max(0.0, deadline - time.time()))
    finally:
        server.close()
    return _output(server.report(), iperf.get("result"), thread, access_notes, port)


def serve_legs(run, data, secret, deadline, iperf):
    """A jumbo-throughput run's iperf3 server, from the slot's start: (thread, notes on what
    its access leaves open); its result lands in iperf["result"]."""
    access, access_notes = iperf_access(run, secret.decode("ascii"))
    thread = _iperf_server(run, data.get("iperf3-port"), deadline, access, access_notes, iperf)
    return thread, access_notes


def _iperf_server(run, port, deadline, access, access_notes, iperf):
    """The iperf3 server's thread: from the slot's start; its result lands in iperf["result"]."""
    def serve():
        try:
            sleep_until(run.start)
            with iperf_auth.Credentials(access["auth"], server=True) as cred:
                iperf["result"] = throughput.serve(run.full, port, deadline,
                                                   access["address"], cred.argv)
            iperf["result"]["access"] = dict(access, auth=access["auth"] is not None,
                                             open=access_notes)
        except Exception as err:  # noqa: BLE001 - the server thread's failure becomes p1's result
            iperf["result"] = {"succeeded": False, "error": "%s: %s"
                               % (type(err).__name__, err)}

    thread = threading.Thread(target=serve)
    thread.daemon = True
    thread.start()
    return thread


def _output(report, served, thread, access_notes, port):
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


def iperf_access(run, secret):
    """({address, auth}, notes): where the dest's iperf3 server listens, whom it lets in,
    and what that leaves open (jumbo.tool.iperf_auth)."""
    address, unbound = iperf_auth.bind_address(run.full)
    auth, why = iperf_auth.decide(run.data, secret)
    if auth is not None and not iperf_auth.features()["auth"]:
        auth, why = None, "the dest's iperf3 cannot authenticate clients"
    notes = [] if why is None else iperf_auth.open_notes(why, address)
    if unbound:
        notes.append("the iperf3 server listens on all addresses: %s" % unbound)
    return {"address": address, "auth": auth}, notes
