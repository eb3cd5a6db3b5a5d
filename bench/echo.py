"""The load benchmark's yardstick: ``python -c "from bench.echo import main; main(N)"``
serves a fan-out echo on a loopback port the system picks, which it prints.

Connections make groups of ``N`` in the order they arrive; each frame is sent back to its
sender and, as a progress-sized event, to the others of its group, all written as
gaps-server writes them (``server.outbox``), with the websockets settings gaps-server
uses (no compression, its frame limit). These are the frames of one action in an
``N``-player race, less every bit of the server's own work: what the transport alone
costs, the unit the benchmark's ``cpu ratio`` divides by. With ``N`` = 1, a plain echo.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from typing import Final

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from server import protocol
from server.outbox import Outbox

#: How long the echo waits for a client to read a frame, as gaps-server's bench setting.
SEND_TIMEOUT_S: Final = 30.0

#: What the fan-out echo sends the others of a group: a progress event as gaps-server
#: writes it (docs/protocol.md), with no ``id``, so that the players take it for an event.
FAN_OUT_EVENT: Final = json.dumps(
    {
        "type": "event", "match": "K7QX2M", "seq": 107, "event": "progress", "t_ms": 41250,
        "player_id": 1021, "name": "bench-3f9a2c1d", "bot": False, "ready": True,
        "connected": True, "placed": 17, "score": 17, "redeals_used": 1, "moves_made": 63,
        "status": "playing", "finished": False, "won": False, "end_reason": None,
        "finish_ms": None,
    },
    separators=(",", ":"),
)  # fmt: skip


def main(group_size: int = 1) -> None:
    """Serves until SIGTERM."""
    groups: list[list[Outbox]] = []

    async def fan_out(connection: ServerConnection) -> None:
        outbox = Outbox(connection, send_timeout_s=SEND_TIMEOUT_S, max_pending_events=1000)
        if not groups or len(groups[-1]) == group_size:
            groups.append([])
        group = groups[-1]
        group.append(outbox)
        with contextlib.suppress(ConnectionClosed):
            async for frame in connection:
                await outbox.send(str(frame))
                for other in group:
                    if other is not outbox:
                        other.post(FAN_OUT_EVENT)
        group.remove(outbox)

    async def serving() -> None:
        async with serve(
            fan_out, "127.0.0.1", 0, max_size=protocol.MAX_READ_BYTES, compression=None
        ) as server:
            port = server.sockets[0].getsockname()[1]
            print(f"echo server listening on ws://127.0.0.1:{port}", flush=True)
            terminated = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminated.set)
            await terminated.wait()

    asyncio.run(serving())


def command(group_size: int) -> str:
    """The ``python -c`` program that runs ``main(group_size)``."""
    return f"from bench.echo import main; main({int(group_size)})"
