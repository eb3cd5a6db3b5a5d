"""A pool of worker processes that end with the server that started them.

An :class:`~concurrent.futures.Executor`: ``submit(fn, *args)`` runs ``fn(*args)`` in
one of ``workers`` child processes (``fn``, its arguments and its result must pickle),
and the future gets the result or the exception.

Why not ``ProcessPoolExecutor``: its processes outlive a server killed with SIGKILL
(handed to init, a solve goes on for its whole budget), and so does the resource tracker
that ``multiprocessing`` starts beside them, which then writes text warnings of "leaked
semaphores" into the server's JSON log. The spawn start method also imports the server's
``__main__`` in each worker, for no use. Here each worker is a plain
``python -m server.process_pool`` child, which asks to be killed when its parent ends
(server/children.py) and imports what its jobs need and nothing else. There is no
resource tracker, and no semaphore: a job and its reply cross the child's stdin and
stdout, one length-prefixed pickle each.

Each worker has a thread of the pool, which starts its child, hands it one job at a
time and waits for the reply. The child is killed when that thread ends (its death
signal follows the thread that started it), so a pool's children end with the pool.

As with ``ProcessPoolExecutor``, a child that dies (killed for its memory, say) breaks
the pool: its job and every pending one fail with ``BrokenExecutor``, and so does any
later ``submit``; make a new pool. Unlike it, ``shutdown`` does not wait for jobs under
way: it cancels the pending ones and kills the children, so the jobs under way fail
with ``BrokenExecutor``.
"""

from __future__ import annotations

import argparse
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future
from dataclasses import dataclass
from typing import IO, Any, Final, ParamSpec, TypeVar

from server import logs
from server.children import ParentGone, die_with_parent

P = ParamSpec("P")
T = TypeVar("T")

#: The length of a frame, before its bytes: 8 bytes, big-endian.
_LENGTH: Final = struct.Struct(">Q")


@dataclass
class _Job:
    future: Future[Any]
    call: tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class ProcessPool(Executor):
    """``workers`` child processes running jobs, each at ``niceness`` (added to the
    server's: see ``os.nice``). The children are started at once."""

    def __init__(self, workers: int, *, niceness: int = 0) -> None:
        if workers < 1:
            raise ValueError(f"a process pool needs 1 worker or more, not {workers}")
        self._command = [
            sys.executable, "-m", "server.process_pool",
            "--parent", str(os.getpid()), "--niceness", str(niceness),
        ]
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed: str | None = None  # why submit is refused, once it is
        self._children: list[subprocess.Popen[bytes]] = []
        self._threads = [
            threading.Thread(target=self._serve, name=f"process-pool-{index}", daemon=True)
            for index in range(1, workers + 1)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed is not None:
                raise BrokenExecutor(self._closed)
            self._jobs.put(_Job(future, (fn, args, kwargs)))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new jobs, cancel the pending ones and kill the children (whatever
        ``cancel_futures`` says: a job is never waited for); with ``wait``, return once
        they have ended."""
        self._close("the process pool was shut down", broken=False)
        with self._lock:
            children = list(self._children)
        for child in children:
            child.kill()
        if wait:
            for thread in self._threads:
                thread.join()

    def _close(self, reason: str, *, broken: bool) -> None:
        """Refuse new jobs, end the pending ones (failed with BrokenExecutor if the pool
        is ``broken``, else cancelled) and tell every thread to end."""
        with self._lock:
            if self._closed is not None:
                return
            self._closed = reason
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    continue
                if broken:
                    job.future.set_exception(BrokenExecutor(reason))
                else:
                    job.future.cancel()
            for _ in self._threads:
                self._jobs.put(None)

    def _serve(self) -> None:
        """One worker's thread: start its child, then hand it jobs until the pool closes
        or the child dies."""
        failed: str | None = None
        with self._lock:
            if self._closed is not None:
                return
            try:
                child = subprocess.Popen(
                    self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
                )
                self._children.append(child)
            except OSError as error:
                failed = f"a process of the pool did not start: {error}"
        if failed is not None:
            self._close(failed, broken=True)
            return
        assert child.stdin is not None and child.stdout is not None
        try:
            while (job := self._jobs.get()) is not None:
                if not job.future.set_running_or_notify_cancel():
                    continue
                try:
                    _send(child.stdin, job.call)
                    ok, value = _receive(child.stdout)
                except (OSError, EOFError):
                    death = self._death(child)
                    job.future.set_exception(BrokenExecutor(death))
                    self._close(f"a process of the pool died: {death}", broken=True)
                    return
                except Exception as error:  # a job, or its outcome, that does not pickle
                    job.future.set_exception(error)
                    continue
                if ok:
                    job.future.set_result(value)
                else:
                    job.future.set_exception(value)
        finally:
            child.kill()
            child.wait()
            child.stdin.close()
            child.stdout.close()
            with self._lock:
                self._children.remove(child)

    def _death(self, child: subprocess.Popen[bytes]) -> str:
        if self._closed is not None:
            return self._closed
        try:
            status = child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return f"process {child.pid} stopped answering"
        return f"process {child.pid} exited with status {status}"


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    """The next frame's value; EOFError if the stream ends first."""
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        raise EOFError
    (length,) = _LENGTH.unpack(header)
    data = stream.read(length)
    if len(data) < length:
        raise EOFError
    return pickle.loads(data)


def _work(jobs: IO[bytes], replies: IO[bytes]) -> None:
    """The child's loop: a job from ``jobs``, its outcome to ``replies``, until ``jobs``
    ends (the pool closed, or the server died)."""
    while True:
        try:
            fn, args, kwargs = _receive(jobs)
            outcome: tuple[bool, Any] = (True, fn(*args, **kwargs))
        except EOFError:
            return
        except Exception as error:
            outcome = (False, error)
        try:
            _send(replies, outcome)
        except Exception as error:
            _send(replies, (False, RuntimeError(f"the job's outcome does not pickle: {error!r}")))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m server.process_pool")
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--niceness", type=int, default=0)
    options = parser.parse_args(argv)
    try:
        die_with_parent(options.parent)
    except ParentGone:
        return
    logs.configure("WARNING")
    os.nice(options.niceness)
    # Replies go through a copy of stdout; stdout itself goes to stderr, so that nothing
    # a job prints can corrupt them.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _work(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main(sys.argv[1:])
