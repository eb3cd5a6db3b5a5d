"""``python -m gaps.solve``: the single-deal and statistics reports, and their intervals."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from gaps.seed import Seed
from gaps.solve import Stats, clopper_pearson, main, percentile, stats_lines, wilson
from tests.test_solver import WON_IN_TWO


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    main(list(argv))
    return capsys.readouterr().out.splitlines()


def test_a_seed_prints_verdict_par_line_nodes_time_and_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = str(Seed((7).to_bytes(10, "big")))
    lines = run(capsys, "--seed", code, "--rules", "no-redeal", "--max-nodes", "100000")
    assert lines[0] == f"deal: {code} no-redeal"
    assert lines[1] == "verdict: won (48 placed without redeal)"
    assert lines[2].startswith("line: ") and len(lines[2].split()) > 48
    assert lines[3].startswith("nodes: ") and lines[3].endswith(" s")
    assert lines[4] == "par: 58: 48 placed, 0 redeals"
    assert lines[7].startswith("peak memory: ") and lines[7].endswith(" MB")
    assert lines[8].startswith("wall time: ")


def test_a_layout_file_is_solved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "grid.txt"
    path.write_text(WON_IN_TWO, encoding="ascii")
    lines = run(capsys, "--layout", str(path), "--rules", "no-redeal", "--trace-memory")
    assert lines[1:3] == ["verdict: won (48 placed without redeal)", "line: QS KS"]
    assert lines[4] == "par: 58: 48 placed, 0 redeals"
    assert not tracemalloc.is_tracing()  # what runs after main() runs at full speed


def test_the_fewest_moves_of_a_layout_are_printed_as_exact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "grid.txt"
    path.write_text(WON_IN_TWO, encoding="ascii")
    lines = run(capsys, "--layout", str(path), "--rules", "no-redeal", "--fewest-moves")
    assert lines[1:4] == [
        "verdict: won (48 placed without redeal)", "line: QS KS", "fewest moves: 2 (exact)",
    ]
    assert lines[4].startswith("nodes: ")
    assert lines[5] == "par: 58: 48 placed, 0 redeals"


def test_fewest_moves_cut_short_print_a_bound_below_the_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = str(Seed((7).to_bytes(10, "big")))
    lines = run(
        capsys, "--seed", code, "--rules", "no-redeal", "--max-nodes", "40000", "--fewest-moves"
    )
    assert lines[1] == "verdict: won (48 placed without redeal)"
    bound, length = (
        int(word.strip(",")) for word in lines[3].split() if word.strip(",").isdigit()
    )
    assert lines[3] == (
        f"fewest moves: at least {bound}, the line has {length} (nodes budget ran out)"
    )
    assert 0 < bound < length == len(lines[2].split()) - 1


def test_fewest_moves_of_an_undecided_deal_are_unknown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = str(Seed((7).to_bytes(10, "big")))
    lines = run(capsys, "--seed", code, "--max-nodes", "50", "--fewest-moves")
    assert lines[1].endswith("nodes budget ran out)")
    assert lines[3] == "fewest moves: unknown (the best count is not known)"


def test_fewest_moves_of_a_deal_cut_short_before_its_first_move_are_unknown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = run(capsys, "--stats", "2", "--max-nodes", "1", "--fewest-moves")
    assert lines[0] == "deals: 2  won: 0  lost: 0  unknown: 2"
    assert lines[-2].startswith("peak memory: ")


def test_fewest_moves_search_in_best_first_order_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--fewest-moves", "--seed", "AAAA", "--order", "depth-first"])
    assert "not --order depth-first" in capsys.readouterr().err


def test_the_statistics_mode_counts_the_deals_whose_fewest_moves_are_proven(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # deals 0 and 1: 0 lost in no moves (proven), 1 won in more moves than its bound
    lines = run(capsys, "--stats", "2", "--max-nodes", "60000", "--fewest-moves")
    assert lines[0] == "deals: 2  won: 1  lost: 1  unknown: 0"
    assert lines[7] == "fewest moves proven: 1 of 2 decided deals (50.0%)"
    assert lines[8].startswith("line moves: p10 0  p50 0  p90 ")
    assert lines[9].startswith("line above its lower bound by: p50 0  p90 ")
    assert lines[10].startswith("peak memory: ")


def test_a_budget_too_small_prints_unknown_and_a_lower_bound(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = str(Seed((7).to_bytes(10, "big")))
    lines = run(capsys, "--seed", code, "--rules", "classic", "--max-nodes", "50")
    assert lines[1].startswith("verdict: unknown (")
    assert lines[1].endswith(" placed without redeal, at least; nodes budget ran out)")
    assert lines[4].startswith("par: at least ") and " (unknown): " in lines[4]


def test_the_statistics_mode_prints_the_share_beside_the_published_figure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = run(capsys, "--stats", "2", "--max-nodes", "2000")
    assert lines[0] == "deals: 2  won: 0  lost: 1  unknown: 1"
    assert lines[1] == "winnable: 0.0% proven (up to 50.0% if every unknown is winnable)"
    assert lines[4] == "published (Blake and Gent 2019): 85.8% +- 3.7%"
    assert lines[5].startswith("solve time s: p10 ")


@pytest.mark.parametrize(("order", "won"), [("best-first", 1), ("depth-first", 0)])
def test_the_statistics_mode_searches_in_the_order_asked(
    capsys: pytest.CaptureFixture[str], order: str, won: int
) -> None:
    lines = run(capsys, "--stats", "1", "--first", "2", "--max-nodes", "20000", "--order", order)
    assert lines[0] == f"deals: 1  won: {won}  lost: 0  unknown: {1 - won}"


def test_a_bad_share_code_is_a_usage_error_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--seed", "not!a-code"])
    assert stop.value.code == 2
    assert "not!a-code" in capsys.readouterr().err


def test_the_statistics_lines_count_unknown_deals_as_possible_wins() -> None:
    lines = stats_lines(Stats(won=8, lost=1, unknown=1, seconds=[0.5] * 10, peak_mb=12.0))
    assert lines[1] == "winnable: 80.0% proven (up to 90.0% if every unknown is winnable)"
    assert lines[-1] == "peak memory: 12.0 MB"


def test_the_wilson_interval_matches_its_textbook_values() -> None:
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)


def test_the_clopper_pearson_interval_matches_its_textbook_values() -> None:
    assert clopper_pearson(5, 10) == pytest.approx((0.1871, 0.8129), abs=1e-4)
    assert clopper_pearson(0, 10) == pytest.approx((0.0, 0.3085), abs=1e-4)
    assert clopper_pearson(10, 10) == pytest.approx((0.6915, 1.0), abs=1e-4)


def test_an_interval_of_no_trials_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one trial"):
        wilson(0, 0)
    with pytest.raises(ValueError, match="at least one trial"):
        clopper_pearson(0, 0)


def test_a_percentile_is_the_nearest_rank() -> None:
    assert percentile([3.0, 1.0, 2.0, 4.0], 0.5) == 2.0
    assert percentile([3.0, 1.0, 2.0, 4.0], 1.0) == 4.0
