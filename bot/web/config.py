"""Every setting of the app in one object, read once from the environment at the edge.

:class:`AppConfig` is a pydantic-settings ``BaseSettings`` with four sections, each the object the
library already receives (same attribute names as before):

- ``engine``: :class:`bot.settings.Settings` (index, seeds, embedder, input limit …);
- ``web``: :class:`bot.web.http.WebSettings` (host, port, API token, CORS, proxies, server limits …);
- ``store``: :class:`bot.store.database.StoreSettings` (database, data dir, retention, admin token …);
- ``contact``: :class:`bot.answer.reply.Contact` (where "talk to a person" leads).

The variables keep their flat names (``BOT_INDEX_DIR``, ``BOT_API_TOKEN``, ``BOT_DATABASE_URL``,
``BOT_ADMIN_TOKEN``, ``BOT_HANDOFF_WEBHOOK`` …, and uvicorn's ``FORWARDED_ALLOW_IPS`` as the default
of ``BOT_TRUSTED_PROXIES``): :class:`FlatEnvironment` is the settings source that sorts them into the
sections, each checked by its section's own rules, so a bad value still stops start-up naming the
variable, the value and what is allowed. ``app.py`` and ``bot.cli`` build it once (flags override the
environment) and pass the sections down; nothing below them reads the environment.

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
from contextvars import ContextVar
from typing import Any

from pydantic import Field
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from bot.answer.reply import Contact
from bot.settings import ENV_PREFIX, Settings
from bot.store.database import StoreSettings
from bot.web.http import WebSettings, contact_from_env

# What AppConfig.from_env was given: the environment to read and the flags per section. A context
# variable, because pydantic-settings builds its sources from the class alone (no per-call argument).
_GIVEN: ContextVar[tuple[Mapping[str, str], Mapping[str, Mapping[str, object]]] | None] = \
    ContextVar("bot_config_given", default=None)


class FlatEnvironment(PydanticBaseSettingsSource):
    """Today's flat ``BOT_*`` variables into the nested sections, each validated by its own loader
    (whose errors name the variable or flag, the value and what is allowed)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # whole sections are built in __call__

    def __call__(self) -> dict[str, Any]:
        environ, flags = _GIVEN.get() or (os.environ, {})
        return {
            "engine": Settings.from_env(environ, **flags.get("engine", {})),
            "web": WebSettings.from_env(environ, **flags.get("web", {})),
            "store": StoreSettings.from_env(environ, **flags.get("store", {})),
            "contact": contact_from_env(environ),
        }


class AppConfig(BaseSettings):
    """The app's settings: ``AppConfig()`` reads ``os.environ``; :meth:`from_env` takes a mapping and flags."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, arbitrary_types_allowed=True,
                                      extra="forbid")

    engine: Settings = Field(default_factory=Settings)
    web: WebSettings = Field(default_factory=WebSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    contact: Contact = Field(default_factory=Contact)

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Sections passed in code win (tests); then the flat variables. No .env file, no nested BOT_ENGINE__X names.
        return init_settings, FlatEnvironment(settings_cls)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, engine: Mapping[str, object] | None = None,
                 web: Mapping[str, object] | None = None, store: Mapping[str, object] | None = None) -> AppConfig:
        """From ``environ`` (default ``os.environ``), with command-line flags per section overriding it
        (``None`` values mean "flag not given")."""
        flags = {"engine": dict(engine or {}), "web": dict(web or {}), "store": dict(store or {})}
        token = _GIVEN.set((os.environ if environ is None else environ, flags))
        try:
            return cls()
        finally:
            _GIVEN.reset(token)


__all__ = ["AppConfig", "FlatEnvironment"]
