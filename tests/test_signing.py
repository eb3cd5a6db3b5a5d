"""server.signing: replays and daily boards signed with the cluster's Ed25519 key, its
public keys at /keys, a rotation, an operator's key file; and the issue's cases: a signed
replay verifies, the same replay with its times scaled and its ranks swapped does not,
and after a key rotation old replays still verify with the old public key."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from client_cli.signature import PublicKey, Verdict, check, keys_from_file, keys_from_listing
from client_cli.verify import verify
from gaps import Game
from gaps.canonical import from_base64url, key_id, signed_bytes
from gaps_protocol.times import format_time
from server.app import Server
from server.config import Settings
from server.signing import REFRESH_S, Signer, SigningKeyError, rotate, sign
from server.storage.store import Store
from tests.client import Client, http_get
from tests.fake_clock import FakeClock
from tests.test_cli_verify import winning_line

Connect = Callable[[], Awaitable[Client]]

PROTOCOL = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"
#: RFC 8032's first test key, which docs/protocol.md's example is signed with.
RFC_8032_SECRET = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"


def pem(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


def public_pem(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)


async def published_keys(server: Server) -> dict[str, PublicKey]:
    status, body = await http_get(server.port, "/keys")
    assert status == 200
    return keys_from_listing(body)


# -- the documented example -----------------------------------------------------------------


def documented(label: str) -> str:
    found = re.search(rf"```\w+ {label}\n(.*?)\n```", PROTOCOL.read_text(), re.S)
    assert found is not None, f"docs/protocol.md has no {label} block"
    return found.group(1)


def test_the_documented_example_is_signed_as_the_docs_say() -> None:
    document = json.loads(documented("example-signed"))
    assert signed_bytes(document).decode() == documented("example-canonical")
    private_key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(RFC_8032_SECRET))
    raw = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" in PROTOCOL.read_text()
    assert from_base64url("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo") == raw
    assert document["signature"]["key_id"] == key_id(raw)
    assert sign(document, private_key) == document  # Ed25519 signs deterministically
    verdict = check(document, {key_id(raw): PublicKey(key_id(raw), raw)}).verdict
    assert verdict is Verdict.HOLDS


# -- the signer ----------------------------------------------------------------------------------


@pytest.fixture
def store(migrated_engine: AsyncEngine) -> Store:
    return Store(migrated_engine)


async def test_the_first_start_makes_a_key_and_every_later_start_takes_it(
    store: Store,
) -> None:
    clock = FakeClock()
    signers = [Signer(store.signing_keys, clock=clock) for _ in range(3)]
    await asyncio.gather(*(signer.start() for signer in signers))  # replicas at once
    assert len({signer.key_id for signer in signers}) == 1
    later = Signer(store.signing_keys, clock=clock)
    await later.start()
    assert later.key_id == signers[0].key_id
    listing = await later.published()
    assert [key["key_id"] for key in listing["keys"]] == [later.key_id]
    assert listing["keys"][0]["status"] == "current" and listing["keys"][0]["retired_at"] is None
    document = {"format": "test/1", "n": 1}
    signed = await signers[1].sign(document)
    assert signed["signature"]["key_id"] == later.key_id and signed["n"] == 1
    assert check(signed, keys_from_listing(listing)).verdict is Verdict.HOLDS
    assert await signers[2].sign(signed) == signed  # a signature is replaced, not signed over


async def test_a_rotation_is_taken_up_within_the_refresh_and_the_old_key_stays_listed(
    store: Store,
) -> None:
    clock = FakeClock()
    signer = Signer(store.signing_keys, clock=clock)
    await signer.start()
    old = signer.key_id
    new = await rotate(store.signing_keys, now=clock.now(), key_file=None)
    clock.advance(REFRESH_S - 1)
    assert (await signer.sign({"format": "test/1"}))["signature"]["key_id"] == old
    clock.advance(1)
    assert (await signer.sign({"format": "test/1"}))["signature"]["key_id"] == new.key_id
    keys = (await signer.published())["keys"]
    assert [(key["key_id"], key["status"]) for key in keys] == [
        (new.key_id, "current"), (old, "retired")
    ]
    assert keys[1]["retired_at"] == keys[0]["created_at"] == format_time(new.created_at)


async def test_an_operators_key_file_signs_and_only_its_public_half_is_stored(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    own = Signer(store.signing_keys, clock=clock)
    await own.start()  # the servers' own key first, as a cluster that had one
    private_key = Ed25519PrivateKey.generate()
    path = tmp_path / "signing-key.pem"
    path.write_bytes(pem(private_key))
    given = Signer(store.signing_keys, clock=clock, key_file=path)
    await given.start()
    public = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert given.key_id == key_id(public)
    stored = await store.signing_keys.current()
    assert stored is not None and stored.key_id == given.key_id and stored.private_key is None
    signed = await given.sign({"format": "test/1"})
    assert check(signed, keys_from_file(public_pem(private_key))).verdict is Verdict.HOLDS
    # A process without the file keeps its own key, and says why once.
    with caplog.at_level(logging.WARNING, logger="gaps.signing"):
        clock.advance(REFRESH_S)
        for _ in range(2):
            assert (await own.sign({}))["signature"]["key_id"] != given.key_id
            clock.advance(REFRESH_S)
    assert [r.message for r in caplog.records].count(
        "the current signing key is the operator's: this process keeps signing with its "
        "own until it is started with --signing-key-file"
    ) == 1
    # A process started without the file cannot sign with the current key: it says so.
    with pytest.raises(SigningKeyError, match=f"{given.key_id} was given by the operator"):
        await Signer(store.signing_keys, clock=clock).start()
    # The file's key again (a restart): published once.
    await Signer(store.signing_keys, clock=clock, key_file=path).start()
    assert [key.key_id for key in await store.signing_keys.all()] == [own.key_id, given.key_id]


async def test_a_rotation_to_a_key_stored_already_is_refused(store: Store, tmp_path: Path) -> None:
    clock = FakeClock()
    path = tmp_path / "key.pem"
    path.write_bytes(pem(Ed25519PrivateKey.generate()))
    await Signer(store.signing_keys, clock=clock, key_file=path).start()
    with pytest.raises(SigningKeyError, match="a rotation needs a new key"):
        await rotate(store.signing_keys, now=clock.now(), key_file=path)


@pytest.mark.parametrize(("content", "words"), [
    (None, "cannot read the signing key file"),
    (b"not a key", "holds no unencrypted PEM private key"),
    (generate_private_key(SECP256R1()).private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()), "not an Ed25519 key"),
], ids=["missing", "no key", "an EC key"])
async def test_a_key_file_that_holds_no_ed25519_key_is_refused_saying_why(
    store: Store, tmp_path: Path, content: bytes | None, words: str
) -> None:
    path = tmp_path / "key.pem"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SigningKeyError, match=words):
        await Signer(store.signing_keys, clock=FakeClock(), key_file=path).start()


# -- the cases, on a real server --------------------------------------------------------


async def race_of_equals(connect: Connect, clock: FakeClock) -> str:
    """ana and bob both win the same deal (by time): ana a second sooner, so she ranks
    first. Returns the match's code, once it ended."""
    seed, line = winning_line()
    ana, bob = await connect(), await connect()
    await ana.register("ana")
    await bob.register("bob")
    code = (await ana.ok("create_match", max_players=2, countdown_s=0, seed=seed))["match"]["code"]
    await bob.ok("join_match", code=code)
    for player in (ana, bob):
        await player.ok("ready", code=code)
    for player in (ana, bob):
        dealt = await player.event("started", match=code)
        assert Game.from_layout("\n".join(dealt["grid"])).score == 0
    for player in (ana, bob):
        clock.advance(1)
        for action in line:
            assert (await player.act(code, action))["type"] == "action_ok"
    await ana.event("match_ended", match=code)
    return str(code)


