"""Every setting of the app in one object, read once from the environment at the edge.

:class:`AppConfig` holds one pydantic-settings model per concern, each the object the library receives:

- ``engine``: :class:`bot.settings.Settings` (index, seeds, embedder, input limit …);
- ``web``: :class:`bot.web.http.WebSettings` (host, port, API token, CORS, proxies, server limits …);
- ``store``: :class:`bot.store.database.StoreSettings` (database, data dir, retention, admin token …);
- ``contact``: the :class:`bot.answer.reply.Contact` of :class:`bot.web.http.ContactSettings` (where "talk
  to a person" leads).

The variables are flat, ``BOT_<FIELD>`` (``BOT_INDEX_DIR``, ``BOT_API_TOKEN``, ``BOT_DATABASE_URL``,
``BOT_ADMIN_TOKEN``, ``BOT_HANDOFF_WEBHOOK`` …, and uvicorn's ``FORWARDED_ALLOW_IPS`` as the fallback of
``BOT_TRUSTED_PROXIES``); each model reads its own and checks them, so a bad value stops start-up naming
the variable, the value and what is allowed. ``app.py`` and ``bot.cli`` build it once (flags override the
environment) and pass the sections down; nothing below them reads the environment.
``python -m bot settings`` lists every variable (``docs/settings.md``).

    >>> config = AppConfig.from_env({"BOT_INDEX_DIR": "/srv/index", "BOT_PORT": "8080"}, web={"host": "0.0.0.0"})
    >>> str(config.engine.index_dir), config.web.port, config.web.host
    ('/srv/index', 8080, '0.0.0.0')
    >>> AppConfig.from_env({"BOT_PORT": "0"})
    Traceback (most recent call last):
    ValueError: BOT_PORT='0' is not allowed: it must be an integer from 1 to 65535 (default: 7860). Fix or unset the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.answer.reply import Contact
from bot.settings import BotSettings, Settings
from bot.store.database import StoreSettings
from bot.web.http import ContactSettings, WebSettings

# Every concern's model, in the order of the reference (python -m bot settings).
CONCERNS: tuple[tuple[str, type[BotSettings]], ...] = (
    ("engine", Settings),
    ("web", WebSettings),
    ("store", StoreSettings),
    ("contact", ContactSettings),
)


class AppConfig(BaseModel):
    """The app's settings: :meth:`from_env` reads a mapping (default ``os.environ``) and the flags."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")

    engine: Settings = Field(default_factory=Settings)
    web: WebSettings = Field(default_factory=WebSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    contact: Contact = Field(default_factory=Contact)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        engine: Mapping[str, object] | None = None,
        web: Mapping[str, object] | None = None,
        store: Mapping[str, object] | None = None,
    ) -> AppConfig:
        """From ``environ`` (default ``os.environ``), with command-line flags per section overriding it
        (``None`` values mean "flag not given")."""
        environ = os.environ if environ is None else environ
        return cls(
            engine=Settings.from_env(environ, **(engine or {})),
            web=WebSettings.from_env(environ, **(web or {})),
            store=StoreSettings.from_env(environ, **(store or {})),
            contact=ContactSettings.from_env(environ).contact(),
        )


def reference_markdown() -> str:
    """Every variable of every concern as Markdown tables: what ``docs/settings.md`` holds."""
    out = [
        "# Settings",
        "",
        "Every setting is an environment variable (`BOT_<NAME>`), read once at start-up by `app.py` and",
        "`python -m bot` (flags override it); a bad value stops start-up naming the variable, the value and",
        "what is allowed. Generated from the settings models (`python -m bot settings > docs/settings.md`).",
        "",
    ]
    for name, model in CONCERNS:
        out += [
            f"## {name} (`{model.__module__}.{model.__name__}`)",
            "",
            "| variable | default | allowed | what it does |",
            "|---|---|---|---|",
        ]
        out += [
            f"| `{var}` | {_cell(default)} | {_cell(allowed)} | {_cell(text)} |"
            for var, default, allowed, text in model.reference()
        ]
        out.append("")
    return "\n".join(out)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;") or " "


__all__ = ["CONCERNS", "AppConfig", "reference_markdown"]
