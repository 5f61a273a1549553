"""Issue 11: the bad-input corpus, run per class, with a printed tally.

    python tests/system/test_bad_input_corpus.py        # prints the table
    python -m pytest tests/system/test_bad_input_corpus.py -q -p no:cacheprovider

For every class: how many inputs were tried, how many got a clear error (a 4xx with a
``detail``, or an exception/warning that names the thing and the fix), how many were
handled as ordinary input (an answer, an empty document: no error is due), how many crashed
(a 5xx, or an exception of the wrong kind: must be 0) and how many lost data (a good
record next to the bad ones that did not survive: must be 0).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path[:0] = [
    str(Path(__file__).resolve().parents[2]),
    str(Path(__file__).resolve().parents[1]),
]  # repo and tests/ as a script

from bot.kb.embed import make_embedder  # noqa: E402
from bot.kb.index import IndexProblem, build_index, load_index  # noqa: E402
from bot.settings import Settings  # noqa: E402
from fixtures.engines import hash_engine  # noqa: E402

TOKEN = "corpus-token-123"


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, Counter] = {}
        self.crashes: list[str] = []

    def add(
        self, kind: str, *, clear: bool = False, handled: bool = False, crash: str = "", lost: bool = False
    ) -> None:
        row = self.rows.setdefault(kind, Counter())
        row["tried"] += 1
        row["clear error"] += clear and not crash
        row["handled"] += handled and not clear and not crash
        row["crash"] += bool(crash)
        row["lost data"] += lost
        if crash:
            self.crashes.append(f"{kind}: {crash}")

    def table(self) -> str:
        cols = ("tried", "clear error", "handled", "crash", "lost data")
        lines = [f"{'class':<22}" + "".join(f"{c:>13}" for c in cols)]
        for kind, row in self.rows.items():
            lines.append(f"{kind:<22}" + "".join(f"{row[c]:>13}" for c in cols))
        return "\n".join(lines)


def _kb(root: Path) -> Settings:
    seeds = root / "seeds"
    seeds.mkdir(parents=True)
    (seeds / "gpu.md").write_text("# GPU\n\n## 显存不足怎么办\n\n+ 解决方法：减小 `batch_size`。\n", encoding="utf-8")
    return Settings(seeds_dir=seeds, index_dir=root / "index", embedder="hash")


def api_bodies(tally: Tally, root: Path) -> None:
    from fastapi.testclient import TestClient

    from app import WebSettings, build_app

    settings = _kb(root / "api")
    engine = hash_engine(settings)
    app = build_app(settings, engine, WebSettings(), progress=False)  # no store: events kept in app.state.recorder
    client = TestClient(app, raise_server_exceptions=False)
    json_type = {"Content-Type": "application/json"}
    bodies = [
        (b"", json_type),
        (b"not json", json_type),
        (b"[]", json_type),
        (b"null", json_type),
        (b"\xff\xfe{", json_type),
        (b"[" * 200_000, json_type),
        (b'{"question": ' + b"[" * 5000 + b"]" * 5000 + b"}", json_type),
        (b'{"question": 5}', json_type),
        (b'{"question": "q", "history": "x"}', json_type),
        (b'{"question": "q", "history": [' + b"1," * 200 + b"1]}", json_type),
        (b'{"question": "q", "history": [{"role": "user"}]}', json_type),
        (b'{"question": "' + b"a" * 9_000_000 + b'"}', json_type),
        (b'{"question": "q"}', {"Content-Type": "text/plain"}),
        (b'{"question": "q"}', {}),
        (b'{"question": "q"}', {"Content-Type": "application/x-www-form-urlencoded"}),
        (b'{"question": "\\ud800"}', json_type),
        (b'{"question": 1e999}', json_type),
    ]
    for body, headers in bodies:
        response = client.post("/api/ask", content=body, headers=headers)
        detail = (
            response.headers.get("content-type", "").startswith("application/json") and response.json().get("detail")
            if response.status_code != 200
            else ""
        )
        tally.add(
            "api /api/ask",
            clear=400 <= response.status_code < 500 and bool(detail),
            handled=response.status_code == 200 and bool(response.json().get("reply")),
            crash=f"{response.status_code} for {body[:40]!r}" if response.status_code >= 500 else "",
        )
    # Feedback: bad votes interleaved with good ones; every good one must be recorded, no bad one.
    bad = [
        {"question": "q", "vote": "meh"},
        {"question": "q", "vote": "up", "cited": ["k"] * 11},
        {"question": "q", "vote": "up", "cited": ["k" * 301]},
        {"question": "", "vote": "up"},
        {"question": 5, "vote": "up"},
        {"question": "q", "vote": "up", "cited": "abc"},
        {"question": "q", "vote": "up", "answered": "maybe"},
    ]
    for n, body in enumerate(bad):
        response = client.post("/api/feedback", json=body)
        good = client.post("/api/feedback", json={"question": f"good {n}", "vote": "down", "cited": ["gpu.md#x"]})
        votes = [e for e, _ in app.state.recorder.events if e.kind == "vote"]  # /api/ask above records questions
        tally.add(
            "api /api/feedback",
            clear=response.status_code == 422 and bool(response.json().get("detail")),
            crash=f"{response.status_code} for {body}"
            if response.status_code >= 500 or good.status_code >= 500
            else "",
            lost=good.status_code != 200 or [e.question for e in votes] != [f"good {i}" for i in range(n + 1)],
        )


def gradio_routes(tally: Tally, root: Path) -> None:
    from fastapi.testclient import TestClient

    from app import WebSettings, build_app

    settings = _kb(root / "door")
    engine = hash_engine(settings)
    client = TestClient(
        build_app(settings, engine, WebSettings(api_token=TOKEN), progress=False), raise_server_exceptions=False
    )
    for prefix in ("", "/widget"):
        for method, path in [
            ("POST", "/gradio_api/queue/join"),
            ("GET", "/gradio_api/queue/data?session_hash=x"),
            ("POST", "/gradio_api/run/add_user"),
            ("POST", "/gradio_api/call/add_user"),
            ("GET", "/config"),
            ("GET", "/"),
            ("POST", "/gradio_api/upload"),
            ("GET", "/gradio_api/file=/etc/passwd"),
            ("GET", "/source?key=gpu.md"),
            ("GET", "/?token=wrong"),
        ]:
            response = client.request(
                method, prefix + path, json={} if method == "POST" else None, follow_redirects=False
            )
            tally.add(
                "door (locked app)",
                clear=response.status_code in (401, 403)
                and "detail" in response.text
                or (response.status_code == 401 and "credentials" in response.text),
                crash=f"{response.status_code} for {path}" if response.status_code >= 500 else "",
            )


def settings_env(tally: Tally) -> None:
    from bot.settings import WebSettings

    cases = [({"BOT_MAX_INPUT_CHARS": v}, "BOT_MAX_INPUT_CHARS") for v in ("-1", "0", "abc", "1e9", "99999999")]
    cases += [({"BOT_HNSW_EF_SEARCH": v}, "BOT_HNSW_EF_SEARCH") for v in ("nan", "inf", "-1", "0", "x")]
    cases += [
        ({"BOT_CHUNK_SIZE": "10"}, "BOT_CHUNK_SIZE"),
        ({"BOT_USE_META": "maybe"}, "BOT_USE_META"),
        ({"BOT_HNSW_THRESHOLD": "-5"}, "BOT_HNSW_THRESHOLD"),
        ({"BOT_CHUNK_OVERLAP": "900"}, "chunk_overlap"),
    ]
    for env, name in cases:
        try:
            Settings.from_env(env)
            tally.add("settings (BOT_*)", crash=f"{env} accepted")
        except ValueError as exc:
            tally.add("settings (BOT_*)", clear=name in str(exc))
        except Exception as exc:  # noqa: BLE001 - the point is to count these
            tally.add("settings (BOT_*)", crash=f"{env}: {type(exc).__name__}: {exc}")
    web_cases = [({"BOT_PORT": v}, "BOT_PORT") for v in ("0", "70000", "eighty", "-1")]
    web_cases += [
        ({"BOT_CORS_ORIGINS": "*"}, "BOT_CORS_ORIGINS"),
        ({"BOT_TRUSTED_PROXIES": "nope"}, "BOT_TRUSTED_PROXIES"),
        ({"BOT_API_TOKEN": "short"}, "BOT_API_TOKEN"),
        ({"BOT_PUBLIC_URL": "data:x"}, "BOT_PUBLIC_URL"),
        ({"BOT_TRUSTED_HEADER": "a b"}, "BOT_TRUSTED_HEADER"),
        ({"BOT_ROOT_PATH": "/a b"}, "BOT_ROOT_PATH"),
    ]
    for env, name in web_cases:
        try:
            WebSettings.from_env(env)
            tally.add("settings (web)", crash=f"{env} accepted")
        except ValueError as exc:
            tally.add("settings (web)", clear=name in str(exc))
        except Exception as exc:  # noqa: BLE001
            tally.add("settings (web)", crash=f"{env}: {type(exc).__name__}: {exc}")


def seeds(tally: Tally, root: Path) -> None:
    settings = _kb(root / "seeds-kb")
    outside = root / "outside.txt"
    outside.write_text("SECRET\n", encoding="utf-8")
    makers = {
        "link.md": lambda p: os.symlink(outside, p),
        "fifo.md": lambda p: os.mkfifo(p),
        "latin1.md": lambda p: p.write_bytes("# Titel\n\nGr\xf6\xdfe\n".encode("latin-1")),
        "binary.txt": lambda p: p.write_bytes(bytes(range(256)) * 50),
        "empty.md": lambda p: p.write_bytes(b""),
        "nul.md": lambda p: p.write_bytes(b"# a\x00b\n\nbody\x00\n"),
        "long_line.md": lambda p: p.write_text("# L\n\n" + "x" * 2_000_000 + "\n", encoding="utf-8"),
        "deep.md": lambda p: p.write_text(
            "\n".join("#" * (n % 6 + 1) + f" h{n}" for n in range(3000)), encoding="utf-8"
        ),
    }
    for name, make in makers.items():
        make(settings.seeds_dir / name)
    try:
        report = build_index(settings, make_embedder("hash"))
        index = load_index(settings, "hash:256", 256)
    except Exception as exc:  # noqa: BLE001
        for name in makers:
            tally.add("seeds (build)", crash=f"{name}: {type(exc).__name__}: {exc}")
        return
    sources = {s.source for s in index.sections}
    texts = " ".join(s.text for s in index.sections)
    for name in makers:
        named = [e for e in report.parse_errors if e.startswith(name)]
        tally.add(
            "seeds (build)",
            clear=bool(named),
            handled=name in ("empty.md", "nul.md", "long_line.md", "deep.md"),
            crash=f"{name} leaked into the index" if name in ("link.md", "fifo.md") and name in sources else "",
            lost="gpu.md" not in sources or "batch_size" not in texts or "SECRET" in texts,
        )


def feedback_log(tally: Tally, root: Path) -> None:
    """The old JSON-lines log's one-time import (``python -m bot store import-jsonl``): a bad line is skipped."""
    from bot.store.database import Store, StoreSettings
    from fixtures.old_log import old_line

    bad = [
        "{not json",
        "[1, 2]",
        '"text"',
        json.dumps({"event": "unanswered", "question": 5, "time": "2026-11-01T12:00:00+00:00"}),
        json.dumps({"event": "vote", "question": "q", "cited": "abc", "vote": "down"}),
        json.dumps({"event": "vote", "question": "q", "vote": "sideways", "time": "2026-11-01T12:00:00+00:00"}),
        "[" * 10_000,
        "\xff\xfe".encode("latin-1").decode("latin-1"),
        json.dumps({"event": "unanswered", "question": "q", "time": []}),
    ]
    store = Store.open(StoreSettings(data_dir=root / "import-store"))
    try:
        for n, line in enumerate(bad):
            log = root / f"fb-{n}.jsonl"  # a log of its own each time: its first line says which log it is
            log.write_text(
                old_line("unanswered", f"good {n}") + line + "\n" + old_line("unanswered", "again"), encoding="utf-8"
            )
            try:
                before = len(store.rows())
                imported = store.import_jsonl(log)
                tally.add(
                    "feedback log (import)",
                    clear=imported == 2,
                    lost=len(store.rows()) - before != 2,
                )
            except Exception as exc:  # noqa: BLE001
                tally.add("feedback log (import)", crash=f"line {n}: {type(exc).__name__}: {exc}")
    finally:
        store.close()