def scaled_and_swapped(document: dict[str, Any], name: str, factor: int) -> dict[str, Any]:
    """The replay with ``name``'s times multiplied by ``factor`` and the ranks swapped:
    consistent with itself, another winner."""
    forged = copy.deepcopy(document)
    for player in forged["players"]:
        if player["name"] == name:
            for action in player["actions"]:
                action["t_ms"] *= factor
            player["finish_ms"] *= factor
    ranks = [player["rank"] for player in forged["players"]]
    for player, rank in zip(forged["players"], reversed(ranks), strict=True):
        player["rank"] = rank
    return forged


async def test_a_signed_replay_verifies_and_with_times_scaled_and_ranks_swapped_it_does_not(
    server: Server, connect: Connect, clock: FakeClock
) -> None:
    code = await race_of_equals(connect, clock)
    status, document = await http_get(server.port, f"/matches/{code}/replay")
    assert status == 200
    watcher = await connect()
    await watcher.register("cyd")
    over_websocket = (await watcher.ok("get_replay", code=code))["replay"]
    assert over_websocket == document
    keys = await published_keys(server)
    assert [(p["name"], p["rank"]) for p in document["players"]] == [("ana", 1), ("bob", 2)]
    assert verify(document).holds
    signed = check(document, keys)
    assert signed.verdict is Verdict.HOLDS and signed.key_id == server.signer.key_id

    forged = scaled_and_swapped(document, "ana", 3)
    assert [(p["name"], p["rank"]) for p in forged["players"]] == [("ana", 2), ("bob", 1)]
    report = verify(forged)
    assert report.holds, report.discrepancies  # consistent with itself: no proof alone
    refused = check(forged, keys)
    assert refused.verdict is Verdict.BROKEN and refused.refused
    assert "not what key" in refused.detail
    stripped = {k: v for k, v in forged.items() if k != "signature"}
    assert check(stripped, keys).verdict is Verdict.UNSIGNED  # proves only its consistency


