"""The store: questions, tiers and votes, kept for the operator.

Holds the SQLAlchemy store with its writer queue and schema migrations (``database``) and the
older JSON-lines log with its summary (``feedback``). Import the module you need: importing
this package loads no database driver.

May import: ``bot.engine`` (text sanitising), ``bot.kb``, ``bot.records``, ``bot.settings``;
never ``answer`` or ``web``.
"""


class NotSpooled(RuntimeError):
    """An event could not be kept (the disk refused its write: full; or the spool holds
    :data:`bot.limits.SPOOL_BYTES` waiting for a database that is away); nothing was acknowledged.

    Raised by a recorder's ``record``; the edges answer 503 so the client retries: an ``{"ok": true}`` must mean
    the event survives a crash.
    """
