"""Where the client keeps what it knows: the server URL, the player's token, bot tokens.

One JSON file in the user's config directory (XDG on Linux, via platformdirs), readable
only by its owner because it holds tokens. A token is only good on the server that issued
it, so accounts and bots are kept per server URL.

The server comes from, in order: ``--server``, the ``GAPS_SERVER`` environment variable,
the config file (the server of the last ``gaps register``), then ``ws://127.0.0.1:8765``.
``GAPS_CONFIG_DIR`` moves the whole config directory (handy for tests and several accounts).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import platformdirs

DEFAULT_SERVER: Final = "ws://127.0.0.1:8765"
SERVER_ENV: Final = "GAPS_SERVER"
CONFIG_DIR_ENV: Final = "GAPS_CONFIG_DIR"
CONFIG_FILE: Final = "config.json"
#: The colour settings of the screens (client_cli.palette).
COLOUR_SETTINGS: Final = ("dark", "light")


class ConfigError(Exception):
    """The config file or a server URL cannot be used; the message says why."""


@dataclass(frozen=True)
class Account:
    """A player on one server: the name and the token that proves it."""

    name: str
    token: str
    player_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "token": self.token, "player_id": self.player_id}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Account:
        name, token, player_id = data.get("name"), data.get("token"), data.get("player_id")
        if not isinstance(name, str) or not isinstance(token, str):
            raise ConfigError("an account needs a name and a token")
        if player_id is not None and not isinstance(player_id, int):
            raise ConfigError(f"account {name}: player_id is not a number")
        return Account(name, token, player_id)


def normalize_server(url: str) -> str:
    """``ws://host:port`` from what people type: ``host:port``, ``http://...``, a trailing /."""
    text = url.strip()
    if not text:
        raise ConfigError("the server URL is empty")
    if "://" not in text:
        text = "ws://" + text
    parts = urlsplit(text)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme not in ("ws", "wss"):
        raise ConfigError(f"{url!r} is not a server URL: expected ws://HOST:PORT")
    if not parts.hostname:
        raise ConfigError(f"{url!r} is not a server URL: it names no host")
    try:
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        raise ConfigError(f"{url!r} is not a server URL: bad port") from None
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def http_base(server: str) -> str:
    """The plain HTTP address of a server: the same host and port, ``http(s)://``."""
    parts = urlsplit(normalize_server(server))
    scheme = "https" if parts.scheme == "wss" else "http"
    return urlunsplit((scheme, parts.netloc, parts.path, "", ""))


def config_dir() -> Path:
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override)
    return platformdirs.user_config_path("gaps", appauthor=False)


@dataclass
class Config:
    """The config file's content; ``load()`` reads it, ``save()`` writes it back."""

    path: Path
    server: str | None = None
    accounts: dict[str, Account] = field(default_factory=dict)
    bots: dict[str, list[Account]] = field(default_factory=dict)
    #: The screens' colour setting: ``dark`` or ``light`` (client_cli.palette).
    colours: str = "dark"

    @staticmethod
    def load(path: Path | None = None) -> Config:
        path = path or config_dir() / CONFIG_FILE
        if not path.exists():
            return Config(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read {path}: {error}") from None
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path} is not valid JSON ({error}); fix or delete it") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path} does not hold a JSON object; fix or delete it")
        try:
            server = data.get("server")
            if server is not None and not isinstance(server, str):
                raise ConfigError("'server' is not a string")
            accounts = {
                str(url): Account.from_json(account)
                for url, account in dict(data.get("accounts") or {}).items()
            }
            bots = {
                str(url): [Account.from_json(bot) for bot in list(entries)]
                for url, entries in dict(data.get("bots") or {}).items()
            }
            colours = data.get("colours", "dark")
            if colours not in COLOUR_SETTINGS:
                raise ConfigError(f"'colours' is {colours!r}, not one of "
                                  f"{', '.join(COLOUR_SETTINGS)}")
        except (ConfigError, TypeError, ValueError, AttributeError) as error:
            raise ConfigError(f"{path} is damaged ({error}); fix or delete it") from None
        return Config(path, server, accounts, bots, colours)

    def save(self) -> None:
        data = {
            "server": self.server,
            "colours": self.colours,
            "accounts": {url: account.to_json() for url, account in self.accounts.items()},
            "bots": {url: [bot.to_json() for bot in bots] for url, bots in self.bots.items()},
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as output:
                json.dump(data, output, indent=2)
                output.write("\n")
            os.replace(temporary, self.path)
        except OSError as error:
            raise ConfigError(f"cannot write {self.path}: {error}") from None

    def resolve_server(self, flag: str | None = None) -> str:
        """The server to talk to: the flag, then $GAPS_SERVER, then the file, then the default."""
        for candidate in (flag, os.environ.get(SERVER_ENV), self.server):
            if candidate:
                return normalize_server(candidate)
        return DEFAULT_SERVER

    def account(self, server: str) -> Account | None:
        return self.accounts.get(normalize_server(server))

    def set_account(self, server: str, account: Account) -> None:
        server = normalize_server(server)
        self.accounts[server] = account
        self.server = server

    def bot_accounts(self, server: str) -> list[Account]:
        return list(self.bots.get(normalize_server(server), []))

    def add_bot(self, server: str, bot: Account) -> None:
        self.bots.setdefault(normalize_server(server), []).append(bot)

    def drop_bot(self, server: str, name: str) -> None:
        key = normalize_server(server)
        self.bots[key] = [bot for bot in self.bots.get(key, []) if bot.name != name]