async def test_after_a_rotation_old_replays_still_verify_with_the_old_public_key(
    server: Server, connect: Connect, clock: FakeClock
) -> None:
    code = await race_of_equals(connect, clock)
    old_key = server.signer.key_id
    _, before = await http_get(server.port, f"/matches/{code}/replay")
    old_public = (await published_keys(server))[old_key]

    new = await rotate(server.store.signing_keys, now=clock.now(), key_file=None)
    clock.advance(REFRESH_S)
    _, after = await http_get(server.port, f"/matches/{code}/replay")
    assert before["signature"]["key_id"] == old_key
    assert after["signature"]["key_id"] == new.key_id != old_key
    assert {k: v for k, v in after.items() if k != "signature"} == {
        k: v for k, v in before.items() if k != "signature"
    }

    _, listing = await http_get(server.port, "/keys")
    assert [(k["key_id"], k["status"]) for k in listing["keys"]] == [
        (new.key_id, "current"), (old_key, "retired")
    ]
    keys = keys_from_listing(listing)
    for document in (before, after):
        assert check(document, keys).verdict is Verdict.HOLDS
    only_old = {old_key: old_public}  # what a player saved before the rotation
    assert check(before, only_old).verdict is Verdict.HOLDS
    assert check(after, only_old).verdict is Verdict.UNKNOWN_KEY
    assert check(before, keys).key == replace(old_public, status="retired",
                                              retired_at=format_time(new.created_at))


async def test_the_daily_board_is_signed_over_http_and_over_the_websocket(
    server: Server, connect: Connect
) -> None:
    ana = await connect()
    await ana.register("ana")
    keys = await published_keys(server)
    status, board = await http_get(server.port, "/daily/classic")
    assert status == 200 and board["format"] == "gaps-daily/1"
    assert check(board, keys).verdict is Verdict.HOLDS
    reply = await ana.ok("daily_board", ruleset="classic")
    envelope = {"type", "id"}
    document = {k: v for k, v in reply.items() if k not in envelope}
    assert check(document, keys).verdict is Verdict.HOLDS
    assert check({**document, "day": "2001-01-01"}, keys).verdict is Verdict.BROKEN


async def test_a_tournament_export_is_signed_and_a_changed_score_breaks_it(
    server: Server, connect: Connect
) -> None:
    host, ana = await connect(), await connect()
    await host.register("host")
    await ana.register("ana")
    code = (await host.ok("tournament_create", rounds=1))["tournament"]["code"]
    await ana.ok("tournament_join", code=code)
    keys = await published_keys(server)
    for name in ("standings", "rounds"):
        status, document = await http_get(server.port, f"/tournaments/{code}/{name}.json")
        assert status == 200 and document["format"] == "gaps-tournament-export/1"
        assert check(document, keys).verdict is Verdict.HOLDS
    status, standings = await http_get(server.port, f"/tournaments/{code}/standings.json")
    forged = copy.deepcopy(standings)
    forged["rows"][0]["total_score"] += 10
    assert check(forged, keys).verdict is Verdict.BROKEN


async def test_a_server_refuses_to_start_when_it_cannot_sign_with_the_current_key(
    settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "key.pem"
    path.write_bytes(pem(Ed25519PrivateKey.generate()))
    given = Server(replace(settings, signing_key_file=path))
    await given.start()
    try:
        status, listing = await http_get(given.port, "/keys")
        assert status == 200 and listing["keys"][0]["key_id"] == given.signer.key_id
    finally:
        await given.close()
    without = Server(settings)
    with pytest.raises(SigningKeyError, match="start with --signing-key-file"):
        await without.start()
    await without.close()


# -- gaps-server rotate-signing-key ---------------------------------------------------------


def gaps_server(*argv: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    """``gaps-server ARGV`` as its own process (it configures the process's logging), on
    the SQLite database in ``data_dir``."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith("GAPS_") and k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "server", *argv, "--data-dir", str(data_dir)],
        capture_output=True, text=True, env=environment, timeout=60, check=False,
    )


def test_rotate_signing_key_makes_a_new_key_current_and_says_what_to_do(tmp_path: Path) -> None:
    first = gaps_server("rotate-signing-key", data_dir=tmp_path)
    assert first.returncode == 0, first.stderr
    assert re.fullmatch(
        r"the current signing key is now [0-9a-f]{16}\n"
        rf"running servers sign with it within {REFRESH_S:.0f} s\n", first.stdout
    )
    second = gaps_server("rotate-signing-key", data_dir=tmp_path)
    assert f"{first.stdout.split()[6]} is retired: still published at /keys" in second.stdout

    path = tmp_path / "new.pem"
    path.write_bytes(pem(Ed25519PrivateKey.generate()))
    given = gaps_server("rotate-signing-key", "--new-key-file", str(path), data_dir=tmp_path)
    assert f"start every server with --signing-key-file {path}" in given.stdout
    again = gaps_server("rotate-signing-key", "--new-key-file", str(path), data_dir=tmp_path)
    assert again.returncode == 1
    assert again.stderr.splitlines()[-1].startswith("refused: the key ")  # after the logs
    assert "a rotation needs a new key" in again.stderr
