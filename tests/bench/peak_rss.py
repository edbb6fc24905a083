#!/usr/bin/env python3
"""peak_rss.py OUT CMD...: runs CMD (stdin/stdout inherited) and writes to
OUT the peak resident set of CMD's own process (VmHWM, KiB), read from
/proc while it runs: /usr/bin/time would also count its children (git
cat-file maps whole packs)."""
import subprocess, sys, time

out, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd)
peak = 0
while p.poll() is None:
    try:
        with open("/proc/%d/status" % p.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
    except OSError:
        pass
    time.sleep(0.02)
with open(out, "w") as f:
    f.write("%d\n" % peak)
sys.exit(p.returncode)
