#!/usr/bin/env python3
"""peak_rss.py OUT CMD...: runs CMD (stdin/stdout inherited) and writes to
OUT the peak resident set of CMD's own process (VmHWM, KiB), read from
/proc while it runs: /usr/bin/time would also count its children (git
cat-file maps whole packs).

peak_rss.py --tree OUT [--wall FILE] [--cpu FILE] [--phases FILE] CMD...:
the same for CMD and every process under it (a pipeline run by `bash -c`,
migrate run's git children), one line per kind of process, "KiB NAME",
largest first; NAME is the program and, for git, its command ("git
fast-import"), so the lines of two runs compare.
A process that lives less than the 0.1 s between two looks is not seen
(VmHWM is a high-water mark: one look near the end finds the peak).
--wall FILE: CMD's wall time in seconds, from its start to its end (this
script's own start left out).
--cpu FILE: "USER SYS", the CPU seconds of CMD and of every process under
it that was waited for (getrusage of the children: exact, no sampling);
and FILE.each: "SECONDS NAME" per kind of process, largest first, each
process's own CPU time at the last look at it (so a little short, and a
process that lives less than 0.1 s not counted).
--phases FILE: CMD's stderr passes through this script (copied to its
own, split at \\r and \\n); each line "migrate run: WHAT ..." (or one
matching BENCH_PHASE_RE, its first group that matched the name) starts
a phase. FILE gets "SECONDS CPU NAME" per phase start, the first "0 0
start", the last "WALL CPU end": the elapsed seconds and the CPU seconds
of the process tree so far, so a phase's CPU / wall is how many cores it
kept busy. The CPU comes from a task-clock counter (perf_event_open)
that CMD and everything it starts inherit: nanoseconds, live processes
and ended ones alike. Where the kernel refuses one, from /proc/PID/stat
at the line (utime, stime and the reaped children's of every process in
the tree), which counts in ticks of 10 ms: too coarse for a phase of a
few tens of milliseconds. The thread that reads the lines, and the one
that waits for CMD's end, ask to run first when they wake (SCHED_FIFO,
when the kernel lets them: root): else, while the run keeps both cores
busy, each waits for a core (3-5 ms seen) and times the line that late,
so a busy start of a phase was counted in the phase before it."""
import ctypes, os, re, resource, struct, subprocess, sys, threading, time


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


TICK = os.sysconf("SC_CLK_TCK")


def own_cpu(pid):
    """CPU seconds of pid itself (all its threads), or None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def tree_cpu(root):
    """CPU seconds of root's tree so far: each live process's own and its
    reaped children's (a child reaped by its parent counts there)."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children(pid))
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields 14-17 of stat (utime stime cutime cstime), after "(comm)"
        total += sum(int(x) for x in fields[11:15])
    return total / TICK


class TreeClock:
    """CPU seconds of the processes this script starts (and theirs), read
    at any moment: a software task-clock counter opened on this thread
    with inherit set, so each thread and process started after it counts
    into it, live or ended; this script's own CPU is taken out."""
    NR = {"x86_64": 298, "aarch64": 241}

    def __init__(self):
        self.fd = -1
        nr = self.NR.get(os.uname().machine)
        if nr is None:
            return
        # struct perf_event_attr, its first 64 bytes (PERF_ATTR_SIZE_VER0):
        # type PERF_TYPE_SOFTWARE, config PERF_COUNT_SW_TASK_CLOCK, the
        # flag bits with inherit (bit 1) alone set: enabled at once
        attr = ctypes.create_string_buffer(struct.pack("<IIQQQQQIIQ", 1, 64, 1, 0, 0, 0, 1 << 1, 0, 0, 0), 64)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        fd = libc.syscall(ctypes.c_long(nr), attr, ctypes.c_int(0), ctypes.c_int(-1),
                          ctypes.c_int(-1), ctypes.c_ulong(0))
        self.fd = int(fd) if fd >= 0 else -1
        self.own0 = self.own()

    @staticmethod
    def own():
        me = resource.getrusage(resource.RUSAGE_SELF)
        return me.ru_utime + me.ru_stime

    def ok(self):
        return self.fd >= 0

    def read(self):
        ns = struct.unpack("<Q", os.read(self.fd, 8))[0]
        return ns / 1e9 - (self.own() - self.own0)


