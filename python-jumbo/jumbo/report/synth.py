"""A synthetic mesh with a known truth: the history the report's tests and benchmark load.

Sites, hosts and links are data; `Mesh.truth(src, dst, day)` says what a perfect `pmtu`
measurement of that path on that day returns, and `Mesh.records()` emits one adoption record
(jumbo.record.FIELDS) per measurement, plus latency results (RTT, loss) and paired-throughput
gains on some paths. The test mesh (`Mesh.small()`) has one instance of every case the report
must see:

  SITE-A, SITE-F   healthy: host MTU 9000, 9000 end to end (intra- and inter-site)
  SITE-B           hosts configured at 1500 (a configuration problem, both directions)
  SITE-C <-> SITE-D  both healthy, but the core link between them (198.19.0.2) is 1500:
                   one shared hop explains 2x2x2 failing paths
  SITE-E           its firewall (198.18.5.2) has IP MTU 1500 and drops ICMP "too big" from
                   outside: inbound paths are black holes, outbound ones simply 1500
  a partial (per-flow) black hole A/1 -> F/1, a regression A/0 -> F/0 on `regress_day`
  (9000 -> 1500), and a flapping path A/0 -> C/0 (9000 on even days, 1500 on odd days)
"""

import datetime
import hashlib

from jumbo.record import FIELDS

TARGET = 9000
CORE_OK = "198.19.0.1"
CORE_SMALL = "198.19.0.2"


class Host(object):
    def __init__(self, name, ip, site, mtu, index):
        self.name, self.ip, self.site, self.mtu, self.index = name, ip, site, mtu, index


