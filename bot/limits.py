"""Limits no deployer needs to change, each defined once (the ones a deployer may change, such as
``max_input_chars``, are settings: :mod:`bot.settings`).

Text kept about a question, and history read from a client:

- :data:`QUESTION_CHARS`: a question as recorded (store, feedback log, events, the hand-off
  transcript, the UI's saved answers) and as read for conversational cues; a pasted log is kept
  cut, its error signature says what it was about (its head and the error at its end are in the
  first 2,000 characters once cut by the input limit).
- :data:`URL_CHARS`: an operator's contact URL or webhook.
- History, widest first: a client may send :data:`HISTORY_ITEMS_ACCEPTED` items, the last
  :data:`HISTORY_ITEMS_READ` are read, of which at most :data:`HISTORY_TURNS_REPLAYED` user turns
  are replayed; the chat page keeps :data:`CONVERSATION_TURNS_KEPT` turns, and a hand-off sends
  no more than those. Each replayed turn is read for at most :data:`HISTORY_TURN_CHARS_REPLAYED` characters (its
  head and its last line: what the case's search needs), so a replay costs at most 8 short questions however long
  the history's turns are.
- A conversation's state (:mod:`bot.answer.state`): each text field of a turn is cut to :data:`STATE_TEXT_CHARS`
  (its search text to :data:`STATE_SEARCH_CHARS`) and each list to :data:`STATE_LIST_ITEMS` items; a token is at most :data:`STATE_CHARS` characters (the oldest
  turns are left out until it fits). The per-process cache of states rebuilt from plain history
  (:class:`bot.answer.turn.HistoryStates`) holds at most :data:`HISTORY_STATE_BYTES` of them, as compressed JSON.
- :data:`VOTE_COMMENT_CHARS`: the free-text comment a 👎 may carry (the chat's box, ``/api/feedback``, the store).
- Embedding under load (:mod:`bot.kb.batcher`): concurrent callers' texts share a runtime call of at most
  :data:`EMBED_BATCH_TOKENS` (estimated as characters, which bound e5's tokens); a caller's text of
  :data:`EMBED_ALONE_TOKENS` or more (a pasted log) goes alone; under load a batch waits up to
  :data:`EMBED_BATCH_WINDOW_MS` after its first caller for others (alone, a question waits for nothing).
- :data:`SPOOL_BYTES`: events acknowledged but not yet in the database (the store's spool, one
  line of JSON each, ~400–500 bytes for a typical question, 12.5 KB at most); past it new events
  are refused (503) rather than acknowledged and lost.

    >>> HISTORY_ITEMS_ACCEPTED >= HISTORY_ITEMS_READ >= HISTORY_TURNS_REPLAYED
    True
    >>> STATE_CHARS > HISTORY_TURNS_REPLAYED * 2 * STATE_TEXT_CHARS // 4  # 8 turns of two long texts, compressed
    True
"""

from __future__ import annotations

QUESTION_CHARS = 2_000
URL_CHARS = 2_000

HISTORY_ITEMS_ACCEPTED = 100  # items of an API request's history; more is refused (422)
HISTORY_ITEMS_READ = 20  # the newest history items read from an API request
HISTORY_TURNS_REPLAYED = 8  # user turns of an API history replayed to rebuild the case
CONVERSATION_TURNS_KEPT = 12  # turns the chat page keeps for follow-ups, and a hand-off sends along
HISTORY_TURN_CHARS_REPLAYED = 600  # of one earlier turn replayed from plain history: its head and its last line

# A conversation's state carried by the client (bot.answer.state): 8 turns cut this way are 7-9 KB of JSON (25 KB for
# 8 pasted logs), a token of 1.3-2.1 KB once compressed; 16,000 characters leave room and bound the work of opening.
STATE_TEXT_CHARS = 500
STATE_SEARCH_CHARS = 2_000  # a turn's search text (the case's words; a pasted log's head), as QUESTION_CHARS
STATE_LIST_ITEMS = 20
STATE_CHARS = 16_000
HISTORY_STATE_BYTES = 4 << 20  # the cache of states rebuilt from plain history, by their compressed size (~2,000)

# A pasted environment (bot.diagnose.environment): characters read at all (a 5,000-line pip list is ~150,000),
# characters of one line given to the line patterns, distinct values kept per field (GPUs, packages, libraries).
ENVIRONMENT_CHARS = 200_000
ENVIRONMENT_LINE_CHARS = 1_000
ENVIRONMENT_ITEMS = 16
# Values kept as the user typed them (a reply quotes them): how many, and the longest quote (a Windows DLL path).
ENVIRONMENT_TYPED_ITEMS = 24
ENVIRONMENT_TYPED_CHARS = 160

# A 👎's free-text comment: a sentence or two about what was wrong, not a second question or a pasted log.
VOTE_COMMENT_CHARS = 500

# Embedding micro-batches (bot.kb.batcher). A question is 12-40 tokens; 1,024 is ~40 of them, a runtime call of ~8 ms
# of CPU each, so no caller waits behind more than a few hundred ms however many ask at once. 128: a pasted log (e5
# reads 512 characters, 150-300 tokens) goes alone. 2 ms: small beside a 10 ms embedding, long enough to gather the
# callers a busy server has in flight.
EMBED_BATCH_TOKENS = 1_024
EMBED_ALONE_TOKENS = 128
EMBED_BATCH_WINDOW_MS = 2.0

# The store's spool (bot.store.database.Spool): 128 MiB is ~300,000 typical events (3.5 days of one a second while
# the database is down) and never fewer than 10,000; each 1 MiB segment keeps a file open while its rows wait.
SPOOL_BYTES = 128 << 20

# JSON or TOML read from outside, nested at most this deep: a request body (bot.web.json_limits), a line of a labelled
# file (bot.jsonl), seeds/domain.toml and vocabulary.toml (bot.kb.vocabulary.read_toml); a labelled line is 4 levels,
# a request with history 4-5, a domain file 4. Deeper is refused, never recursed into.
MAX_JSON_DEPTH = 32
