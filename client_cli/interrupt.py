"""Ctrl-C while a command waits: ``asyncio.run`` turns it into a cancel of the command's
task, which the waiting commands (``gaps play``, ``gaps tournament join``) catch to leave
cleanly.

Python 3.11's ``asyncio.wait_for`` loses a cancel that comes in the instant the awaited
reply arrives (the reply wins and no ``CancelledError`` is raised), so those commands
also ask, at each step of their wait, whether a cancel is pending.
"""

from __future__ import annotations

import asyncio


def check_interrupted() -> None:
    """Raise ``CancelledError`` if this task was asked to stop, even if the request was
    swallowed on the way."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def handled() -> None:
    """The cancel is dealt with: the task goes on (to leave a queue, to say goodbye)."""
    task = asyncio.current_task()
    while task is not None and task.cancelling():
        task.uncancel()
