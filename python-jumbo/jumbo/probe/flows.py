"""The flows' size searches, run together over the rounds: each flow searches its own
5-tuple's path MTU (search.py), they share what they learn (a size proven to cross, black
holes, loss), and on a single-ended run the flows that need the dest's rate-limited answers
are planned against its budget (budget.py) and the search deadline: served in order, and a
flow the answers left cannot finish is never started (reported as not measured)."""

import time

from . import budget
from .search import SizeSearch
from .trains import LIMITED_TRAIN
from .timing import CONTACT_SECONDS

UDP_UNANSWERED = ("the dest answered ICMP echo but none of the UDP probes within %.0f s (a "
                  "firewall dropping UDP to closed ports?): the UDP flows stay unconfirmed"
                  % CONTACT_SECONDS)


class FlowSearches(object):
    """The run's flows and their searches, over `rounds` (the run's Rounds: its clock, its
    answers, the dest's budget). `target`: the spec's target MTU; `deadline`: when the
    searches end (the TTL scans' time comes after it); `diags`: the run's list of notes,
    in order. The run gives the sizes to search once it knows the egress MTU (`sized`), and
    `contact_start` when probing begins (the time the dest has had to answer at all)."""

    def __init__(self, rounds, target, deadline, diags):
        self.rounds = rounds
        self.target = target
        self.deadline = deadline
        self.diags = diags
        self.local_max = self.min_size = None
        self.contact_start = rounds.start
        self.flows = []  # every flow of the measurement: they share what they learn
        self.served = set()  # ids of the rate-limited flows given answers after the first round
        self.left_out = set()  # ids of those the budget cannot finish: never started

    def sized(self, local_max, min_size):
        """The sizes every flow searches: from `min_size` to `local_max`."""
        self.local_max = local_max
        self.min_size = min_size

    def new_search(self, arrival_limited):
        return SizeSearch(self.local_max, self.min_size, version=self.rounds.version,
                          arrival_limited=arrival_limited, target=self.target,
                          train=LIMITED_TRAIN if arrival_limited else 1)

    def search_rounds(self, flows, rounds):
        """Rounds until every flow is done; flows whose arrivals are rate-limited take part
        only as far as the dest's answer budget allows (one arrival each)."""
        while time.monotonic() < self.deadline:
            active = self._active(flows, rounds)
            if not active:
                return
            items = self._round_items(active)
            if not items:
                return
            self.rounds.round(items, pace=False)
            self.share(self.flows or flows)

    def _active(self, flows, rounds):
        """The flows that take part in the next round (none: the searches stop): those not
        done within `rounds` and not left out; none once the dest has not answered anything
        for CONTACT_SECONDS (no point waiting for the time bound); not the rate-limited ones
        once the dest proved to drop UDP (UDP_UNANSWERED)."""
        active = [f for f in flows if not f.search.done() and f.search.rounds < rounds
                  and id(f) not in self.left_out]
        if not active:
            return []
        if not self.rounds.answered and \
                time.monotonic() - self.contact_start > CONTACT_SECONDS:
            return []
        if any(f.transport.arrival_limited for f in active) and self.rounds.udp_unanswered():
            self.note(UDP_UNANSWERED)
            active = [f for f in active if not f.transport.arrival_limited]
        return active

    def _round_items(self, active):
        """The next round's (flow, size, None) items: every active flow's planned sizes
        where answers are free or its round needs no answer from the dest; of the others,
        those the dest's answer budget serves (_budgeted), the rest keep their plan."""
        for flow in active:
            if not flow.transport.arrival_limited:
                flow.search.train = self.rounds.free_train(flow.search)
        for flow in active:
            if flow.plan is None:
                flow.plan = flow.search.next_round()
        free = [f for f in active if not f.transport.arrival_limited
                or not self._needs_answer(f)]
        limited = [f for f in active if f not in free]
        if limited:
            limited = self._budgeted(limited, free)
        items = []
        for flow in free + limited:
            items.extend((flow, size, None) for size in flow.plan or [])
            flow.plan = None
        return items

    def _budgeted(self, limited, free):
        """The rate-limited flows that get one of the dest's answers this round. Each needs
        one answer: as many flows as its budget holds, at least one (after waiting for it).
        Flows are served in their order, so they finish one after another: a run that
        runs out of time has whole flows and flows never started, not many half-measured
        ones. A flow not started yet starts only when the answers left before the search
        deadline (budget now + refill) cover what the started ones still need and its own
        (answers_needed); otherwise it is not measured, and the result says so."""
        bucket = self.rounds.bucket
        started = [f for f in limited if id(f) in self.served]
        waiting = [f for f in limited if id(f) not in self.served]
        if waiting:
            left = bucket.affordable(self.deadline - time.monotonic())
            need = sum(budget.answers_needed(f.search) for f in started)
            for flow in waiting:
                need += budget.answers_needed(flow.search)
                if need > left and (started or flow is not waiting[0]):
                    # For good: a flow started later would be cut short, half-measured.
                    self.left_out.add(id(flow))
            limited = [f for f in limited if id(f) not in self.left_out]
        level = bucket.level()
        if level < 1.0 and not free:
            self.rounds.sleep_until(time.monotonic() + bucket.seconds_until(1.0))
            level = bucket.level()
        count = max(1, int(level)) if not free else max(0, int(level))
        chosen = limited[:count]
        self.served.update(id(f) for f in chosen)
        return chosen

    def note(self, text):
        if text not in self.diags:
            self.diags.append(text)

    @staticmethod
    def share(flows, priors=False):
        """What each flow's search learns from the others of the run: their confirmed
        answers (as priors once it has searched itself, or when `priors`), their black
        holes, the largest size proven to cross, and the loss they saw."""
        known = set(f.search.result() for f in flows if f.search.done())
        holes = set(f.search.hole() for f in flows if f.search.done()) - {None}
        for flow in flows:
            search = flow.search
            others = [f.search for f in flows if f is not flow]
            search.losses_elsewhere = sum(o.losses for o in others)
            search.arrivals_elsewhere = sum(o.arrivals for o in others)
            crossed = [o.lo for o in others if o.lo is not None]
            search.crossed_elsewhere = max(crossed) if crossed else None
            if known:
                search.confirmed_elsewhere |= known
                search.holes_elsewhere |= holes
                if priors or search.rounds:
                    search.priors |= known

    def first_round(self, leads, others):
        """The first round: each of `others` (the flows that will verify the leads' answer)
        sends the local MTU ahead of the leads' first rounds (with UDP, the lead's whole
        train, see below). On a clean path every flow is done at once, each with the first
        answer it gets: a rate-limited dest's budget goes to answers that settle a flow, not
        to sizes below one that crossed."""
        items = []
        plans = [(flow, flow.search.next_round()) for flow in leads]
        lead_plan = plans[0][1] if plans else []
        shared = len(leads) == 1 and leads[0].transport.arrival_limited
        for flow in others:
            flow.search.rounds += 1
            # Only UDP: every flow sends the plateau part of the lead's train, and the round
            # goes out largest size first across the flows. The dest's answers go to the first arrivals, one
            # per flow at the size that crosses: a fresh budget (burst of 6) settles several
            # flows in this one round instead of one flow a second.
            if shared:
                # The train's plateau sizes (and the size above each), the local MTU and the
                # minimum: what settles the usual paths; odd sizes are the lead's to find.
                marks = flow.search.plateaus | set(p + 1 for p in flow.search.plateaus)
                plan = [size for size in lead_plan if size in marks
                        or size in (self.local_max, self.min_size)]
            else:
                plan = [self.local_max]
            plans.append((flow, plan))
        if shared:
            order = dict((id(flow), index) for index, (flow, _plan) in enumerate(plans))
            for flow, plan in plans:
                items.extend((flow, size, None) for size in plan)
            items.sort(key=lambda item: (-item[1], order[id(item[0])]))
        else:
            for flow, plan in plans[len(leads):] + plans[:len(leads)]:
                items.extend((flow, size, None) for size in plan)
        self.rounds.round(items, pace=False)

    @staticmethod
    def _needs_answer(flow):
        """Whether the flow's planned round can only be read from the dest's (rate-limited)
        answer: some size in it may reach the dest. Sizes proven to fail (a PTB, or
        silences the search holds as failures) meet a router or nothing, not the dest."""
        search = flow.search
        for size in flow.plan or []:
            if size in search.answered or search.covered(size):
                continue
            if size in search.failed and search.votes.get(size):
                continue
            return True
        return False
