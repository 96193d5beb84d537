"""What the demo runs: one Task per directed pair (its pmtu run and, on a few pairs, its
paired jumbo-throughput Run), the plan that makes them, and the interrupt that stops them."""

import uuid

from . import mesh

# Pairs that also measure the reverse path (the far end takes part): the asymmetric site
# both ways, and a symmetric pair for contrast.
REVERSE_PAIRS = (("cern", "bnl"), ("bnl", "cern"), ("cern", "nikhef"), ("tokyo", "bnl"))


class Interrupted(BaseException):
    """SIGTERM/SIGHUP: handled like Ctrl-C (a BaseException, so no `except Exception` in a
    stage swallows it)."""


# The paired 1500/9000 throughput is its own exclusive test (pmtu runs in the background).
PAIR_TEST = "jumbo-throughput"


class Run(object):
    """One test's run on a pair: its type and spec, what the plugins made of it (participants,
    merged result, each participant's output, the error that stopped it) and the identifiers
    its archived record gets."""

    def __init__(self, test_type, spec):
        self.test_type = test_type
        self.spec = spec
        self.participants = self.result = self.outputs = self.error = None
        self.task_uuid = str(uuid.uuid4())
        self.run_uuid = str(uuid.uuid4())


class Task(Run):
    """One directed pair: its pmtu run, its checks, and the paired 1500/9000 throughput run
    right after it on the same pair as its own (exclusive) test, jumbo-throughput: `paired`,
    a Run (None when this pair has none)."""

    def __init__(self, number, source, dest, spec):
        super(Task, self).__init__("pmtu", spec)
        self.number = number
        self.source = source
        self.dest = dest
        self.paired = None
        self.checks = []
        self.archived = self.start = self.end = self.elapsed = None

    def runs(self):
        return [self] + ([self.paired] if self.paired is not None else [])

    @property
    def pair_result(self):
        """The paired throughput's merged result (None when there is none)."""
        return self.paired.result if self.paired is not None else None

    @property
    def pair(self):
        return (self.source, self.dest)

    def phases(self):
        what = ["forward path MTU (%d flows%s)" % (
            self.spec["flows"], ", through the dest's reflector" if self.spec.get("reflector")
            else "")]
        if self.spec.get("reverse"):
            what.append("reverse path")
        if self.paired is not None:
            what.append("then jumbo-throughput: 1500/9000 throughput, ABBA")
        return ", ".join(what)


def plan(args, pairs):
    """The tasks for these directed pairs: the shipped template's pmtu spec on each, the
    reverse path on REVERSE_PAIRS, the paired throughput on a few."""
    throughput_pairs = set()
    if not args.no_throughput:
        wanted = [("cern", "nikhef")] if args.quick else \
            [("cern", "tokyo"), ("cern", "nikhef"), ("tokyo", "cern")]
        throughput_pairs = set(p for p in wanted if p in pairs)
    tasks = []
    # The shipped template's own pmtu spec (through the dest's reflector, its flows).
    template = mesh.template_pmtu_spec(args.ip_version)
    for number, (source, dest) in enumerate(pairs, start=1):
        spec = dict(template, schema=1, source=source, dest=dest)
        if args.flows is not None:
            spec["flows"] = args.flows
        if args.ip_version == 6:
            # The lab names each host's IPv6 address SITE6.
            spec.update({"source": source + "6", "dest": dest + "6"})
        # The reverse path needs the far end as a participant: ask for it where paths
        # are asymmetric in the mesh (bnl) and on a couple of others for contrast.
        if (source, dest) in REVERSE_PAIRS:
            spec["reverse"] = True
        task = Task(number, source, dest, spec)
        if (source, dest) in throughput_pairs:
            task.paired = Run(PAIR_TEST, dict(
                ((k, spec[k]) for k in ("source", "dest", "ip-version") if k in spec),
                schema=1, duration="PT2S", omit="PT0S", rounds=1, order="abba"))
        tasks.append(task)
    return tasks


def node(host):
    """Lab node of a participant: the site name (host names are site names; "cern6" is the
    IPv6 name of cern)."""
    if host not in mesh.SITES and host.endswith("6") and host[:-1] in mesh.SITES:
        return host[:-1]
    return host
