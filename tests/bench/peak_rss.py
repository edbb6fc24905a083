#!/usr/bin/env python3
"""peak_rss.py OUT CMD...: runs CMD (stdin/stdout inherited) and writes to
OUT the peak resident set of CMD's own process (VmHWM, KiB), read from
/proc while it runs: /usr/bin/time would also count its children (git
cat-file maps whole packs).

peak_rss.py --tree OUT CMD...: the same for CMD and every process under
it (a pipeline run by `bash -c`, migrate run's git children), one line per
kind of process, "KiB NAME", largest first; NAME is the program and, for
git, its command ("git fast-import"), so the lines of two runs compare.
A process that lives less than the 20 ms between two looks is not seen."""
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


def children():
    """parent pid -> child pids, of every process now."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def main():
    tree = sys.argv[1] == "--tree"
    args = sys.argv[2:] if tree else sys.argv[1:]
    out, cmd = args[0], args[1:]
    p = subprocess.Popen(cmd)
    peak = 0
    peaks = {}  # name -> KiB
    names = {}  # pid -> name (a process execs once: read it again then)
    while p.poll() is None:
        if not tree:
            peak = max(peak, hwm(p.pid))
        else:
            kids = children()
            todo = [p.pid]
            while todo:
                pid = todo.pop()
                todo.extend(kids.get(pid, ()))
                n = name(pid) or names.get(pid)
                if n is None:
                    continue
                names[pid] = n
                peaks[n] = max(peaks.get(n, 0), hwm(pid))
        time.sleep(0.02)
    with open(out, "w") as f:
        if not tree:
            f.write("%d\n" % peak)
        for n, kib in sorted(peaks.items(), key=lambda kv: -kv[1]):
            if kib and n not in ("bash", "sh", "time"):
                f.write("%d %s\n" % (kib, n))
    sys.exit(p.returncode)


main()
