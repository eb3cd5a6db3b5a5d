"""The relay: requests from one server process to another, and their replies, over the broker.

A cluster's processes (*nodes*) each listen on a channel of their own, ``node:NAME``. A
node that needs something only another node holds (a match it runs, the tournaments the
leader runs) asks that node's *service* by name through ``Relay.call``; the other node
runs the handler registered for the service and publishes the reply on the caller's
channel. Requests to this node itself go straight to the handler, without the broker:
one code path for both.

What it guarantees:

- **Refusals travel.** A ``ServerError`` raised by the handler is raised by ``call``
  with its code, message and details; any other failure of the handler is turned into
  one by the ``refusal`` given to the relay (``storage_unavailable`` for a database
  outage), else into ``internal_error`` (and logged where it happened).
- **Order.** Requests from one node to another are handled in the order of the ``call``
  calls (one publishing connection, one listening connection; each handler starts in the
  order its request arrived), though the handlers run concurrently and may finish in
  another order.
- **Typed.** What goes between nodes is ``server.relaymessages``'s: a ``Call`` carrying
  one service's command, its ``Answered`` or ``Refused``; a message that is not one is
  logged and dropped.
- **No silent wait.** A request to a node that nobody listens for (it died, or is not
  started) raises ``NodeUnreachable`` at once; one that is not answered within
  ``timeout_s`` (a node paused, Redis restarted under the request or the reply) raises
  ``NodeTimeout``. The request may still have been carried out: what is retried after
  either must be safe to do twice (an action is, by its ``seq``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from gaps_protocol.messages.errors import is_error_code
from server.broker import Broker, BrokerUnavailable, Subscription
from server.errors import ServerError
from server.relaymessages import (
    Answered,
    AnyCommand,
    Call,
    Command,
    Ping,
    Refused,
    decode,
    encode,
)

log = logging.getLogger("gaps.relay")

#: A service: ``handler(command, caller)``, ``caller`` the asking node's name.
Handler = Callable[[Any, str], Awaitable[Any]]
Refusal = Callable[[Exception], "ServerError | None"]


class NodeUnavailable(BrokerUnavailable):
    """Another node could not be asked, or did not answer."""


class NodeUnreachable(NodeUnavailable):
    """Nobody listens on the node's channel: it is gone (or not started)."""


class NodeTimeout(NodeUnavailable):
    """The node did not answer in time."""


def channel_of(node: str) -> str:
    return f"node:{node}"


