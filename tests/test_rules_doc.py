"""docs/rules.md against the code: every test vector, the reason table, the ruleset table.

Each vector is checked twice: against the engine, and against a small independent
implementation of the generator written from the doc's own words (section 11), so a
vector that only the engine could reproduce would fail too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gaps import RULESETS, Card, Game, Seed, Slot, parse_action
from gaps.errors import REASONS, NotationError
from gaps.game import redealt_grid
from gaps.replay import replay
from gaps.shuffle import shuffle, stream_words
from gaps.state import decode_state, encode_state, parse_state, state_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
FENCE = re.compile(r"^```gaps-vector\n(.*?)^```$", re.S | re.M)
LAYOUT_KEYS = {"grid", "before", "after"}


def parse_vectors(text: str) -> list[dict[str, str]]:
    """Every ``gaps-vector`` block as a dict; layout values are their 4 lines."""
    vectors = []
    for body in FENCE.findall(text):
        lines = body.splitlines()
        vector: dict[str, str] = {}
        i = 0
        while i < len(lines):
            key, _, value = lines[i].partition(":")
            key, value = key.strip(), value.strip()
            if key in LAYOUT_KEYS and not value:
                vector[key] = "\n".join(lines[i + 1 : i + 5])
                i += 5
            else:
                vector[key] = value
                i += 1
        vectors.append(vector)
    return vectors


VECTORS = parse_vectors(DOC.read_text(encoding="utf-8"))


def of_kind(kind: str) -> list[dict[str, str]]:
    return [vector for vector in VECTORS if vector["kind"] == kind]


def vector_id(vector: dict[str, str]) -> str:
    parts = [vector["kind"], vector.get("ruleset", ""), vector.get("label", "")]
    parts += [vector.get("hex", "")[:6], vector.get("redeal", "")]
    return "-".join(part for part in parts if part)


# -- a reference implementation of section 11, from the doc's words ----------------------


def reference_words(seed: bytes, label: bytes, count: int) -> list[int]:
    key = hashlib.sha256(seed).digest()
    words: list[int] = []
    block = 0
    while len(words) < count:
        digest = hashlib.sha256(key + label + block.to_bytes(8, "big")).digest()
        words += [int.from_bytes(digest[k : k + 4], "big") for k in range(0, 32, 4)]
        block += 1
    return words[:count]


def reference_shuffle_rejecting(
    items: list[int], seed: bytes, label: bytes
) -> tuple[list[int], list[int]]:
    """The shuffled list, and the indexes of the stream words its draws threw away."""
    items = list(items)
    words = reference_words(seed, label, 4 * len(items) + 8)
    used = 0
    rejected = []
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        while words[used] >= 2**32 - 2**32 % n:
            rejected.append(used)
            used += 1
        j = words[used] % n
        used += 1
        items[i], items[j] = items[j], items[i]
    return items, rejected


def reference_shuffle(items: list[int], seed: bytes, label: bytes) -> list[int]:
    return reference_shuffle_rejecting(items, seed, label)[0]


def never_rejecting_shuffle(items: list[int], seed: bytes, label: bytes) -> list[int]:
    """The shuffle of a port that forgot the rejection step: word k is always draw k."""
    items = list(items)
    words = reference_words(seed, label, len(items))
    for k, i in enumerate(range(len(items) - 1, 0, -1)):
        j = words[k] % (i + 1)
        items[i], items[j] = items[j], items[i]
    return items


def reference_deal(seed: bytes, ruleset: str) -> list[int | None]:
    grid: list[int | None] = [
        None if code % 13 == 0 else code
        for code in reference_shuffle(list(range(52)), seed, b"deal")
    ]
    if ruleset == "montana":
        twos = [code for code in grid if code is not None and code % 13 == 1]
        for row, two in enumerate(twos):
            here = grid.index(two)
            grid[here], grid[row * 13] = grid[row * 13], grid[here]
    return grid


def reference_redeal(grid: list[int | None], ruleset: str, seed: bytes, k: int) -> list[int | None]:
    kept: set[int] = set()
    new_gaps: set[int] = set()
    for row in range(4):
        start = row * 13
        first = grid[start]
        run = 0
        if first is not None and first % 13 == 1:
            while run < 12 and grid[start + run] == first + run:
                run += 1
            if ruleset in ("classic", "montana", "addiction"):
                kept.update(range(start, start + run))
            elif ruleset == "paganini":
                kept.update(start + c for c in range(12) if grid[start + c] == first + c)
        if ruleset in ("classic", "montana", "paganini"):
            new_gaps.add(start + run)
        elif ruleset == "spaces":
            new_gaps.add(start)
    collected = [code for i, code in enumerate(grid) if code is not None and i not in kept]
    if ruleset == "addiction":
        collected += [0, 13, 26, 39]
    dealt = iter(reference_shuffle(sorted(collected), seed, b"redeal-%d" % k))
    after = [
        grid[i] if i in kept else None if i in new_gaps else next(dealt) for i in range(52)
    ]
    return [None if code is not None and code % 13 == 0 else code for code in after]


def as_codes(layout: str) -> list[int | None]:
    return [None if code < 0 else code for code in Game.from_layout(layout).grid_codes()]


def as_layout(grid: list[int | None]) -> str:
    return Game.restore(Seed(b"x"), "classic", [-1 if c is None else c for c in grid]).layout()


# -- the checks -----------------------------------------------------------------------


def check_seed(vector: dict[str, str]) -> bytes:
    data = bytes.fromhex(vector["hex"])
    if "seed" in vector:
        assert Seed.parse(vector["seed"]).data == data
        assert str(Seed(data)) == vector["seed"]
    return data


def check_vector(vector: dict[str, str]) -> None:
    """Raise AssertionError unless ``vector`` agrees with the code and the reference."""
    kind = vector["kind"]
    data = check_seed(vector)
    if kind == "stream":
        words = [int(word, 16) for word in vector["words"].split()]
        label = vector["label"].encode()
        assert stream_words(data, label, len(words)) == words
        assert reference_words(data, label, len(words)) == words
    elif kind == "shuffle":
        assert vector["items"] == "0..51"
        expected = [int(code) for code in vector["result"].split()]
        items = list(range(52))
        shuffle(items, data, vector["label"].encode())
        assert items == expected
        shuffled, rejected = reference_shuffle_rejecting(
            list(range(52)), data, vector["label"].encode()
        )
        assert shuffled == expected
        assert (" ".join(map(str, rejected)) or "none") == vector["rejected"]
    elif kind == "deal":
        ruleset = vector["ruleset"]
        assert Game(Seed(data), ruleset).layout() == vector["grid"]
        assert as_layout(reference_deal(data, ruleset)) == vector["grid"]
    elif kind == "redeal":
        ruleset, k = vector["ruleset"], int(vector["redeal"])
        game = Game.from_layout(vector["before"], ruleset, seed=Seed(data), redeals_used=k - 1)
        assert game.layout() == vector["before"]
        game.redeal()
        assert game.layout() == vector["after"]
        before = list(Game.from_layout(vector["before"]).grid_codes())
        direct = redealt_grid(before, RULESETS[ruleset], Seed(data), k)
        assert tuple(direct) == Game.from_layout(vector["after"]).grid_codes()
        reference = reference_redeal(as_codes(vector["before"]), ruleset, data, k)
        assert as_layout(reference) == vector["after"]
    elif kind == "state":
        result = replay(Seed(data), vector["ruleset"], vector["actions"].split())
        assert result.ok
        assert encode_state(result.game).hex() == vector["bytes"]
        assert state_text(result.game) == vector["text"]
        assert decode_state(bytes.fromhex(vector["bytes"]), Seed(data)) == result.game
        assert parse_state(vector["text"], Seed(data)) == result.game
    else:
        raise AssertionError(f"unknown vector kind {kind!r}")


@pytest.mark.parametrize("vector", VECTORS, ids=vector_id)
def test_every_vector_in_the_doc_matches_the_code(vector: dict[str, str]) -> None:
    check_vector(vector)


def test_the_doc_publishes_every_kind_of_vector_it_promises() -> None:
    assert len(of_kind("stream")) >= 1
    assert len(of_kind("shuffle")) >= 1
    deals = {(vector["hex"], vector["ruleset"]) for vector in of_kind("deal")}
    seeds = {seed for seed, _ in deals}
    assert len(seeds) >= 3
    assert all((seed, ruleset) in deals for seed in seeds for ruleset in ("classic", "montana"))
    redealt = {vector["ruleset"] for vector in of_kind("redeal")}
    assert {"classic", "spaces", "addiction", "paganini"} <= redealt
    assert len(of_kind("state")) >= 1


def test_a_port_that_never_rejects_a_word_fails_a_shuffle_and_a_deal_vector() -> None:
    shuffles = [
        vector for vector in of_kind("shuffle")
        if never_rejecting_shuffle(list(range(52)), bytes.fromhex(vector["hex"]), b"deal")
        != [int(code) for code in vector["result"].split()]
    ]
    assert shuffles and all(vector["rejected"] != "none" for vector in shuffles)
    seed = bytes.fromhex(shuffles[0]["hex"])
    deals = [vector for vector in of_kind("deal") if vector["hex"] == shuffles[0]["hex"]]
    never_rejecting_grid: list[int | None] = [
        None if code % 13 == 0 else code
        for code in never_rejecting_shuffle(list(range(52)), seed, b"deal")
    ]
    assert {vector["ruleset"] for vector in deals} == {"classic", "montana"}
    classic = next(vector for vector in deals if vector["ruleset"] == "classic")
    assert as_layout(never_rejecting_grid) != classic["grid"]


def test_a_shuffle_vector_with_a_wrong_rejected_list_fails() -> None:
    for vector in of_kind("shuffle"):
        wrong = "none" if vector["rejected"] != "none" else "3"
        with pytest.raises(AssertionError):
            check_vector({**vector, "rejected": wrong})


def test_every_vector_gives_its_seed_as_share_code_and_hex() -> None:
    for vector in of_kind("deal") + of_kind("redeal") + of_kind("state"):
        assert vector["seed"] and vector["hex"]


def swap_first_two_cells(vector: dict[str, str]) -> dict[str, str]:
    cells = vector["grid"].split(" ")
    cells[0], cells[1] = cells[1], cells[0]
    return {**vector, "grid": " ".join(cells)}


def change_the_seed(vector: dict[str, str]) -> dict[str, str]:
    data = bytes([bytes.fromhex(vector["hex"])[0] ^ 0xFF]) + bytes.fromhex(vector["hex"])[1:]
    return {**vector, "hex": data.hex(), "seed": str(Seed(data))}


def change_the_ruleset(vector: dict[str, str]) -> dict[str, str]:
    return {**vector, "ruleset": "montana" if vector["ruleset"] == "classic" else "classic"}


@pytest.mark.parametrize("tamper", [swap_first_two_cells, change_the_seed, change_the_ruleset])
def test_a_deal_vector_that_disagrees_with_the_code_fails(
    tamper: Callable[[dict[str, str]], dict[str, str]],
) -> None:
    for vector in of_kind("deal"):
        with pytest.raises(AssertionError):
            check_vector(tamper(vector))


def test_a_redeal_vector_with_a_wrong_after_grid_fails() -> None:
    vector = dict(of_kind("redeal")[0])
    rows = vector["after"].splitlines()
    rows[0], rows[1] = rows[1], rows[0]
    vector["after"] = "\n".join(rows)
    with pytest.raises(AssertionError):
        check_vector(vector)


def test_a_stream_vector_with_a_wrong_word_fails() -> None:
    vector = dict(of_kind("stream")[0])
    words = vector["words"].split()
    words[-1] = f"{int(words[-1], 16) ^ 1:08x}"
    vector["words"] = " ".join(words)
    with pytest.raises(AssertionError):
        check_vector(vector)


def table_rows(heading: str) -> list[list[str]]:
    """The body rows of the first Markdown table after ``heading``."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    rows = []
    for line in section.splitlines()[1:]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif rows:
            break
    return [row for row in rows[1:] if not set("".join(row)) <= set("-: ")]