def index_manifest(tally: Tally, root: Path) -> None:
    settings = _kb(root / "manifest-kb")
    for field, value in [
        ("sources", []),
        ("artifacts", {"x": 1}),
        ("sources", {"a": None}),
        ("parse_errors", 5),
        ("format", "2"),
        ("embedder", None),
        ("dim", "256"),
        ("chunk_size", []),
    ]:
        gen = build_index(settings, make_embedder("hash")).path
        manifest = json.loads((gen / "manifest.json").read_text(encoding="utf-8"))
        manifest[field] = value
        (gen / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        try:
            load_index(settings, "hash:256", 256)
            tally.add("index manifest", crash=f"{field}={value!r} accepted")
        except IndexProblem as exc:
            tally.add("index manifest", clear="python -m bot build" in str(exc))
        except Exception as exc:  # noqa: BLE001
            tally.add("index manifest", crash=f"{field}={value!r}: {type(exc).__name__}: {exc}")


def run() -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        api_bodies(tally, root)
        gradio_routes(tally, root)
        settings_env(tally)
        seeds(tally, root)
        feedback_log(tally, root)
        index_manifest(tally, root)
    return tally


def test_bad_input_corpus(capsys):
    tally = run()
    with capsys.disabled():
        print("\n" + tally.table())
    assert tally.crashes == []
    assert sum(row["crash"] for row in tally.rows.values()) == 0
    assert sum(row["lost data"] for row in tally.rows.values()) == 0
    for kind, row in tally.rows.items():
        assert row["clear error"] + row["handled"] == row["tried"], (kind, row)


if __name__ == "__main__":
    result = run()
    print(result.table())
    for crash in result.crashes:
        print("CRASH", crash)
    sys.exit(1 if result.crashes else 0)
