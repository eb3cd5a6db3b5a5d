"""The result screen: who won, the final table with the deal's par and each score's gap to
it, the revealed seed with its check, where to get the replay, and the rematch offers.

The table is laid out for the width it has: the rank, the name, the score, the gap to
par and the result always; then the time, the placed cards, the redeals and the moves
while there is room beside names of 10 characters. Names shorten first, and a bot's
``[bot]`` and your ``(you)`` are never cut.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Final

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from client_cli.config import http_base
from client_cli.duration import format_ms
from client_cli.footer import KeyFooter
from client_cli.match_state import MatchState
from client_cli.palette import DARK, Palette
from client_cli.par import BOUND_WHY, gap_words, read_par
from client_cli.render import BOT_MARK, printable, result_words, review_words
from gaps_protocol.messages.common import Par
from gaps_protocol.messages.views import RankedProgress

#: The least of a name the table keeps before it drops a column.
LEAST_NAME: Final = 10
#: From this width on, the gaps to par are in whole words (``at least 3 below par``).
WIDE_GAPS: Final = 70


class Rematch(StrEnum):
    """What the player asked for on the ranking screen."""

    NEW_DEAL = "new deal"  # the same options, a new secret seed (rated as the first was)
    SAME_DEAL = "same deal"  # the same options and the revealed seed (unrated)


def rematch_options(state: MatchState, rematch: Rematch) -> dict[str, Any]:
    """The ``create_match`` options of a rematch of ``state``'s match: its rules, seats,
    clock and ranking; a match of a kind that starts by itself (quick, daily, tournament)
    becomes a race for as many as played it."""
    summary = state.summary
    options: dict[str, Any] = {
        "ruleset": state.ruleset.name, "time_limit_s": state.time_limit_s,
        "win_by": summary.win_by if summary else "time",
        "public": summary.public if summary else False,
        "max_players": (summary.max_players if summary and summary.max_players
                        else max(1, len(state.players))),
    }
    if state.kind != "race":
        options["max_players"] = max(1, len(state.players))
    if rematch is Rematch.SAME_DEAL and state.seed is not None:
        options["seed"] = state.seed
    return options


def headline(rows: Sequence[RankedProgress], you_id: int | None) -> str:
    """Who won, in words: ``You win!``, ``bob wins``, ``ana and bob share first place``;
    with how (``won in 4:00.8``, or the best score)."""
    first = [row for row in rows if row.rank == 1]
    if not first:
        return "The match is over."
    names = ["you" if row.player_id == you_id else printable(row.name) for row in first]
    best = first[0]
    how = (f"won in {format_ms(best.finish_ms)}" if best.end_reason == "won"
           else f"score {printable(best.score)}")
    if len(first) > 1:
        together = ", ".join(names[:-1]) + " and " + names[-1]
        return f"{together[0].upper()}{together[1:]} share first place ({how})."
    if names[0] == "you":
        return f"You win! ({how})"
    return f"{names[0]} wins ({how})."


def par_line(par: Par | None, *, fetching: bool) -> str:
    """What the screen says of the deal's par."""
    known = read_par(par)
    if known is not None and known.exact:
        return f"Par {known.score}: the best score this deal allowed (solved after the match)."
    if known is not None:
        return f"Par: at least {known.score} ({BOUND_WHY})."
    if fetching:
        return "Par: the server is solving this deal…"
    return "Par: not known (the server solves deals after their match, when it can)."


@dataclass(frozen=True)
class Column:
    heading: str
    justify: str
    width: int


def _name(row: RankedProgress, you_id: int | None, width: int, palette: Palette) -> Text:
    you = row.player_id == you_id
    style = Style(color=palette.you, bold=True) if you else Style(color=palette.text)
    extras = Text()
    if row.bot:
        extras.append(f" {BOT_MARK}", style=palette.bot)
    if you:
        extras.append(" (you)", style=palette.muted)
    name = printable(row.name)
    room = width - extras.cell_len
    if len(name) > room:
        name = name[:max(0, room - 1)] + "…"
    return Text(name, style=style) + extras


