"""client_cli.interrupt: a Ctrl-C (a cancel of the command's task) is never lost, even when
Python 3.11's ``wait_for`` swallows it because the reply came at the same instant."""

from __future__ import annotations

import asyncio

from client_cli.interrupt import check_interrupted, handled


async def test_a_swallowed_cancel_is_still_seen_and_can_be_handled() -> None:
    steps: list[str] = []
    reply_came = asyncio.Event()

    async def command() -> str:
        try:
            try:
                await reply_came.wait()
            except asyncio.CancelledError:
                steps.append("swallowed")  # what wait_for does when the reply won the race
            check_interrupted()
            steps.append("went on")
            return "not interrupted"
        except asyncio.CancelledError:
            handled()
            await asyncio.sleep(0)  # the task can still clean up (leave a queue, ...)
            return "interrupted"

    task = asyncio.create_task(command())
    await asyncio.sleep(0)
    task.cancel()
    assert await task == "interrupted" and steps == ["swallowed"]
    assert task.cancelling() == 0


async def test_without_a_cancel_nothing_happens() -> None:
    check_interrupted()
    handled()
