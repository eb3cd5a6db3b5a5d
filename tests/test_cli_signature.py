"""client_cli.signature and `gaps verify`'s signature check: a signed replay holds, a
changed one is refused, an unsigned one proves only its own consistency; keys from the
server or from a file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from client_cli.signature import (
    BadKeys,
    PublicKey,
    Verdict,
    check,
    keys_from_file,
    keys_from_listing,
)
from gaps.canonical import key_id, to_base64url
from server.app import Server
from server.signing import published, raw_public_key, sign
from server.storage.signing_keys import StoredKey
from tests.cli_support import gaps
from tests.client import http_get
from tests.fake_clock import FakeClock
from tests.test_signing import Connect, public_pem, race_of_equals, scaled_and_swapped

pytestmark = pytest.mark.usefixtures("config_dir")

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
RAW = raw_public_key(KEY)
KEYS = {key_id(RAW): PublicKey(key_id(RAW), RAW)}
DOCUMENT = {"format": "test/1", "name": "ana", "score": 12}


def test_a_signed_document_holds_and_any_change_breaks_it() -> None:
    signed = sign(DOCUMENT, KEY)
    assert check(signed, KEYS).verdict is Verdict.HOLDS
    for changed in ({"score": 13}, {"name": "anA"}, {"extra": None}, {"format": "test/2"}):
        outcome = check({**signed, **changed}, KEYS)
        assert (outcome.verdict, outcome.refused) == (Verdict.BROKEN, True), changed
    reordered = dict(reversed(list(signed.items())))  # the order of members is no content
    assert check(reordered, KEYS).verdict is Verdict.HOLDS


@pytest.mark.parametrize(("signature", "words"), [
    ("abc", "signature is not an object"),
    ({"alg": "RS256", "key_id": "k", "value": "v"}, "signature.alg is 'RS256'"),
    ({"alg": "Ed25519", "key_id": 7, "value": "v"}, "signature.key_id is not text"),
    ({"alg": "Ed25519", "key_id": "k", "value": "short"}, "signature.value is not 64 bytes"),
    ({"alg": "Ed25519", "key_id": "k", "value": None}, "signature.value is not 64 bytes"),
])
def test_a_signature_that_cannot_be_read_is_refused_saying_why(
    signature: Any, words: str
) -> None:
    outcome = check({**DOCUMENT, "signature": signature}, KEYS)
    assert outcome.verdict is Verdict.UNREADABLE and outcome.refused
    assert outcome.detail.startswith(words)


def test_a_signature_by_a_key_not_trusted_or_not_the_one_asked_for_is_refused() -> None:
    other = Ed25519PrivateKey.generate()
    by_other = sign(DOCUMENT, other)
    outcome = check(by_other, KEYS)
    assert outcome.verdict is Verdict.UNKNOWN_KEY and outcome.refused
    assert f"key {key_id(raw_public_key(other))} is not one of the keys trusted here" in (
        outcome.detail
    )
    pinned = check(sign(DOCUMENT, KEY), KEYS, only="0" * 16)
    assert pinned.verdict is Verdict.UNKNOWN_KEY and "not by 0000000000000000" in pinned.detail


def test_a_signed_document_with_no_canonical_form_is_refused() -> None:
    signed = sign(DOCUMENT, KEY)
    outcome = check({**signed, "score": 12.0}, KEYS)
    assert outcome.verdict is Verdict.BROKEN and "integers only" in outcome.detail


def test_an_unsigned_document_is_said_to_prove_only_its_consistency() -> None:
    outcome = check(DOCUMENT, KEYS)
    assert outcome.verdict is Verdict.UNSIGNED and not outcome.refused
    assert "proves only its own consistency" in outcome.detail


def listing(*keys: Ed25519PrivateKey) -> dict[str, Any]:
    """``/keys`` as a server that signed with ``keys`` lists them."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    stored = [StoredKey(n, key_id(raw_public_key(k)), raw_public_key(k), None, at)
              for n, k in enumerate(keys, 1)]
    return {"keys": [published(key, retired_at=None) for key in stored]}


def test_keys_are_read_from_the_servers_listing_a_saved_one_or_a_pem_file() -> None:
    assert keys_from_listing(listing(KEY)) == {
        key_id(RAW): PublicKey(key_id(RAW), RAW, status="current")
    }
    assert keys_from_file(json.dumps(listing(KEY)).encode()) == keys_from_listing(listing(KEY))
    assert keys_from_file(public_pem(KEY)) == KEYS


