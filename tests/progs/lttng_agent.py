#!/usr/bin/python3
# lttng_agent.py: a Python app that logs through the LTTng Python agent
# (Debian's python3-lttngust), for the LTTng agent tests.
#
# USAGE: lttng_agent.py READY [RATE [LOGGER]]
#
# Importing lttngust is when the agent reads /var/run/lttng/agent.port and
# registers (it waits up to 5 s for the daemon's answer). Then this writes
# its PID (as its own PID namespace numbers it) to READY, atomically, and
# logs RATE records a second (default 100) to LOGGER (default
# 'sidescope.agent'; 'root': the root logger, and no named logger exists)
# until it is killed.
import logging
import os
import sys
import time

import lttngust  # noqa: F401  (the import registers the agent)


def main():
    ready = sys.argv[1]
    rate = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    name = sys.argv[3] if len(sys.argv) > 3 else 'sidescope.agent'
    log = logging.getLogger() if name == 'root' else logging.getLogger(name)
    log.setLevel(logging.DEBUG)
    with open(ready + '.new', 'w') as f:
        f.write('%d\n' % os.getpid())
    os.rename(ready + '.new', ready)
    period = 1.0 / rate
    n = 0
    t = time.monotonic()
    while True:
        log.info('record %d', n)
        n += 1
        t += period
        d = t - time.monotonic()
        if d > 0:
            time.sleep(d)


if __name__ == '__main__':
    main()
