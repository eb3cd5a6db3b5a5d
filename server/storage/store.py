"""The repositories of one database, in one place: ``store.players``, ``store.matches``
(matches, seats, stored actions, replays), ``store.results`` (a match's end: results,
boards, ratings), ``store.boards``, ``store.ratings``, ``store.daily`` (with
``store.daily_deals``), ``store.tournaments`` and ``store.signing_keys``;
``store.reviews`` holds the results held for review, the operators' decisions and their
audit log. Actions are written through ``Journal``, which batches them.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from server.fairplay import DEFAULT_RULES, TimingRules
from server.storage.boards import Boards
from server.storage.daily_deals import DailyDeals
from server.storage.daily_entries import DailyEntries
from server.storage.database import Database
from server.storage.matches import Matches
from server.storage.players import Players
from server.storage.ratings import PROVISIONAL_GAMES, Ratings
from server.storage.results import Results
from server.storage.reviews import Reviews
from server.storage.signing_keys import SigningKeys
from server.storage.tournaments import TournamentRepository


class Store:
    """Every repository of ``database``.

    :param database: the database, or an engine of it (tests).
    :param timing_rules: the rules a rated result is held for review by (server.fairplay).
    """

    def __init__(
        self, database: Database | AsyncEngine, *, timing_rules: TimingRules = DEFAULT_RULES
    ) -> None:
        self.database = database if isinstance(database, Database) else Database.of(database)
        self.players = Players(self.database)
        self.matches = Matches(self.database)
        self.results = Results(self.database, timing_rules=timing_rules)
        self.reviews = Reviews(self.database)
        self.boards = Boards(self.database, provisional_games=PROVISIONAL_GAMES)
        self.ratings = Ratings(self.database)
        self.daily = DailyEntries(self.database)
        self.daily_deals = DailyDeals(self.database)
        self.tournaments = TournamentRepository(self.database)
        self.signing_keys = SigningKeys(self.database)
