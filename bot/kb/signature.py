"""Pasted logs and stack traces -> an error signature worth searching for.

A log is mostly noise (paths, addresses, PIDs, timestamps, thread chatter); the
signature keeps the exception type and message, ``Error``/``failed``/``abort``
lines, library names, error codes and flags::

    >>> log = '''I0221 18:48:34.436648 29562 Util.cpp:155] commandline: train
    ... EnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file ) at [/paddle/fluid/platform/dynload/dynamic_loader.cc:157]
    ... 0       0x7f19fce44e96p paddle::platform::EnforceNotMet::EnforceNotMet(char const*, int) + 486'''
    >>> looks_like_log(log)
    True
    >>> extract_signature(log).headline
    'EnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file )'

Every pattern here is linear in the input: a pattern that scans a run of
characters may only *start* where such a run starts (a look-behind on the same
class), so no position inside a run is scanned again from a later start.
``\b[\\w-]+\\.dll`` broke this rule (every ``-`` is a word boundary, so ``a-a-a-…``
was rescanned from each of its positions: quadratic per line). Lines are also
cut to a fixed width first, as a second bound.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LINE = 2_000  # characters of one line that are looked at
MAX_LINES = 20_000  # lines of a paste that are looked at (head and tail are kept)
MAX_SIGNATURE_LINES = 4

_EXCEPTION = re.compile(
    r"(?<![\w.])((?:[A-Za-z_][\w]*\.)*(?:[A-Za-z_]\w*)?(?:Error|Exception|NotMet|Fault|Failure|Abort))\b\s*[:：]\s*(\S.*)?"
)
_ERRORISH = re.compile(
    r"\b(?:error|errors|failed|failure|fail|abort|aborted|fatal|cannot|can't|could not|unable to|not found|"
    r"no such file|out of memory|oom|killed|segmentation fault|core dumped|timeout|timed out|hang|hangs|"
    r"illegal|invalid|unsupported|mismatch|refused|denied)\b",
    re.IGNORECASE,
)
_STRONG_LOG_MARKERS = re.compile(
    r"Traceback \(most recent call last\)|^\s*File \"[^\"\n]*\", line \d+|0x[0-9a-fA-F]{6,}|"
    r"^[IWEF]\d{4} \d\d:\d\d:\d\d|^\s*\d+\s+0x[0-9a-fA-F]+|Call Stacks|core dumped|Segmentation fault|"
    r"cannot open shared object file|^\s*(?:ERROR|FATAL|WARNING|INFO)\b|^\s*at [\w.$]+\(|"
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|^[IWEF] \[|^\s*\[?(?:E|W|I)\d{4}",
    re.MULTILINE,
)
# Library names are found by splitting runs of name characters at their dots (see _libraries), not by one
# pattern: "\b[\w-]+\.dll" restarted at every "-" of "a-a-a-…" and rescanned the run (quadratic per line).
_NAME_RUN = re.compile(r"[\w+\-.]+")
_CODE = re.compile(
    r"\b(?:CUDA|CUDNN|CUBLAS|NCCL|CURAND|CUFFT|cuda|cudnn|cublas)_?(?:ERROR|STATUS)_[A-Z0-9_]+\b|"
    r"\b(?:cuda|nccl|cudnn|cublas)[A-Za-z]*Error[A-Za-z]*\b|\berror code:?\s*-?\d+\b|\bexit code:?\s*-?\d+\b",
)
_FLAG = re.compile(r"\bFLAGS_\w+|(?<![\w-])--[a-z][\w\-]*|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")

# Noise removed from a line before it is shown or searched.
_NOISE = [
    (re.compile(r"^\s*[IWEF]\d{4} \d\d:\d\d:\d\d(?:\.\d+)?\s+\d+\s+[\w.\-]+:\d+\]\s*"), ""),  # glog prefix
    (re.compile(r"^\s*[IWEF] \[[^\]\n]{0,200}\]/?[\w.\-]*:\d+\]\s*"), ""),  # "E [...]/cuda_driver.cc:965]"
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), ""),  # timestamps
    (re.compile(r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b"), ""),
    (re.compile(r"\bat \[[^\[\]\n]{0,300}\]"), ""),  # "at [/paddle/.../x.cc:157]"
    (re.compile(r"(?:[A-Za-z]:)?(?:[/\\][\w.\-+@~]+){2,}[/\\]?(?::\d+)*"), ""),  # paths (+ :line)
    (re.compile(r"\b0x[0-9a-fA-F]+p?\b"), ""),  # addresses
    (re.compile(r"\(LWP \d+\)|\b(?:pid|PID|tid|TID|thread|Thread)[ =:]+\d+"), ""),  # process/thread ids
    (re.compile(r"\bline \d+\b|, in \w+"), ""),
    (re.compile(r"\s+"), " "),
]
# Lines that trace what a library does or hint at what *might* be wrong, not what failed: NCCL's INFO trace (its
# plugin search names libnccl-net.so on every healthy start), Paddle's "[Hint: …]" lines and their "e.g." lists.
HINT_LINE = re.compile(r"\bNCCL INFO\b|^\s{0,8}\[?Hint:|\be\.g\.,? ", re.IGNORECASE)
# A cause beneath the final error: the system call or connection that failed.
_CAUSE = re.compile(
    r"\bNCCL WARN\b|Connection refused|Connection reset|Connection timed out|No route to host|"
    r"Address already in use|Network is unreachable|cannot open shared object file",
    re.IGNORECASE,
)
# The doctest of extract_signature: a multi-node NCCL failure under a hint that names libnccl.so.
NCCL_EXAMPLE = (
    "node1:31:31 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
    "node1:31:52 [0] include/socket.h:409 NCCL WARN Net : Connect to 10.0.0.13<40233> failed : Connection refused\n"
    "OSError: (External) NCCL error(2), unhandled system error.\n"
    "  [Hint: 'ncclSystemError'. A call to a system function failed, e.g. a socket or a dlopen of libnccl.so.]"
)
_THREAD_LINE = re.compile(r"^\s*\[(?:New|Switching to) Thread|^\s*\[Thread |^\s*Thread \d+ ")
_STACK_FRAME = re.compile(r"^\s*\d+\s+0x[0-9a-fA-F]+|^\s*#\d+\s+0x|^\s*File \"|^\s*at \S")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _suffix(part: str, suffix: str) -> bool:
    """``part`` is ``suffix``, possibly followed by more non-word name characters ("dll-" as in a \\b match)."""
    return part.startswith(suffix) and (len(part) == len(suffix) or part[len(suffix)] in "+-")


def _libraries(text: str) -> list[str]:
    """Shared libraries named in ``text`` (``libnccl.so.2``, ``cudnn64_7.dll``, ``libcuda.dylib``), in order.

    Linear: one pass over runs of name characters, then over the dot-separated parts of each run.

    >>> _libraries("x-libnccl.so.2: bar.so c++nvcuda.dll -libz.dylib lib.so libcudart.so.10.0")
    ['libnccl.so.2', 'nvcuda.dll', 'libz.dylib', 'libcudart.so.10.0']
    """
    found: list[str] = []
    for run in _NAME_RUN.findall(text):
        if "." not in run:
            continue
        parts = run.split(".")
        i = 0
        while i < len(parts) - 1:
            name, ext = parts[i], parts[i + 1]
            if _suffix(ext, "dll"):
                name = name.rsplit("+", 1)[-1].lstrip("-")  # a .dll name has no "+" and starts with a word
                if name and _is_word(name[0]):
                    found.append(f"{name}.dll")
                i += 2  # "a.dll.dll" names one library
                continue
            if _suffix(ext, "so") or _suffix(ext, "dylib"):
                start = _lib_start(name)
                if start >= 0:
                    suffix = ext[:2] if ext.startswith("so") else ext[:5]
                    versions = []
                    if suffix == "so" and ext == "so":  # libcudart.so.10.0
                        while i + 2 + len(versions) < len(parts) and parts[i + 2 + len(versions)].isdigit():
                            versions.append(parts[i + 2 + len(versions)])
                    found.append(".".join([name[start:], suffix, *versions]))
                    i += 1 + len(versions)
                    continue
            i += 1
    return found


def _lib_start(name: str) -> int:
    """Where "lib…" starts in ``name`` at a word boundary with at least one character after it, else -1."""
    start = name.find("lib")
    while 0 <= start:
        if start + 3 < len(name) and (start == 0 or not _is_word(name[start - 1])):
            return start
        start = name.find("lib", start + 1)
    return -1


@dataclass(frozen=True)
class Signature:
    """The searchable essence of a pasted log."""

    headline: str  # the line to show first: "Detected: <headline>"
    lines: tuple[str, ...]  # cleaned error lines, most telling first
    libraries: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()

    cause: str = ""  # what the cause lines say failed: "connection" (a refused or timed-out peer), else ""

    def search_text(self) -> str:
        extras = [x for x in (*self.libraries, *self.codes, *self.flags) if x not in " ".join(self.lines)]
        return "\n".join([*self.lines, " ".join(extras), CAUSE_WORDS.get(self.cause, "")]).strip()


# How the documents name a cause the log shows in a library's words: a refused connection between ranks is the
# machines' network (the multi-machine set-up), whatever error the framework wraps it in.
CAUSE_WORDS = {"connection": "多机多卡环境 用 ping 验证两台机器之间的网络是否连通 network between machines"}
_CONNECTION = re.compile(
    r"Connection refused|Connection reset|Connection timed out|No route to host|Network is unreachable", re.IGNORECASE
)


def _bounded_lines(text: str) -> list[str]:
    lines = text.splitlines()
    if len(lines) > MAX_LINES:  # the cause is usually near the top (Paddle) or the bottom (Python)
        lines = lines[: MAX_LINES // 2] + lines[-MAX_LINES // 2 :]
    return [line[:MAX_LINE] for line in lines]


def clean_line(line: str) -> str:
    """Strip paths, addresses, PIDs, timestamps and log prefixes.

    >>> clean_line('E [...]/cuda_driver.cc:965] failed to allocate 3.66G from device: CUDA_ERROR_OUT_OF_MEMORY')
    'failed to allocate 3.66G from device: CUDA_ERROR_OUT_OF_MEMORY'
    """
    for pattern, replacement in _NOISE:
        line = pattern.sub(replacement, line)
    return line.strip(" \t:;,")


def looks_like_log(text: str) -> bool:
    """True for pasted logs, stack traces and raw error messages; False for questions."""
    lines = _bounded_lines(text)
    markers = sum(1 for line in lines if _STRONG_LOG_MARKERS.search(line))
    exceptions = sum(1 for line in lines if _EXCEPTION.search(line))
    if markers >= 2 or (markers and exceptions):
        return True
    if exceptions:
        return True
    # A single pasted error line such as "libnccl.so: cannot open shared object file".
    return markers >= 1 and len(lines) <= 3


def extract_signature(text: str) -> Signature:
    """Pick the error lines of a log, cleaned, most telling first: the last error, then its causes (a refused
    connection, a missing library), then the earlier errors; lines that only trace or hint are not errors.

    >>> sig = extract_signature(NCCL_EXAMPLE)
    >>> sig.headline
    'OSError: (External) NCCL error(2), unhandled system error.'
    >>> sig.lines[1].endswith("Connection refused"), sig.libraries
    (True, ())
    """
    lines = _bounded_lines(text)
    scored: list[tuple[int, int, str]] = []  # (priority, position, cleaned line)
    exceptions = [
        i
        for i, raw in enumerate(lines)
        if not HINT_LINE.search(raw) and not _STACK_FRAME.search(raw) and _EXCEPTION.search(raw)
    ]
    last_error = exceptions[-1] if exceptions else -1
    for position, raw in enumerate(lines):
        if not raw.strip() or _THREAD_LINE.search(raw) or _STACK_FRAME.search(raw) or HINT_LINE.search(raw):
            continue
        exception = _EXCEPTION.search(raw)
        if exception and position == last_error:
            priority = 0  # the error the program stopped on
        elif _CAUSE.search(raw):
            priority = 1
        elif exception:
            priority = 2
        elif _ERRORISH.search(raw):
            priority = 3
        elif len(_FLAG.findall(raw)) >= 2:  # a command line with its flags says what was run
            priority = 4
        else:
            continue
        cleaned = clean_line(raw[exception.start() :] if exception else raw)
        if len(cleaned) >= 4:
            scored.append((priority, position, cleaned[:300]))
    scored.sort()
    chosen: list[str] = []
    for _, _, line in scored:
        if line not in chosen:
            chosen.append(line)
        if len(chosen) == MAX_SIGNATURE_LINES:
            break

    joined = "\n".join(lines)
    # A library a trace or a hint line names is not one that failed to load.
    libraries = tuple(dict.fromkeys(_libraries("\n".join(x for x in lines if not HINT_LINE.search(x)))))[:5]
    codes = tuple(dict.fromkeys(_CODE.findall(joined)))[:5]
    flags = tuple(dict.fromkeys(f for f in _FLAG.findall(joined) if len(f) > 3))[:8]
    if not chosen:  # no error line: keep the cleaned text itself, deduplicated
        seen: dict[str, None] = {}
        for raw in lines:
            if _THREAD_LINE.search(raw) or _STACK_FRAME.search(raw):
                continue
            cleaned = clean_line(raw)
            if len(cleaned) >= 4:
                seen.setdefault(cleaned[:300], None)
            if len(seen) >= 12:
                break
        chosen = list(seen)[:MAX_SIGNATURE_LINES]
    headline = chosen[0][:200] if chosen else ""
    cause = "connection" if any(_CONNECTION.search(line) for line in chosen) else ""
    return Signature(headline=headline, lines=tuple(chosen), libraries=libraries, codes=codes, flags=flags, cause=cause)
