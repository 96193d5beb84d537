"""Where the CPU of a lab goes: per role (pScheduler's daemons, its API, PostgreSQL, the pSConfig
agent, OpenSearch, ...), from /proc, for every process in the namespaces named PREFIX-*.

    python -m lab.cpu_share [--prefix jm] [--seconds 60]

Why not the load average or a per-process sample: other work inflates the load, and the costly
processes here are short-lived (a plugin call lives under a second), so a sampler misses them.
Each live process is counted with its own CPU plus that of its children already reaped
(/proc/PID/stat utime+stime+cutime+cstime): a plugin run the runner reaped is in the runner's
figure, so the sum over live processes only grows and nothing is counted twice. Each process is
charged to its nearest ancestor with a known role (the tool a runner starts is the runner's).
"""

import argparse
import os
import subprocess
import time

TICK = os.sysconf("SC_CLK_TCK")
ROLES = (  # (substring of the command line, role), first match wins
    ("daemons/ticker", "ticker"), ("daemons/scheduler", "scheduler"),
    ("daemons/runner", "runner"), ("daemons/archiver", "archiver"),
    ("gunicorn", "api (gunicorn)"), ("postgres", "postgresql"),
    ("psconfig_pscheduler_agent", "pSConfig agent"), ("opensearch", "opensearch"),
    ("http.server", "template web server"), ("syslog_sink", "syslog sink"),
)


def _namespaces(prefix):
    inodes = {}
    for name in os.listdir("/run/netns") if os.path.isdir("/run/netns") else ():
        if name.startswith(prefix + "-"):
            inodes[os.stat(os.path.join("/run/netns", name)).st_ino] = name
    return inodes


def _stat(pid):
    with open("/proc/%s/stat" % pid) as handle:
        text = handle.read()
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state): ppid is field 4, utime..cstime fields 14-17
    return int(fields[1]), sum(int(f) for f in fields[11:15])


def _cmdline(pid):
    with open("/proc/%s/cmdline" % pid, "rb") as handle:
        return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")


def snapshot(prefix):
    """{(namespace, role): CPU seconds} over the live processes of the prefix's namespaces."""
    inodes = _namespaces(prefix)
    procs = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            namespace = inodes.get(os.stat("/proc/%s/ns/net" % pid).st_ino)
            if namespace is None:
                continue
            ppid, ticks = _stat(pid)
            procs[int(pid)] = (namespace, ppid, ticks, _cmdline(pid))
        except (OSError, ValueError):
            continue  # gone meanwhile
    totals = {}
    for pid, (namespace, ppid, ticks, cmdline) in procs.items():
        role, node = None, pid
        while node in procs and role is None:
            role = next((r for key, r in ROLES if key in procs[node][3]), None)
            node = procs[node][1]
        role = role or (cmdline.split(" ")[0].rsplit("/", 1)[-1] or "?")
        key = (namespace, role)
        totals[key] = totals.get(key, 0.0) + ticks / float(TICK)
    return totals


def delta(before, after):
    return dict((k, after.get(k, 0.0) - before.get(k, 0.0)) for k in set(before) | set(after))


def table(change, seconds):
    by_role = {}
    for (namespace, role), cpu in change.items():
        by_role[role] = by_role.get(role, 0.0) + cpu
    lines = ["%-22s %9s %7s" % ("role (all namespaces)", "CPU s", "cores")]
    for role, cpu in sorted(by_role.items(), key=lambda kv: -kv[1]):
        lines.append("%-22s %9.1f %7.2f" % (role, cpu, cpu / seconds))
    total = sum(by_role.values())
    lines.append("%-22s %9.1f %7.2f  over %.0f s" % ("total", total, total / seconds, seconds))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(prog="python -m lab.cpu_share")
    parser.add_argument("--prefix", default="jm")
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    start, t0 = snapshot(args.prefix), time.monotonic()
    time.sleep(args.seconds)
    change, took = delta(start, snapshot(args.prefix)), time.monotonic() - t0
    print(table(change, took))
    print(subprocess.run(["uptime"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout.strip())


if __name__ == "__main__":
    main()
