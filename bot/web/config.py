"""Every concern's settings composed for the app: :class:`AppConfig`, read once at the edge (``app.py`` and
``python -m bot``) from the process environment (:func:`bot.settings.process_environment`, the one place it is
read) and the flags, and the reference of every variable (``docs/settings.md``).

It sits at the web stage because it composes the stages below it: the engine's and the web's settings
(:mod:`bot.settings`), the store's (:class:`bot.settings.StoreSettings`) and the contact
(:class:`bot.answer.contact.Contact`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.answer.contact import Contact
from bot.settings import BotSettings, ContactSettings, Settings, StoreSettings, WebSettings, process_environment


def contact_from_env(environ: Mapping[str, str]) -> Contact:
    """The :class:`bot.answer.contact.Contact` of ``BOT_CONTACT_URL`` / ``BOT_CONTACT_LABEL`` /
    ``BOT_HANDOFF_WEBHOOK``, checked at start-up.

    A bad URL raises ValueError naming the variable, the value and what is allowed, like the other settings.

    >>> contact_from_env({"BOT_CONTACT_URL": "https://help.example.com/gpu"}).url
    'https://help.example.com/gpu'
    """
    return contact_of(ContactSettings.from_env(environ))


def contact_of(settings: ContactSettings) -> Contact:
    """Where "talk to a person" leads, from its settings."""
    return Contact(url=settings.contact_url, label=settings.contact_label, webhook=settings.handoff_webhook)


def concerns() -> tuple[tuple[str, type[BotSettings]], ...]:
    """Every concern's model, in the order of the reference (``python -m bot settings``)."""
    return (("engine", Settings), ("web", WebSettings), ("store", StoreSettings), ("contact", ContactSettings))


@dataclass(frozen=True)
class AppConfig:
    """Every setting of the app in one object, read once from the environment at the edge (``app.py`` and
    ``python -m bot``; flags override the environment), which passes the sections down; nothing below them reads
    the environment. One model per concern, each the object the library receives:

    - ``engine``: :class:`Settings` (index, seeds, embedder, input limit …);
    - ``web``: :class:`WebSettings` (host, port, API token, CORS, proxies, server limits …);
    - ``store``: :class:`bot.store.database.StoreSettings` (database, data dir, retention, admin token …);
    - ``contact``: the :class:`bot.answer.contact.Contact` of :class:`ContactSettings` (where "talk to a person"
      leads).

    The variables are flat, ``BOT_<FIELD>`` (and uvicorn's ``FORWARDED_ALLOW_IPS`` as the fallback of
    ``BOT_TRUSTED_PROXIES``); a bad value stops start-up naming the variable, the value and what is allowed.

    >>> config = AppConfig.from_env({"BOT_INDEX_DIR": "/srv/index", "BOT_PORT": "8080"}, web={"host": "0.0.0.0"})
    >>> str(config.engine.index_dir), config.web.port, config.web.host
    ('/srv/index', 8080, '0.0.0.0')
    >>> AppConfig.from_env({"BOT_PORT": "0"})
    Traceback (most recent call last):
    ValueError: BOT_PORT='0' is not allowed: it must be an integer from 1 to 65535 (default: 7860). Fix or unset the variable.
    """

    engine: Settings = field(default_factory=Settings)
    web: WebSettings = field(default_factory=WebSettings)
    store: StoreSettings = field(default_factory=lambda: StoreSettings())
    contact: Contact = field(default_factory=Contact)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        engine: Mapping[str, object] | None = None,
        web: Mapping[str, object] | None = None,
        store: Mapping[str, object] | None = None,
    ) -> AppConfig:
        """From ``environ`` (default: the process environment, the one place it is read), with command-line flags
        per section overriding it (``None`` values mean "flag not given")."""
        environ = process_environment() if environ is None else environ
        return cls(
            engine=Settings.from_env(environ, **(engine or {})),
            web=WebSettings.from_env(environ, **(web or {})),
            store=StoreSettings.from_env(environ, **(store or {})),
            contact=contact_from_env(environ),
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
    for name, model in concerns():
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
