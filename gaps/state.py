"""The compact state: a game position as a few dozen bytes (or base64url text) and back.

The seed is not part of it: the state goes on the wire, where the seed must stay secret
while a match runs. Layout of version 1, all integers big-endian:

====== ======= =====================================================================
offset size    content
====== ======= =====================================================================
0      1       format version, 1
1      1       ruleset, its index in ``gaps.RULESETS`` (classic 0, no-redeal 1, ...)
2      1       redeals used
3      1       flags: bit 0 set when the player stopped
4      4       moves made
8      52      the grid, row-major: a card code (suit*13 + rank-1, suits C D H S) or 255
60     2       n, the moves undo can take back (0 unless the ruleset has undo)
62     2n      each such move, oldest first: card code, index of the slot it came from
====== ======= =====================================================================

A state that does not decode to a reachable-looking position (bad sizes, unknown
ruleset, a grid that is not 48 cards and 4 gaps, an undo list that does not lead back
through legal moves) raises ``StateFormatError``.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from typing import Final

from gaps.errors import NotationError, StateFormatError
from gaps.game import CELLS, GAP, Game, check_grid
from gaps.notation import SPACE, quoted
from gaps.ruleset import RULESETS
from gaps.seed import Seed

VERSION: Final = 1
_HEADER: Final = struct.Struct(">BBBBI")
_RULESET_NAMES: Final = tuple(RULESETS)
_EMPTY: Final = 255
_MAX_UNDO: Final = 0xFFFF
_MAX_MOVES: Final = 0xFFFFFFFF
# Unpadded base64url: a length of 1 mod 4 encodes no whole byte.
_STATE_TEXT: Final = re.compile(r"[A-Za-z0-9_-]*", re.ASCII)


def encode_state(game: Game) -> bytes:
    """The game's position, redeals, moves made, stop flag and undo stack as bytes."""
    grid = game.grid_codes()
    undo = game.undo_stack()
    if len(undo) > _MAX_UNDO:
        raise StateFormatError(f"{len(undo)} undo moves do not fit a state (at most {_MAX_UNDO})")
    if game.moves_made > _MAX_MOVES:
        raise StateFormatError(f"{game.moves_made} moves made do not fit a state")
    return b"".join(
        (
            _HEADER.pack(
                VERSION,
                _RULESET_NAMES.index(game.ruleset.name),
                game.redeals_used,
                1 if game.stopped else 0,
                game.moves_made,
            ),
            bytes(_EMPTY if code == GAP else code for code in grid),
            len(undo).to_bytes(2, "big"),
            bytes(byte for card, slot in undo for byte in (card.code, slot.index)),
        )
    )


def decode_state(data: bytes, seed: Seed) -> Game:
    """The game ``encode_state`` wrote; ``seed`` drives its later redeals."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise StateFormatError(f"a state is bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) < _HEADER.size + CELLS + 2:
        raise StateFormatError(f"a state is at least 62 bytes, got {len(data)}")
    version, ruleset_index, redeals_used, flags, moves_made = _HEADER.unpack_from(data)
    if version != VERSION:
        raise StateFormatError(f"state format version {version} is not {VERSION}")
    if ruleset_index >= len(_RULESET_NAMES):
        raise StateFormatError(f"ruleset index {ruleset_index} is unknown")
    ruleset = RULESETS[_RULESET_NAMES[ruleset_index]]
    if redeals_used > ruleset.redeals:
        raise StateFormatError(f"{redeals_used} redeals used, but {ruleset} has {ruleset.redeals}")
    if flags & ~1:
        raise StateFormatError(f"unknown flags {flags:#x}")
    grid_bytes = data[8 : 8 + CELLS]
    grid = [GAP if byte == _EMPTY else byte for byte in grid_bytes]
    try:
        check_grid(grid)
    except NotationError as error:
        raise StateFormatError(f"bad grid: {error}") from None
    count = int.from_bytes(data[60:62], "big")
    if len(data) != 62 + 2 * count:
        raise StateFormatError(f"{count} undo moves need {62 + 2 * count} bytes, got {len(data)}")
    undo = [(data[62 + 2 * i], data[63 + 2 * i]) for i in range(count)]
    try:
        return Game.restore(
            seed, ruleset, grid,
            redeals_used=redeals_used, moves_made=moves_made, stopped=bool(flags & 1), undo=undo,
        )
    except ValueError as error:
        raise StateFormatError(f"bad state: {error}") from None


def state_text(game: Game) -> str:
    """``encode_state`` as unpadded base64url text (about 84 characters)."""
    return base64.urlsafe_b64encode(encode_state(game)).decode().rstrip("=")


def parse_state(text: str, seed: Seed) -> Game:
    """The game ``state_text`` wrote: unpadded base64url, ASCII space around it ignored.

    Only the text ``state_text`` would write is read: no padding, no ``+`` or ``/``, no
    other character skipped, no stray bits in the last character.
    """
    stripped = text.strip(SPACE)
    data = b""
    if _STATE_TEXT.fullmatch(stripped) and len(stripped) % 4 != 1:
        try:
            data = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
        except (binascii.Error, ValueError):
            data = b""
    if not data or base64.urlsafe_b64encode(data).decode().rstrip("=") != stripped:
        raise StateFormatError(f"{quoted(text)} is not base64url state text")
    return decode_state(data, seed)