def ranking_table(
    rows: Sequence[RankedProgress], *, width: int, you_id: int | None, par: Par | None,
    palette: Palette = DARK, fetching: bool = False,
) -> Table:
    """The final ranking laid out in ``width`` columns (see the module's docstring)."""
    unknown = "…" if fetching else "?"
    gaps = [gap_words(row.score, par) or unknown for row in rows]
    if width < WIDE_GAPS:
        gaps = [gap_words(row.score, par, short=True) or unknown for row in rows]
    results = [f"{result_words(row)}" for row in rows]
    times = [format_ms(row.finish_ms) for row in rows]
    longest = max((len(printable(row.name)) + (6 if row.bot else 0)
                   + (6 if row.player_id == you_id else 0) for row in rows), default=6)

    def widest(heading: str, values: Sequence[str]) -> int:
        return max([len(heading), *(len(value) for value in values)])

    must = [Column("#", "right", widest("#", [str(row.rank) for row in rows])),
            Column("score", "right", widest("score", [str(row.score) for row in rows])),
            Column("to par", "left", widest("to par", gaps)),
            Column("result", "left", widest("result", results))]
    optional = [Column("time", "right", widest("time", times)),
                Column("placed", "right", 6), Column("redeals", "right", 7),
                Column("moves", "right", widest("moves", [str(row.moves_made)
                                                           for row in rows]))]
    chosen = list(must)
    for column in optional:  # in this order, while they leave the names room
        used = sum(c.width + 1 for c in (*chosen, column))
        if width - used < min(longest, LEAST_NAME):
            break
        chosen.append(column)
    name_width = max(4, min(longest, width - sum(c.width + 1 for c in chosen)))
    order = ["#", "player", "score", "to par", "placed", "redeals", "moves", "result", "time"]
    columns = {c.heading: c for c in chosen} | {"player": Column("player", "left", name_width)}
    table = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 1),
                  collapse_padding=True, header_style=Style(color=palette.label, bold=True))
    shown = [heading for heading in order if heading in columns]
    for heading in shown:
        column = columns[heading]
        table.add_column(heading, justify=column.justify,  # type: ignore[arg-type]
                         width=column.width, no_wrap=True)
    for row, gap, result, finish in zip(rows, gaps, results, times, strict=True):
        rank = row.rank
        medal = palette.medals[rank - 1] if rank in (1, 2, 3) else None
        cells = {
            "#": Text(printable(rank), style=Style(color=medal or palette.text, bold=True)),
            "player": _name(row, you_id, name_width, palette),
            "score": Text(printable(row.score), style=Style(color=palette.text, bold=True)),
            "to par": Text(gap, style=palette.text),
            "placed": Text(printable(f"{row.placed}/48"), style=palette.text),
            "redeals": Text(printable(row.redeals_used), style=palette.text),
            "moves": Text(printable(row.moves_made), style=palette.text),
            "result": Text(result, style=palette.good if row.end_reason == "won"
                           else palette.text),
            "time": Text(finish, style=palette.text),
        }
        table.add_row(*(cells[heading] for heading in shown))
    return table


class RankingView(Widget):
    """The ranking, laid out for the widget's width."""

    DEFAULT_CSS = "RankingView { height: auto; }"

    def __init__(self, screen: RankingScreen) -> None:
        super().__init__(id="ranking")
        self.owner = screen

    def render(self) -> RenderableType:
        return self.owner.ranking(self.content_size.width)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return 1 + len(self.owner.state.ranking or [])