def test_the_reason_table_lists_exactly_the_reasons_of_the_code() -> None:
    names = [row[0].strip("`") for row in table_rows("## 8. Refusals")]
    assert names == list(REASONS)


def test_the_ruleset_table_matches_the_rulesets_of_the_code() -> None:
    rows = table_rows("## 5. Rulesets")
    names = [row[0].split()[0].strip("`") for row in rows]
    assert names == list(RULESETS)
    for row in rows:
        ruleset = RULESETS[row[0].split()[0].strip("`")]
        assert int(row[1]) == ruleset.redeals
        assert row[6].startswith("yes") == (ruleset.undo != "none")
        assert (row[2] == "any time") == (ruleset.redeal_when == "any_time")


def test_the_state_table_numbers_the_rulesets_as_the_code_does() -> None:
    rows = table_rows("## 13. The compact state")
    ruleset_row = next(row for row in rows if row[0] == "1")
    numbered = re.findall(r"(\d) `([a-z-]+)`", ruleset_row[2])
    assert [name for _, name in numbered] == list(RULESETS)
    assert [int(index) for index, _ in numbered] == list(range(len(RULESETS)))


def test_the_doc_states_the_score_formula_of_the_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "score = placed - 5 * redeals_used + (10 if won and redeals_used == 0 else 0)" in text
    assert "paganini" in text and "interpretation" in text


@pytest.mark.parametrize(
    ("parse", "text"),
    [(Slot.parse, "r04c1"), (parse_action, "2H>03"), (Card.parse, "Qſ"), (Card.parse, "７H"),
     (Seed.parse, "ﬁ"), (Slot.parse, "r02c5")],
)
def test_the_text_the_doc_says_is_refused_is_refused(
    parse: Callable[[str], object], text: str
) -> None:
    assert f"`{text}`" in DOC.read_text(encoding="utf-8")
    with pytest.raises(NotationError):
        parse(text)