class Relay:
    """This node's end of the relay.

    :param broker: what links the nodes (``RedisBroker``; ``LocalBroker`` for one node).
    :param node: this node's name, unique in the cluster.
    :param timeout_s: how long ``call`` waits for a reply.
    :param refusal: the refusal for a handler's failure that is not a ``ServerError``,
        or None to answer ``internal_error``.
    """

    def __init__(
        self,
        broker: Broker,
        *,
        node: str,
        timeout_s: float = 5.0,
        refusal: Refusal | None = None,
    ) -> None:
        self._broker = broker
        self.node = node
        self._timeout_s = timeout_s
        self._refusal = refusal
        self._services: dict[str, Handler] = {}
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._subscription: Subscription | None = None
        self._handling: set[asyncio.Task[None]] = set()

    def serve(self, service: str, handler: Handler) -> None:
        """Answer the commands of ``service`` (those whose ``service`` it is) with
        ``handler(command, caller)``, whose result must be JSON-serializable."""
        self._services[service] = handler

    async def start(self) -> None:
        """Listen on this node's channel: requests to it are handled from now on."""
        if self._subscription is None:
            self._subscription = await self._broker.subscribe(channel_of(self.node))
            # Each message handed over as it comes: no queue, no task woken for it.
            self._subscription.listen(self._received)

    async def call(
        self, node: str, command: AnyCommand, *, timeout_s: float | None = None
    ) -> Any:
        """Have ``node`` carry out ``command`` (by its service); its result.

        Raises what the handler raised (a ``ServerError``), ``NodeUnreachable``,
        ``NodeTimeout``, or ``BrokerUnavailable`` when the request cannot be sent."""
        if node == self.node:
            return await self._handle(command, self.node)
        request_id = next(self._ids)
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = reply
        try:
            message = encode(Call(request=request_id, caller=self.node, command=command))
            if not await self._broker.publish(channel_of(node), message):
                raise NodeUnreachable(
                    f"node {node} is not listening: {_named(command)} not sent"
                )
            try:
                async with asyncio.timeout(self._timeout_s if timeout_s is None else timeout_s):
                    return await reply
            except TimeoutError:
                raise NodeTimeout(
                    f"node {node} did not answer {_named(command)} in time"
                ) from None
        finally:
            del self._waiting[request_id]

    async def listening(self, node: str) -> bool:
        """Whether ``node`` listens on its channel (is alive and linked), as far as the
        broker can tell now."""
        if node == self.node:
            return True
        return bool(await self._broker.publish(channel_of(node), encode(Ping(caller=self.node))))

    async def close(self) -> None:
        """Stop listening; requests being handled are cancelled (their callers time out)."""
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        tasks = list(self._handling)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- this node's side ------------------------------------------------------------

    def _received(self, raw: str) -> None:
        try:
            message = decode(raw)
        except msgspec.DecodeError as error:
            log.error("relay message dropped", extra={"error": str(error), "received": raw[:300]})
            return
        match message:
            case Call():
                # Created in arrival order: each handler starts (and reaches a match's
                # mailbox) in the order the requests came.
                task = asyncio.create_task(self._answer(message))
                self._handling.add(task)
                task.add_done_callback(self._handling.discard)
            case Answered(request=request_id, result=result):
                waiting = self._waiting.get(request_id)
                if waiting is not None and not waiting.done():
                    waiting.set_result(result)
            case Refused(request=request_id):
                waiting = self._waiting.get(request_id)
                if waiting is not None and not waiting.done():
                    waiting.set_exception(_refusal(message))
            case Ping():
                pass

    async def _answer(self, call: Call) -> None:
        reply: Answered | Refused
        try:
            result = await self._handle(call.command, call.caller)
            reply = Answered(request=call.request, result=result)
        except ServerError as error:
            reply = Refused(
                request=call.request,
                code=error.code,
                message=error.message,
                details=error.details,
            )
        try:
            message = encode(reply)
        except (TypeError, msgspec.EncodeError):
            log.exception("relayed answer not JSON", extra={"method": call.command.method})
            message = encode(Refused(
                request=call.request,
                code="internal_error",
                message="the server failed on this request",
            ))
        try:
            await self._broker.publish(channel_of(call.caller), message)
        except BrokerUnavailable as error:  # the caller times out, and retries
            log.warning("relay reply lost", extra={"error": str(error)})

    async def _handle(self, command: Command, caller: str) -> Any:
        handler = self._services.get(command.service)
        if handler is None:
            raise ServerError("internal_error", f"this node has no service {command.service!r}")
        try:
            return await handler(command, caller)
        except ServerError:
            raise
        except Exception as error:
            refusal = self._refusal(error) if self._refusal is not None else None
            if refusal is not None:
                raise refusal from error
            log.exception(
                "relayed request failed",
                extra={"service": command.service, "method": command.method},
            )
            raise ServerError("internal_error", "the server failed on this request") from error


def _refusal(refused: Refused) -> ServerError:
    """The ``ServerError`` that ``refused`` carries (an ``internal_error`` for a code this
    process does not know: a newer process's)."""
    if not is_error_code(refused.code):
        return ServerError("internal_error", f"{refused.code}: {refused.message}")
    return ServerError(refused.code, refused.message, **refused.details)


def _named(command: Command) -> str:
    """``service.method``, for messages."""
    return f"{command.service}.{command.method}"
