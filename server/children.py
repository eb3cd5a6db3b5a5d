"""Child processes that end with the process that started them, however it ends.

A process killed with SIGKILL cannot stop its children: they are handed to init and go
on (a par solver holding 100 MB, a whole server worker holding its port). On Linux the
kernel signals a child when its parent ends, if the child asked for it (``prctl`` with
``PR_SET_PDEATHSIG``): :func:`die_with_parent` asks, first thing in the child, and then
checks that its parent is still the process that started it, since that one may have
ended before the request was made.

The death signal survives ``exec``: ``python -m server.children PARENT SIGNAL -- COMMAND``
asks for it and then becomes COMMAND (see :func:`guarded`), for a child that is a whole
program of its own (the workers of ``gaps-server --workers``).

The kernel's "parent" is the thread that started the child: a child started by a thread
that ends gets the signal then. Start children from a thread that lives as long as they
should (the main thread, or the thread that manages the child).

Elsewhere than on Linux nothing is asked: :func:`die_with_parent` only checks the
parent, and a child learns of its parent's end when its pipes close (docs/operations.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import sys
from typing import Final

from server import logs

#: prctl(2)'s option that sets the signal a process gets when its parent ends.
PR_SET_PDEATHSIG: Final = 1


class ParentGone(Exception):
    """The process that started this one ended before it could ask to end with it."""


def die_with_parent(parent: int, signum: signal.Signals = signal.SIGKILL) -> None:
    """Have ``signum`` sent to this process when its parent ends; the parent must be
    ``parent`` (the pid of the process that started this one), else it ended already
    and :class:`ParentGone` is raised: end at once."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"prctl(PR_SET_PDEATHSIG): {os.strerror(error)}")
    if os.getppid() != parent:
        raise ParentGone(f"the parent process {parent} ended before its child {os.getpid()} began")


def guarded(command: list[str], signum: signal.Signals = signal.SIGTERM) -> list[str]:
    """``command`` run so that it gets ``signum`` when this process ends (see the
    module's doc): to start from this process's main thread."""
    return [
        sys.executable, "-m", "server.children", str(os.getpid()), signum.name, "--", *command,
    ]


def main(argv: list[str]) -> None:
    """``PARENT SIGNAL -- COMMAND...``: ask for SIGNAL when PARENT ends, then exec COMMAND."""
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: python -m server.children PARENT SIGNAL -- COMMAND [ARG...]")
    parent, signum, command = int(argv[0]), signal.Signals[argv[1]], argv[3:]
    try:
        die_with_parent(parent, signum)
    except ParentGone as gone:
        logs.configure("WARNING")  # the parent's log is JSON lines
        logging.getLogger("gaps.children").error(str(gone), extra={"command": command})
        sys.exit(1)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
