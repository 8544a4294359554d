"""time-rss.py OUTFILE CMD...: runs CMD with its stdout to OUTFILE and prints one line,
`CMD-ARGS<TAB>rc<TAB>seconds<TAB>peak RSS in KiB`, measured from this parent (the child's
ru_maxrss, read with wait4), so the figure is the command's own."""
import os
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
start = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.execvp(cmd[0], cmd)
_, status, usage = os.wait4(pid, 0)
secs = time.monotonic() - start
print(f"{' '.join(cmd[1:])}\t{os.waitstatus_to_exitcode(status)}\t{secs:.4f}\t{usage.ru_maxrss}")
