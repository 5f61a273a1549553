"""The store: questions, tiers and votes, kept for the operator.

One thing per module; :class:`bot.store.database.Store` (with :class:`~bot.store.database.StoreSettings`)
is what the rest of the app uses:

- ``schema``: the tables, and how an event becomes a row;
- ``migrations``: the schema's versions, one frozen function each, and the upgrade that runs them;
- ``connection``: the database URL checked, and an engine for it;
- ``spool``: acknowledged events on local disk until the database has them;
- ``writer``: the thread that writes the spooled events (retries, splits, sets refused rows aside);
- ``purge``: retention (``BOT_RETENTION_DAYS``); ``reader``: rows for /admin and ``bot report``;
- ``jsonl_import``: the one-time import of the old JSON-lines feedback log (``python -m bot store import-jsonl``);
- ``database``: the settings and the :class:`~bot.store.database.Store` that puts these together;
- ``feedback``: the recorder that stamps an edge's name on its events, and the in-memory one of an app without a store.

Import the module you need: importing this package loads no database driver.

May import: ``bot.engine`` (text sanitising), ``bot.kb``, ``bot.records``, ``bot.settings``;
never ``answer`` or ``web``.
"""


class NotSpooled(RuntimeError):
    """An event could not be kept (the disk refused its write: full; or the spool holds
    :data:`bot.limits.SPOOL_BYTES` waiting for a database that is away); nothing was acknowledged.

    Raised by a recorder's ``record``; the edges answer 503 so the client retries: an ``{"ok": true}`` must mean
    the event survives a crash.
    """


class StoreError(RuntimeError):
    """The store cannot start; the message names the setting and the fix."""
