"""Practice records: games, wins and the best score per ruleset, kept in a local file."""

from __future__ import annotations

import stat
from pathlib import Path

from client_cli.practice import PracticeApp, PracticeSession
from client_cli.records import Record, Records
from gaps import Seed


def test_a_record_counts_games_wins_and_the_best_score() -> None:
    record = Record()
    assert str(record) == "0 games, 0 won, best -"
    record.add(won=False, score=7)
    record.add(won=True, score=58)
    record.add(won=False, score=-3)
    assert (record.games, record.wins, record.best_score) == (3, 1, 58)
    assert str(record) == "3 games, 1 won, best 58"


def test_records_are_saved_privately_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "gaps" / "practice.json"
    records = Records.load(path)
    records.of("classic").add(won=True, score=58)
    records.of("spaces").add(won=False, score=4)
    records.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = Records.load(path)
    assert again.rulesets == {"classic": Record(1, 1, 58), "spaces": Record(1, 0, 4)}


def test_an_unreadable_file_starts_the_records_afresh(tmp_path: Path) -> None:
    path = tmp_path / "practice.json"
    for damaged in ("{not json", '{"rulesets": {"classic": {"games": "x"}}}', "[]"):
        path.write_text(damaged)
        assert Records.load(path).rulesets == {}


async def test_a_finished_practice_game_counts_once_even_if_taken_back(tmp_path: Path) -> None:
    records = Records.load(tmp_path / "practice.json")
    app = PracticeApp(PracticeSession(Seed.parse("AAAA-BBBB-CCCC-DDDD"), "classic"),
                      records=records)
    async with app.run_test(size=(100, 30)) as pilot:
        app.submit("stop")
        assert records.of("classic") == Record(1, 0, 0)
        await pilot.press("u")
        app.submit("stop")
        assert records.of("classic") == Record(1, 0, 0)
        await pilot.pause()
        assert "your classic record: 1 game, 0 won, best 0" in str(
            app.query_one("#title").render())
    assert Records.load(tmp_path / "practice.json").of("classic") == Record(1, 0, 0)
