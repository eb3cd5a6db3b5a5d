"""What pointing at a cell means: select a card, show where it may go, pick a move.

Pure: works on a ``gaps.Game`` (the client's local copy, used only to pre-check and
highlight; the server decides). Pointing at

* a card selects it and lists its legal destinations (one for most cards, up to four
  for a 2); pointing next at one of them makes that move;
* a live gap away from column 1 makes the one move that fills it (the card one rank
  above its left neighbour), if that card may go there;
* a gap in column 1 with a 2 selected moves that 2 there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gaps import Card, Game, IllegalAction, Move, Slot


@dataclass(frozen=True)
class Pick:
    """The outcome of pointing at a cell."""

    selected: int | None = None  # flat index of the selected card
    targets: frozenset[int] = field(default_factory=frozenset)  # where it may go
    action: str | None = None  # a move to send now
    message: str | None = None  # why nothing happened, or what to do next


def move_text(card: Card, to: Slot) -> str:
    """The short notation of a legal move: ``8C``, or ``2H>3`` for a 2."""
    return f"{card}>{to.row}" if card.rank == 2 else str(card)


def destinations(game: Game, card: Card) -> list[Slot]:
    """Where ``card`` may go now (empty if nowhere)."""
    found: list[Slot] = []
    for move in game.legal_moves():
        if move.card is card:
            try:
                found.append(game.destination(move))
            except IllegalAction:
                continue
    return found


def point(game: Game, index: int, selected: int | None = None) -> Pick:
    """Point at the cell of flat ``index``, with the card at ``selected`` selected (or not)."""
    slot = Slot.from_index(index)
    if game.is_over():
        return Pick(message="this game is over")
    if selected is not None and selected != index:
        chosen = game.card_at(Slot.from_index(selected))
        if chosen is not None and slot in destinations(game, chosen):
            return Pick(action=move_text(chosen, slot))
    card = game.card_at(slot)
    if card is not None:
        if selected == index:
            return Pick()  # pointing at the selected card again lets it go
        places = destinations(game, card)
        if not places:
            return Pick(selected=index, message=f"{card} has nowhere to go now")
        return Pick(selected=index, targets=frozenset(place.index for place in places))
    if game.is_dead_gap(slot):
        left = game.card_at(Slot(slot.row, slot.column - 1))
        why = f"right of {left}" if left is not None else "right of another gap"
        return Pick(message=f"the gap at {slot} is dead ({why})")
    if slot.column == 1:
        return Pick(message=f"any 2 fits at {slot}: select a 2 first, or type 2H>{slot.row}")
    left = game.card_at(Slot(slot.row, slot.column - 1))
    assert left is not None  # a live gap away from column 1 has a card on its left
    fitting = Card.from_code(left.code + 1)
    if game.is_legal(Move(fitting, slot)):
        return Pick(action=move_text(fitting, slot))
    return Pick(message=f"only {fitting} fits at {slot}")
