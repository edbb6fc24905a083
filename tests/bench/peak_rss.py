#!/usr/bin/env python3
"""peak_rss.py OUT CMD...: runs CMD (stdin/stdout inherited) and writes to
OUT the peak resident set of CMD's own process (VmHWM, KiB), read from
/proc while it runs: /usr/bin/time would also count its children (git
cat-file maps whole packs).

peak_rss.py --tree OUT [--wall FILE] CMD...: the same for CMD and every
process under
it (a pipeline run by `bash -c`, migrate run's git children), one line
per kind of process, "KiB NAME", largest first; NAME is the program and, for
git, its command ("git fast-import"), so the lines of two runs compare.
A process that lives less than the 0.1 s between two looks is not seen
(VmHWM is a high-water mark: one look near the end finds the peak).
--wall FILE: CMD's wall time in seconds, from its start to its end (this
script's own start left out)."""
import os, subprocess, sys, time


def hwm(pid):
    """The process's VmHWM in KiB, or 0 when it is gone (or a thread)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def name(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    if not argv or not argv[0]:
        return None
    prog = os.path.basename(argv[0].decode(errors="replace"))
    if prog == "git":
        words = [a.decode(errors="replace") for a in argv[1:] if a]
        # the command is the first word that is no option ("-C DIR")
        i = 0
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in ("-C", "-c") else 1
        if i < len(words):
            prog += " " + words[i]
    elif prog in ("python3", "bash", "sh") and len(argv) > 1 and argv[1] and not argv[1].startswith(b"-"):
        prog = os.path.basename(argv[1].decode(errors="replace"))
    if prog.startswith("git-") and prog != "git-lfs":
        prog = "git " + prog[4:]  # git-filter-repo run by git or alone
    return prog


def children(pid):
    """The children of pid (of each of its threads), from
    /proc/PID/task/TID/children: no walk over every process of the
    machine, so the looking costs little next to what it measures."""
    kids = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return kids
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids.extend(int(k) for k in f.read().split())
        except OSError:
            pass
    return kids


def main():
    tree = sys.argv[1] == "--tree"
    args = sys.argv[2:] if tree else sys.argv[1:]
    out, cmd, wall = args[0], args[1:], None
    if tree and cmd[:1] == ["--wall"]:
        wall, cmd = cmd[1], cmd[2:]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd)
    peak = 0
    peaks = {}  # name -> KiB
    names = {}  # pid -> name
    seen = {}  # pid -> looks at its name so far
    while p.poll() is None:
        if not tree:
            peak = max(peak, hwm(p.pid))
        else:
            todo = [p.pid]
            while todo:
                pid = todo.pop()
                todo.extend(children(pid))
                n = names.get(pid)
                if seen.get(pid, 0) < 3:  # it may exec in its first looks
                    n = name(pid) or n
                    seen[pid] = seen.get(pid, 0) + 1
                if n is None:
                    continue
                names[pid] = n
                peaks[n] = max(peaks.get(n, 0), hwm(pid))
        time.sleep(0.1 if tree else 0.02)
    if wall:
        with open(wall, "w") as f:
            f.write("%.3f\n" % (time.monotonic() - t0))
    with open(out, "w") as f:
        if not tree:
            f.write("%d\n" % peak)
        for n, kib in sorted(peaks.items(), key=lambda kv: -kv[1]):
            if kib and n not in ("bash", "sh", "time"):
                f.write("%d %s\n" % (kib, n))
    sys.exit(p.returncode)


main()