class Mesh(object):
    def __init__(self, sites, hosts_per_site, days=14, start="2026-11-01", runs_per_day=1,
                 config_1500=(), small_core=(), firewalled=(), seed=7, special=True,
                 label_sites=True):
        """sites: list of site names; config_1500: sites whose hosts run MTU 1500; small_core:
        pairs of sites whose core link is 1500; firewalled: sites behind a 1500 firewall that
        drops ICMP too-big from outside."""
        self.sites = list(sites)
        self.days = days
        self.start = datetime.datetime.strptime(start, "%Y-%m-%d")
        self.runs_per_day = runs_per_day
        self.config_1500 = set(config_1500)
        self.small_core = set(frozenset(p) for p in small_core)
        self.firewalled = set(firewalled)
        self.seed = seed
        self.label_sites = label_sites
        self.hosts = []
        for s, site in enumerate(self.sites):
            for h in range(hosts_per_site):
                name = "ps%d.%s.example" % (h, site.lower())
                ip = "198.18.%d.%d" % (s + 1, 10 + h) if s < 250 else "198.19.%d.%d" % (s - 249, 10 + h)
                self.hosts.append(Host(name, ip, site, 1500 if site in self.config_1500 else 9000,
                                       s * 1000 + h))
        self.by_name = {h.name: h for h in self.hosts}
        self.special = {}
        if special and len(self.sites) >= 6 and hosts_per_site >= 2:
            a0, a1 = self.host(self.sites[0], 0), self.host(self.sites[0], 1)
            f0, f1 = self.host(self.sites[5], 0), self.host(self.sites[5], 1)
            c0 = self.host(self.sites[2], 0)
            self.special = {
                "partial": (a1.name, f1.name),
                "regress": (a0.name, f0.name),
                "flap": (a0.name, c0.name),
            }
        self.regress_day = max(1, days - 4)

    @classmethod
    def small(cls, days=14, **kwargs):
        return cls(["SITE-A", "SITE-B", "SITE-C", "SITE-D", "SITE-E", "SITE-F"], 2, days=days,
                   config_1500=["SITE-B"], small_core=[("SITE-C", "SITE-D")],
                   firewalled=["SITE-E"], **kwargs)

    @classmethod
    def large(cls, hosts=300, hosts_per_site=5, days=12, **kwargs):
        n_sites = hosts // hosts_per_site
        names = ["S%03d" % i for i in range(n_sites)]
        return cls(names, hosts_per_site, days=days,
                   config_1500=names[1:n_sites:9],
                   small_core=[(names[i], names[i + 1]) for i in (2, 7) if i + 1 < n_sites],
                   firewalled=names[4:n_sites:11], **kwargs)

    def host(self, site, index):
        return self.by_name["ps%d.%s.example" % (index, site.lower())]

    def pairs(self):
        for a in self.hosts:
            for b in self.hosts:
                if a is not b:
                    yield a, b

    def site_ip(self, site, last):
        s = self.sites.index(site)
        return "198.18.%d.%d" % (s + 1, last) if s < 250 else "198.19.%d.%d" % (s - 249, last)

    # -- the truth --------------------------------------------------------------------------
    def truth(self, a, b, day=None):
        """What a perfect pmtu measurement of a -> b returns on `day` (default: the last day)."""
        if isinstance(a, str):
            a, b = self.by_name[a], self.by_name[b]
        day = self.days - 1 if day is None else day
        hops = []
        mtu_limit = min(a.mtu, b.mtu)
        pmtud, bh = "ok", None
        partial = False
        if a.site == b.site:
            hops = [{"ttl": 1, "ip": self.site_ip(a.site, 1), "mtu": a.mtu},
                    {"ttl": 2, "ip": b.ip, "mtu": b.mtu}]
        else:
            ttl = 1
            if a.site in self.firewalled:
                hops.append({"ttl": ttl, "ip": self.site_ip(a.site, 2), "mtu": 1500})
                ttl += 1
                mtu_limit = min(mtu_limit, 1500)
            hops.append({"ttl": ttl, "ip": self.site_ip(a.site, 1), "mtu": a.mtu})
            ttl += 1
            small = frozenset((a.site, b.site)) in self.small_core
            core = CORE_SMALL if small else CORE_OK
            hops.append({"ttl": ttl, "ip": core, "mtu": 1500 if small else 9000})
            ttl += 1
            if small:
                mtu_limit = min(mtu_limit, 1500)
            hops.append({"ttl": ttl, "ip": self.site_ip(b.site, 1), "mtu": 9000})
            ttl += 1
            if b.site in self.firewalled:
                fw = self.site_ip(b.site, 2)
                hops.append({"ttl": ttl, "ip": fw, "mtu": 1500})
                if mtu_limit > 1500:
                    pmtud, bh = "blackhole", {"ttl": ttl, "ip": fw, "size": mtu_limit}
                mtu_limit = min(mtu_limit, 1500)
                ttl += 1
            hops.append({"ttl": ttl, "ip": b.ip, "mtu": b.mtu})
        pair = (a.name, b.name)
        if pair == self.special.get("regress") and day >= self.regress_day:
            mtu_limit = min(mtu_limit, 1500)
            hops[1] = dict(hops[1], mtu=1500)
        if pair == self.special.get("flap") and day % 2 == 1:
            mtu_limit = min(mtu_limit, 1500)
            hops[1] = dict(hops[1], mtu=1500)
        if pair == self.special.get("partial"):
            partial = True
            pmtud = "blackhole"
            bh = {"ttl": 2, "ip": CORE_OK, "size": 9000}
        if pmtud == "ok" and mtu_limit >= TARGET:
            pmtud = "not-needed" if a.mtu == mtu_limit else "ok"
        return {"path_mtu": mtu_limit, "local_mtu": a.mtu, "pmtud": pmtud, "partial": partial,
                "blackhole": bh, "hops": hops}

    def capable(self, a, b, day=None):
        """Ground truth of the report's 'capable': target both ways, no black hole either way."""
        f, r = self.truth(a, b, day), self.truth(b, a, day)
        return (f["path_mtu"] >= TARGET and r["path_mtu"] >= TARGET
                and f["pmtud"] != "blackhole" and r["pmtud"] != "blackhole"
                and not f["partial"] and not r["partial"])

    def rtt(self, a, b):
        sa, sb = self.sites.index(a.site), self.sites.index(b.site)
        return 0.0005 if sa == sb else 0.002 + 0.004 * abs(sa - sb) % 0.150

    def loss(self, a, b):
        sa, sb = self.sites.index(a.site), self.sites.index(b.site)
        return 0.0 if sa == sb else 1e-5 * (1 + (sa + sb) % 5)

    def has_throughput(self, a, b):
        return a.site != b.site and (a.index + b.index) % 4 == 0

    def gain(self, a, b):
        return round(1.0 + ((a.index * 7 + b.index * 3) % 30) / 10.0, 2)

    # -- the records ------------------------------------------------------------------------
    def _time(self, day, run, a, b):
        offset = (a.index * 131 + b.index * 17) % 3600
        step = 86400 // self.runs_per_day
        t = self.start + datetime.timedelta(days=day, seconds=run * step + offset)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _base(self, test_type, a, b, start, tag):
        rec = dict.fromkeys(FIELDS)
        href = "https://%s/pscheduler/tasks/%s/runs/%s" % (
            a.name, tag, hashlib.sha1(("%s|%s|%s|%s" % (test_type, a.name, b.name, start))
                                      .encode()).hexdigest()[:16])
        rec.update(id=hashlib.sha1(("run:" + href).encode()).hexdigest(), run_href=href,
                   task_href=href.rsplit("/runs/", 1)[0], test_type=test_type, start=start,
                   source=a.name, dest=b.name, source_ip=a.ip, dest_ip=b.ip, ip_version=4,
                   succeeded=True)
        if self.label_sites:
            rec.update(source_site=a.site, dest_site=b.site)
        return rec

    def pmtu_record(self, a, b, day, run=0):
        t = self.truth(a, b, day)
        r = self.truth(b, a, day)
        rec = self._base("pmtu", a, b, self._time(day, run, a, b), "pmtu")
        bh = t["blackhole"] or {}
        rec.update(tool="jumbocheck", path_mtu=t["path_mtu"], local_mtu=t["local_mtu"],
                   target_mtu=TARGET, jumbo=t["path_mtu"] >= TARGET, pmtud=t["pmtud"],
                   partial=t["partial"], blackhole_ttl=bh.get("ttl"), blackhole_ip=bh.get("ip"),
                   blackhole_size=bh.get("size"), hops=t["hops"], flows=4 if t["partial"] else 1)
        # Half of the records carry the reverse direction measured by the reflector.
        if (a.index + b.index) % 2 == 0:
            rec.update(reverse_path_mtu=r["path_mtu"], reverse_pmtud=r["pmtud"])
        return rec

    def records(self, pmtu=True, extras=True, limit=None):
        """Every record of the history, day by day (a generator)."""
        n = 0
        for day in range(self.days):
            for run in range(self.runs_per_day):
                for a, b in self.pairs():
                    if limit is not None and n >= limit:
                        return
                    if pmtu:
                        yield self.pmtu_record(a, b, day, run)
                        n += 1
            if not extras:
                continue
            for a, b in self.pairs():
                if a.site == b.site or (a.index + b.index + day) % 7:
                    continue
                rec = self._base("latency", a, b, self._time(day, 0, a, b), "lat")
                rec.update(tool="powstream", rtt=self.rtt(a, b) + 0.0001 * day, loss=self.loss(a, b))
                yield rec
            if day == self.days - 1:
                for a, b in self.pairs():
                    if self.has_throughput(a, b) and self.capable(a, b, day):
                        rec = self._base("jumbo-throughput", a, b, self._time(day, 0, a, b),
                                         "thr")
                        g = self.gain(a, b)
                        rec.update(tool="jumbocheck", throughput_standard=2e9,
                                   throughput_jumbo=2e9 * g, gain=g)
                        yield rec

    # -- the expected report headline ------------------------------------------------------
    def expected(self, day=None):
        pairs = list(self.pairs())
        capable = sum(1 for a, b in pairs if self.capable(a, b, day))
        blackholes = sorted((a.name, b.name) for a, b in pairs
                            if self.truth(a, b, day)["pmtud"] == "blackhole")
        configured = sum(1 for h in self.hosts if h.mtu >= TARGET)
        return {"paths": len(pairs), "capable_paths": capable,
                "capable": capable / float(len(pairs)), "blackholes": blackholes,
                "hosts": len(self.hosts), "configured_hosts": configured}


def write_sqlite_fast(path, records, batch=50000):
    """Bulk-load records into the embedded store in one transaction (benchmark speed), using the
    store's own schema and row layout."""
    from jumbo.stores import open_store
    from jumbo.stores import sqlite as sq
    store = open_store("sqlite:///" + path)
    store.close()
    import sqlite3
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    latest = {}
    rows = []
    from jumbo import record as rmod
    n = 0
    for rec in records:
        rows.append(sq.row_values(rec, None))
        key = rmod.path_key(rec)
        best = latest.get(key)
        if best is None or (rec["start"], rec["id"]) >= (best[5], best[6]):
            latest[key] = (key, rec["source"], rec["dest"], rec["ip_version"], rec["test_type"],
                           rec["start"], rec["id"])
        if len(rows) >= batch:
            conn.executemany(sq._INSERT, rows)
            n += len(rows)
            rows = []
    if rows:
        conn.executemany(sq._INSERT, rows)
        n += len(rows)
    conn.executemany(sq._LATEST, list(latest.values()))
    conn.execute("COMMIT")
    conn.close()
    return n
