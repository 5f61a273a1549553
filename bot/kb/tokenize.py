"""Tokens for BM25: jieba for Chinese, a code-aware splitter for everything else.

Identifiers from error messages stay whole *and* contribute their parts, so an
exact error string and a loose description both match (a part that is a stop word, like
"so" here, is dropped)::

    >>> tokenize("Failed to find libnccl.so, set CUDA_VISIBLE_DEVICES")
    ['failed', 'find', 'libnccl.so', 'libnccl', 'set', 'cuda_visible_devices', 'cuda', 'visible', 'devices']
    >>> tokenize("ncclSystemError")
    ['ncclsystemerror', 'nccl', 'system', 'error']
    >>> tokenize("显存不足怎么办")
    ['显存', '不足', '怎么办']
"""

from __future__ import annotations

import logging
import marshal
import re
import tempfile
import threading
from pathlib import Path

_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+(?:[.\-][A-Za-z0-9_]+)*")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_PART_SPLIT = re.compile(r"[._\-]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_MAX_TOKEN = 64

EN_STOPWORDS = frozenset(
    "a an the is are was were be been to of in on at for and or but not no i my me we our you your "
    "it its this that these those with without from by as when while after before how what why which "
    "do does did can could should would will shall may might there here then than so if into out up "
    "about just any some all get got have has had am".split()
)
ZH_STOPWORDS = frozenset(
    "的 了 吗 呢 吧 啊 是 我 你 他 她 它 们 我们 在 和 与 及 或 有 就 都 也 还 要 会 能 可以 "
    "怎么 怎样 如何 什么 为什么 为何 哪些 这 那 这个 那个 一个 时 时候 请问 请 一下 么 呀 "
    "把 被 对 从 到 给 让 用 使用 进行 问题 出现 如果 但是 但 而 之后 以后".split()
)

_tokenizer = None  # jieba's default tokenizer, once its dictionary is loaded
_tokenizer_lock = threading.Lock()  # concurrent first questions load the dictionary once


def _cut_chinese(run: str) -> list[str]:
    return (_tokenizer or _load_jieba()).lcut_for_search(run)


def _load_jieba():
    """jieba's default tokenizer with its dictionary loaded, from jieba's own cache file when it has one.

    jieba reads that cache with ``marshal.load(file)``, which pulls the 9 MB in small reads: 0.75 s here,
    against 0.2 s for ``marshal.loads`` of the whole file read at once, on the path of every start-up.
    Without a cache (or with a damaged one) jieba loads the dictionary itself and writes the cache.
    """
    global _tokenizer
    with _tokenizer_lock:
        if _tokenizer is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.dt
            with tokenizer.lock:  # jieba's own lock, held by its initialize() too
                if not tokenizer.initialized and tokenizer.dictionary == jieba.DEFAULT_DICT:
                    loaded = _read_jieba_cache(
                        Path(tokenizer.tmp_dir or tempfile.gettempdir()) / (tokenizer.cache_file or "jieba.cache")
                    )
                    if loaded is not None:
                        tokenizer.FREQ, tokenizer.total = loaded
                        tokenizer.initialized = True
            tokenizer.check_initialized()  # no cache, or an unreadable one: jieba builds the dictionary (and cache)
            _tokenizer = tokenizer
    return _tokenizer


def _read_jieba_cache(path: Path) -> tuple[dict, int] | None:
    """``(FREQ, total)`` as jieba cached them, or None for a missing or damaged cache (jieba rebuilds it).

    >>> _read_jieba_cache(Path("/nonexistent/jieba.cache")) is None
    True
    """
    try:
        freq, total = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return (freq, total) if isinstance(freq, dict) and isinstance(total, int) and freq else None


def _ascii_tokens(word: str) -> list[str]:
    lower = word.lower()[:_MAX_TOKEN]
    tokens = [lower]
    parts: list[str] = []
    for piece in _PART_SPLIT.split(word):
        camel = _CAMEL.findall(piece)
        parts.extend(p.lower() for p in (camel if len(camel) > 1 else [piece]) if p)
    if len(parts) > 1:
        tokens.extend(p for p in parts if p not in EN_STOPWORDS)
    return tokens


def tokenize(text: str) -> list[str]:
    """Lowercased BM25 tokens, stopwords removed, identifiers kept whole plus parts."""
    tokens: list[str] = []
    position = 0
    for match in _CJK_RUN.finditer(text):
        tokens.extend(_tokenize_ascii(text[position : match.start()]))
        tokens.extend(t for t in _cut_chinese(match.group()) if t not in ZH_STOPWORDS)
        position = match.end()
    tokens.extend(_tokenize_ascii(text[position:]))
    return tokens


def _tokenize_ascii(text: str) -> list[str]:
    out: list[str] = []
    for match in _ASCII_WORD.finditer(text):
        word = match.group()
        if word.lower() in EN_STOPWORDS:
            continue
        out.extend(_ascii_tokens(word))
    return out


def warm_up() -> None:
    """Load jieba's dictionary now rather than on the first question."""
    _cut_chinese("预热")


def detect_language(text: str) -> str:
    """``zh`` when the user wrote Chinese words, else ``en``.

    Mixed input ("CUDA_VISIBLE_DEVICES=2,3 怎么用") is Chinese: identifiers are
    language-neutral, the Chinese words show how the user wants to be answered.

    >>> detect_language("CUDA_VISIBLE_DEVICES=2,3 怎么用"), detect_language("Loss is NaN")
    ('zh', 'en')
    """
    cjk = sum(len(m.group()) for m in _CJK_RUN.finditer(text[:20_000]))
    return "zh" if cjk >= 2 else "en"