@pytest.mark.parametrize(("data", "words"), [
    (b"[]", "not a list of keys"),
    (b'{"keys": [{"alg": "RSA"}]}', "key #1 is no Ed25519 key"),
    (b'{"keys": [{"alg": "Ed25519", "public_key": "AAAA"}]}', "key #1: public_key is not 32"),
    (json.dumps({"keys": [{"alg": "Ed25519", "public_key": to_base64url(RAW),
                           "key_id": "0" * 16}]}).encode(), "key #1: key_id '0000000000000000'"),
    (b"-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n", "no PEM public key"),
    (b"\xff\xfe", "neither a PEM public key nor JSON"),
])
def test_keys_that_cannot_be_read_are_refused_saying_why(data: bytes, words: str) -> None:
    with pytest.raises(BadKeys) as refused:
        keys_from_file(data)
    assert str(refused.value).startswith(words)


# -- gaps verify ---------------------------------------------------------------------------------


async def saved(server: Server, path: str, target: Path) -> dict[str, Any]:
    status, document = await http_get(server.port, path)
    assert status == 200
    target.write_text(json.dumps(document))
    return dict(document)


async def test_gaps_verify_checks_the_servers_signature_and_refuses_a_forged_replay(
    server: Server, connect: Connect, clock: FakeClock, ws_url: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = await race_of_equals(connect, clock)
    real = tmp_path / "real.json"
    document = await saved(server, f"/matches/{code}/replay", real)
    key = server.signer.key_id

    assert await gaps("verify", str(real), "--server", ws_url) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "✓ The recorded result holds" in out
    assert (f"✓ The signature holds: signed by key {key}, published by {ws_url}; the "
            "document is exactly as the server signed it.") in out

    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(scaled_and_swapped(document, "ana", 3)))
    assert await gaps("verify", str(forged), "--server", ws_url) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "✓ The recorded result holds" in out  # consistent: only the signature tells
    assert (f"✗ The signature does NOT hold: the document is not what key {key} signed: it "
            "was changed after signing, or the signature was made up.") in out

    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(json.dumps({k: v for k, v in json.loads(forged.read_text()).items()
                                    if k != "signature"}))
    assert await gaps("verify", str(unsigned), "--server", ws_url) == 3
    out = " ".join(capsys.readouterr().out.split())
    assert "! Unsigned: this document proves only its own consistency" in out

    # Offline, with the key saved as the server lists it, or as a PEM public key.
    keys = tmp_path / "keys.json"
    await saved(server, "/keys", keys)
    assert await gaps("verify", str(real), "--key", str(keys), "--server", "ws://127.0.0.1:1") == 0
    assert f"signed by key {key}, from {keys}" in " ".join(capsys.readouterr().out.split())
    assert await gaps("verify", str(forged), "--key", str(keys)) == 1
    assert await gaps("verify", str(real), "--key", str(keys), "--key-id", key) == 0
    assert await gaps("verify", str(real), "--key", str(keys), "--key-id", "0" * 16) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert f"it was signed by key {key}, not by {'0' * 16}" in out


async def test_gaps_verify_without_the_servers_keys_says_the_signature_is_unchecked(
    server: Server, connect: Connect, clock: FakeClock, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = await race_of_equals(connect, clock)
    real = tmp_path / "real.json"
    await saved(server, f"/matches/{code}/replay", real)
    assert await gaps("verify", str(real), "--server", "ws://127.0.0.1:1") == 3
    out = " ".join(capsys.readouterr().out.split())
    assert f"! Not checked: signed by key {server.signer.key_id}, but the keys of " in out
    assert "Give the key: --key FILE" in out

    for bad, words in (("missing.pem", "cannot read"), ("bad.pem", "holds no key to check")):
        if bad == "bad.pem":
            (tmp_path / bad).write_text("[]")
        assert await gaps("verify", str(real), "--key", str(tmp_path / bad)) == 2
        assert words in capsys.readouterr().err


async def test_gaps_verify_checks_the_signature_of_a_daily_board(
    server: Server, ws_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    board = tmp_path / "daily.json"
    document = await saved(server, "/daily/classic", board)
    assert await gaps("verify", str(board), "--server", ws_url) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "A gaps-daily/1 document: its signature is checked; only replays" in out
    assert "✓ The signature holds" in out
    board.write_text(json.dumps({**document, "entries": [{"rank": 1, "name": "me"}]}))
    assert await gaps("verify", str(board), "--server", ws_url) == 1