def prompt():
    """Makes the calling thread run as soon as it wakes (SCHED_FIFO at
    its lowest priority); where that is refused it stays as it was."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except (OSError, AttributeError):
        pass


def follow(p, t0, out, clock):
    """Copies p's stderr to ours, recording each phase line."""
    prompt()
    pat = re.compile(os.environ.get("BENCH_PHASE_RE", r"^migrate run: (.*) \.\.\.$"))
    buf = b""
    while True:
        chunk = os.read(p.stderr.fileno(), 65536)
        if not chunk:
            break
        sys.stderr.buffer.write(chunk)
        sys.stderr.flush()
        buf += chunk
        parts = re.split(rb"[\r\n]", buf)
        buf = parts.pop()
        for line in parts:
            m = pat.search(line.decode(errors="replace"))
            if m:
                # the first group that matched names the phase
                out.append((time.monotonic() - t0, clock.read() if clock.ok() else tree_cpu(p.pid),
                            next((g for g in m.groups() if g), m.group(0))))


def main():
    tree = sys.argv[1] == "--tree"
    args = sys.argv[2:] if tree else sys.argv[1:]
    out, cmd = args[0], args[1:]
    opts = {}
    while tree and cmd[:1] and cmd[0] in ("--wall", "--cpu", "--phases"):
        opts[cmd[0]], cmd = cmd[1], cmd[2:]
    wall = opts.get("--wall")
    clock = TreeClock() if "--phases" in opts else None
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE if "--phases" in opts else None)
    phases, reader = [(0.0, 0.0, "start")], None
    cpus = {}  # pid -> own CPU seconds at the last look
    if "--phases" in opts:
        reader = threading.Thread(target=follow, args=(p, t0, phases, clock))
        reader.start()
    # CMD's end, timed by a thread that waits for it: the looks below
    # come every 0.1 s, too far apart to time a run of a second or two
    ended = threading.Event()
    end = []

    def waiter():
        prompt()
        p.wait()
        end.append(time.monotonic())
        ended.set()

    threading.Thread(target=waiter, daemon=True).start()
    peak = 0
    peaks = {}  # name -> KiB
    names = {}  # pid -> name
    seen = {}  # pid -> looks at its name so far
    while not ended.is_set():
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
                if "--cpu" in opts:
                    c = own_cpu(pid)
                    if c is not None:
                        cpus[pid] = c
        ended.wait(0.1 if tree else 0.02)
    t1 = end[0]
    if reader:
        reader.join()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    if wall:
        with open(wall, "w") as f:
            f.write("%.3f\n" % (t1 - t0))
    if "--cpu" in opts:
        with open(opts["--cpu"], "w") as f:
            f.write("%.2f %.2f\n" % (ru.ru_utime, ru.ru_stime))
        each = {}
        for pid, c in cpus.items():
            each[names[pid]] = each.get(names[pid], 0) + c
        with open(opts["--cpu"] + ".each", "w") as f:
            for n, c in sorted(each.items(), key=lambda kv: -kv[1]):
                if n not in ("bash", "sh", "time"):
                    f.write("%.1f %s\n" % (c, n))
    if "--phases" in opts:
        phases.append((t1 - t0, clock.read() if clock.ok() else ru.ru_utime + ru.ru_stime, "end"))
        with open(opts["--phases"], "w") as f:
            for t, c, n in phases:
                f.write("%.4f %.4f %s\n" % (t, c, n))
    with open(out, "w") as f:
        if not tree:
            f.write("%d\n" % peak)
        for n, kib in sorted(peaks.items(), key=lambda kv: -kv[1]):
            if kib and n not in ("bash", "sh", "time"):
                f.write("%d %s\n" % (kib, n))
    sys.exit(p.returncode)


main()
