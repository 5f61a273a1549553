"""The deployer's settings are in one table of docs/embedding.md (a new user took three minutes and grep to find
BOT_CONTACT_URL), and every name in the README's and that table is a real setting of a settings model."""

from __future__ import annotations

import re

from bot.settings import ContactSettings, Settings, WebSettings
from bot.store.database import StoreSettings
from fixtures import REPO

DEPLOYER = {
    "BOT_CONTACT_URL",
    "BOT_CONTACT_LABEL",
    "BOT_HANDOFF_WEBHOOK",
    "BOT_FRAME_ANCESTORS",
    "BOT_CORS_ORIGINS",
    "BOT_API_TOKEN",
    "BOT_TRUSTED_HEADER",
    "BOT_ADMIN_TOKEN",
}


def _known() -> set[str]:
    models = (Settings, WebSettings, StoreSettings, ContactSettings)
    return {f"BOT_{name.upper()}" for model in models for name in model.model_fields}


def _table_names(path) -> set[str]:
    rows = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("| `BOT_")]
    return {name for row in rows for name in re.findall(r"`(BOT_[A-Z_]+)`", row.split("|")[1])}


def test_every_setting_a_deployer_changes_is_in_the_embedding_table():
    names = _table_names(REPO / "docs" / "embedding.md")
    assert DEPLOYER <= names, sorted(DEPLOYER - names)


def test_the_tables_name_only_real_settings():
    known = _known()
    for doc in (REPO / "docs" / "embedding.md", REPO / "README.md"):
        names = _table_names(doc)
        assert names, doc
        assert names <= known, (doc.name, sorted(names - known))
