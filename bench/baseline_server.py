"""The baseline retriever behind ``POST /api/ask``, for the concurrency comparison.

``python -m bench.baseline_server --index DIR --embedder st:PATH --port N`` —
standard library threaded HTTP server, loopback only, same request and response
shape as the app (``{"question", "history"}`` -> ``{"answered", "language",
"reply", "signature", "hits"}``). Plain: each request embeds its question on its own (the model's runtime never
runs two at once), as a FAISS server written around the model would (the product can batch them: BOT_EMBED_BATCHING).
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def make_handler(retriever):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in separate writes; no 40 ms delayed-ACK stall

        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            if self.path != "/api/ask":
                self._send(404, {"error": "not found"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                question = str(payload.get("question", ""))
            except (ValueError, UnicodeDecodeError):
                self._send(400, {"error": 'expected JSON {"question": ...}'})
                return
            answer = retriever.ask(question, k=3)
            answer["reply"] = "\n".join(f"- {h['source']} § {h['section']}" for h in answer["hits"])
            self._send(200, answer)

    return Handler


def main(argv: list[str] | None = None) -> int:
    from bench.baseline import BaselineRetriever
    from bot.kb.embed import make_embedder

    parser = argparse.ArgumentParser(prog="python -m bench.baseline_server")
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("the benchmark server listens on loopback only")
    # A plain server: each request's question embedded on its own (no micro-batching, bot.kb.batcher).
    retriever = BaselineRetriever(args.index, make_embedder(args.embedder, batching=False))

    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # the default backlog of 5 drops connections under 50 clients

    server = Server((args.host, args.port), make_handler(retriever))
    server.daemon_threads = True
    print(f"baseline server on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