class RankingScreen(Screen[Rematch | None]):
    """The final table, the revealed seed and where to get the replay. ``b`` goes back to
    the board (dismissing with None); ``n`` and ``d`` ask for a rematch."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q,escape,enter,ctrl+q,ctrl+c", "quit", "quit", key_display="q"),
        Binding("b", "back", "the board"),
        Binding("n", "rematch(False)", "rematch"),
        Binding("d", "rematch(True)", "same deal"),
    ]
    DEFAULT_CSS = """
    RankingScreen { padding: 0 1; }
    RankingScreen #headline { height: auto; padding: 0 1; text-style: bold; }
    RankingScreen #box { border: round $accent; padding: 0 1; height: auto; }
    RankingScreen #par { height: auto; }
    RankingScreen #reveal { padding: 1 1 0 1; height: auto; }
    """

    def __init__(self, state: MatchState, server: str, *, fetching: bool = False) -> None:
        """``fetching``: the deal's par is being asked for (it is drawn once it comes)."""
        super().__init__()
        self.state = state
        self.server = server
        self.fetching = fetching

    @property
    def palette(self) -> Palette:
        """The app's colours (they may be switched while this screen is shown)."""
        palette = getattr(self.app, "palette", DARK)
        return palette if isinstance(palette, Palette) else DARK

    @property
    def par(self) -> Par | None:
        """The deal's par once the server has it."""
        return self.state.par

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self._headline(), id="headline")
            with Vertical(id="box"):
                yield Static(self._par(), id="par")
                yield RankingView(self)
            yield Static(self._reveal(), id="reveal")
        yield KeyFooter(("quit", "back", "rematch"))

    def ranking(self, width: int) -> Table:
        return ranking_table(self.state.ranking or [], width=width, you_id=self.state.you_id,
                             par=self.state.par, palette=self.palette,
                             fetching=self.fetching)

    def _headline(self) -> Text:
        state = self.state
        text = Text(printable(f"Match {state.code}: "), style=self.palette.text)
        text.append(headline(state.ranking or [], state.you_id),
                    style=Style(color=self.palette.good, bold=True))
        return text

    def _par(self) -> Text:
        return Text(par_line(self.state.par, fetching=self.fetching), style=self.palette.muted)

    def _reveal(self) -> Group:
        state, palette = self.state, self.palette
        code, commitment = printable(state.code), printable(state.commitment)
        lines: list[RenderableType] = []
        mine = next((r for r in state.ranking or [] if r.player_id == state.you_id), None)
        if mine is not None and mine.review == "held":
            lines.append(Text("Your result is under review (its timing was flagged): it "
                              "counts on no board or rating until an operator clears it.",
                              style=palette.warning))
        elif mine is not None and review_words(mine):
            lines.append(Text(f"Your result: {review_words(mine)} (docs/fair-play.md).",
                              style=palette.warning))
        text = Text(style=palette.text)
        if state.seed is None:  # a daily challenge: secret until its day is over
            text.append("The seed stays secret until the day is over (UTC): ", style="bold")
            text.append(f"then gaps replay {code} gets the replay, to check with gaps verify.\n")
            text.append(f"Commitment {commitment}", style=palette.muted)
            return Group(*lines, text)
        text.append("Seed ", style="bold")
        text.append(printable(state.seed), style=Style(color=palette.you, bold=True))
        verified = state.verified_commitment()
        if verified:
            text.append("  ✓ its SHA-256 is the commitment published at the start",
                        style=palette.good)
        elif verified is False:
            text.append("  ✗ its SHA-256 is NOT the commitment published at the start",
                        style=Style(color=palette.error, bold=True))
        text.append(f"\nCommitment {commitment}\n", style=palette.muted)
        text.append("Replay: ", style="bold")
        text.append(f"gaps replay {code}", style="bold")
        text.append(f"   (or {http_base(self.server)}/matches/{code}/replay)\n",
                    style=palette.muted)
        text.append("Check every score: ", style="bold")
        text.append(f"gaps verify gaps-replay-{code}.json")
        if state.role == "player":
            for same_seed, key in ((False, "n"), (True, "d")):
                offer = state.rematches.get(same_seed)
                if offer is None:
                    continue
                what = "the same deal, unrated" if same_seed else "a new deal"
                by = "You" if offer.by.player_id == state.you_id else offer.by.name
                text.append(printable(f"\n{by} offered a rematch ({what}): match "
                                      f"{offer.code}."),
                            style=Style(color=palette.good, bold=True))
                text.append(f" {key} takes your seat in it.", style="bold")
        return Group(*lines, text)

    def redraw(self, *, fetching: bool | None = None) -> None:
        """Draw the par, the ranking and the offers again (the par or an offer came, or
        the colours were switched)."""
        if fetching is not None:
            self.fetching = fetching
        with contextlib.suppress(NoMatches):
            self.query_one("#headline", Static).update(self._headline())
            self.query_one("#par", Static).update(self._par())
            self.query_one(RankingView).refresh()
            self.query_one("#reveal", Static).update(self._reveal())

    def action_back(self) -> None:
        self.dismiss(None)

    async def action_quit(self) -> None:
        await self.app.action_quit()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "rematch":
            # The same deal only once its seed is out (a daily's is not, until its day
            # ends); none in a tournament, whose next round comes by itself.
            return (self.state.role == "player" and self.state.kind != "tournament"
                    and (parameters != (True,) or self.state.seed is not None))
        return True

    def action_rematch(self, same_deal: bool) -> None:
        """Close the screen asking for a rematch: ``gaps`` takes a seat in the one offered,
        or creates it (the others are told), and prints its code."""
        self.dismiss(Rematch.SAME_DEAL if same_deal else Rematch.NEW_DEAL)
