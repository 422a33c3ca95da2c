#!/usr/bin/env python3
"""slurm-peer/reaper.py CMD [ARG...] -- run a daemon under a prompt reaper of orphans.

A job's processes that outlive their parent (the `sleep` of a batch script
whose bash was killed first) are re-parented to the nearest "child
subreaper" above them, or to PID 1. On a real compute node PID 1 is systemd,
which reaps such an orphan as soon as it exits. On the recording VM PID 1
reaps only about once a second (a killed orphan stays a zombie for 1.2-2.0 s),
and slurmstepd's proctrack/pgid counts a zombie as a live member of the job's
process group (`killpg(pgid, 0)` succeeds), so it sends SIGKILL and sleeps
1 s, then 2 s: the kill of the job takes about 3.7 s instead of well under
one, by chance (docs/preemption.md, "The kill of a preempted job").

This wrapper makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER),
starts CMD (slurmd, which daemonizes: its first process exits, the daemon is
re-parented here), returns CMD's first exit status to its caller, and stays
in the background reaping every orphan below it at once, as systemd would,
until it has no child left (teardown.sh stopped slurmd and its steps).
"""
import ctypes
import os
import sys

PR_SET_CHILD_SUBREAPER = 36


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: reaper.py CMD [ARG...]\n")
        return 2
    r, w = os.pipe()
    if os.fork() > 0:
        # the caller's process: wait for CMD's first process, report its status
        os.close(w)
        data = os.read(r, 16)
        return int(data) if data.strip().lstrip(b"-").isdigit() else 1
    os.close(r)
    os.setsid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        os.write(w, b"1")
        sys.stderr.write(f"reaper.py: prctl: {os.strerror(ctypes.get_errno())}\n")
        return 1
    pid = os.fork()
    if pid == 0:
        os.close(w)
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    os.write(w, str(os.waitstatus_to_exitcode(status)).encode())
    os.close(w)
    # keep no terminal or pipe of the caller open while reaping
    fd = os.open(os.devnull, os.O_RDWR)
    for i in (0, 1, 2):
        os.dup2(fd, i)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue


if __name__ == "__main__":
    sys.exit(main())
