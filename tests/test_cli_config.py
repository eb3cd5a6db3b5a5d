"""client_cli.config: the config file in the XDG config dir, server URLs, GAPS_SERVER."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from client_cli.config import (
    DEFAULT_SERVER,
    Account,
    Config,
    ConfigError,
    config_dir,
    http_base,
    normalize_server,
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GAPS_SERVER", raising=False)
    monkeypatch.delenv("GAPS_CONFIG_DIR", raising=False)


@pytest.mark.parametrize(("typed", "url"), [
    ("ws://example.org:8765", "ws://example.org:8765"),
    ("example.org:8765", "ws://example.org:8765"),
    ("http://example.org:8765/", "ws://example.org:8765"),
    ("https://gaps.example.org", "wss://gaps.example.org"),
    ("  WS://Example.org:1/  ", "ws://Example.org:1"),
])
def test_server_urls_are_normalized(typed: str, url: str) -> None:
    assert normalize_server(typed) == url


@pytest.mark.parametrize("typed", ["", "ftp://example.org", "ws://", "ws://host:99999"])
def test_bad_server_urls_are_refused_with_the_url_quoted(typed: str) -> None:
    with pytest.raises(ConfigError):
        normalize_server(typed)


def test_the_http_address_is_the_same_host_and_port() -> None:
    assert http_base("ws://127.0.0.1:8765") == "http://127.0.0.1:8765"
    assert http_base("wss://gaps.example.org") == "https://gaps.example.org"


def test_the_config_lives_in_the_xdg_config_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_dir() == tmp_path / "xdg" / "gaps"
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "elsewhere"))
    assert config_dir() == tmp_path / "elsewhere"


def test_accounts_and_bots_round_trip_per_server_in_a_private_file(tmp_path: Path) -> None:
    config = Config.load(tmp_path / "gaps" / "config.json")
    assert config.account("ws://a:1") is None and config.server is None
    config.set_account("a:1", Account("ana", "secret-a", 1))
    config.add_bot("ws://a:1", Account("bot-00aa", "secret-b", 2))
    config.add_bot("ws://b:2", Account("bot-00bb", "secret-c", 3))
    config.save()
    mode = stat.S_IMODE((tmp_path / "gaps" / "config.json").stat().st_mode)
    assert mode == 0o600  # it holds tokens
    again = Config.load(tmp_path / "gaps" / "config.json")
    assert again.server == "ws://a:1"
    assert again.account("ws://a:1") == Account("ana", "secret-a", 1)
    assert again.account("ws://b:2") is None
    assert [bot.name for bot in again.bot_accounts("ws://a:1")] == ["bot-00aa"]
    again.drop_bot("ws://a:1", "bot-00aa")
    assert again.bot_accounts("ws://a:1") == []


def test_the_server_comes_from_the_flag_then_the_environment_then_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = Config(tmp_path / "config.json")
    assert config.resolve_server() == DEFAULT_SERVER
    config.server = "ws://from-file:1"
    assert config.resolve_server() == "ws://from-file:1"
    monkeypatch.setenv("GAPS_SERVER", "from-env:2")
    assert config.resolve_server() == "ws://from-env:2"
    assert config.resolve_server("from-flag:3") == "ws://from-flag:3"


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"accounts": {"ws://a:1": 5}}',
                                     '{"server": 7}'])
def test_a_damaged_config_file_is_a_clear_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match="config.json"):
        Config.load(path)


def test_the_file_is_plain_json(tmp_path: Path) -> None:
    config = Config(tmp_path / "config.json")
    config.set_account("ws://a:1", Account("ana", "t", 4))
    config.save()
    data = json.loads((tmp_path / "config.json").read_text())
    assert data["accounts"]["ws://a:1"] == {"name": "ana", "token": "t", "player_id": 4}


def test_the_colour_setting_is_kept_and_a_wrong_one_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    assert Config.load(path).colours == "dark"
    config = Config.load(path)
    config.colours = "light"
    config.save()
    assert Config.load(path).colours == "light"
    path.write_text(json.dumps({"colours": "sepia"}))
    with pytest.raises(ConfigError, match="'colours' is 'sepia', not one of dark, light"):
        Config.load(path)
