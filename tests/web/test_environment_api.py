"""``POST /api/ask`` and ``/v1``'s ``bot`` extension return what was read (``environment``) and found (``mismatches``,
each with its code, values and source row)."""

from __future__ import annotations

import httpx
import pytest

from app import WebSettings, build_app
from bot.engine.retrieve import Engine
from bot.store.database import Store, StoreSettings
from bot.web.openai_api import MODEL_ID
from fixtures.server import ThreadServer

TOKEN = "api-token-env"
PASTE = "显存不足怎么办？\n| NVIDIA-SMI 418.67   Driver Version: 418.67   CUDA Version: 10.1 |\npaddle with cuda: 10.2"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from fixtures.engines import hash_settings_for

    root = tmp_path_factory.mktemp("envapi")
    (root / "seeds").mkdir()
    (root / "seeds" / "gpu.md").write_text(
        "# GPU\n\n## 显存不足怎么办\n\n+ 解决方法：减小 `batch_size`。\n", encoding="utf-8"
    )
    settings = hash_settings_for(root)
    engine = Engine.open(settings, auto_build=True)
    store = Store.open(StoreSettings(data_dir=root / "data"))
    app = build_app(settings, engine=engine, web=WebSettings(api_token=TOKEN), progress=False, store=store)
    with ThreadServer(app) as server:
        yield server
    store.close()


def _check(environment: dict, mismatches: list) -> None:
    assert environment["driver"] == "418.67" and environment["build_cuda"] == "10.2"
    [found] = mismatches
    assert found["code"] == "driver_too_old" and found["values"] == {
        "driver": "418.67",
        "driver_cuda": "10.1",
        "cuda": "10.2",
        "minimum": "440.33 (Linux) / 441.22 (Windows)",  # the driver CUDA 10.2 needs, named in the reply too
    }
    assert found["source"]["url"] and found["source"]["read"] == "2026-11-24"


def test_api_ask_returns_environment_and_mismatches(served):
    headers = {"Authorization": f"Bearer {TOKEN}"}
    body = httpx.post(served.url + "/api/ask", json={"question": PASTE}, headers=headers, timeout=60).json()
    _check(body["environment"], body["mismatches"])
    plain = httpx.post(served.url + "/api/ask", json={"question": "显存不足怎么办"}, headers=headers, timeout=60).json()
    assert plain["environment"] == {} and plain["mismatches"] == []


def test_v1_bot_extension_returns_environment_and_mismatches(served):
    headers = {"Authorization": f"Bearer {TOKEN}"}
    request = {"model": MODEL_ID, "messages": [{"role": "user", "content": PASTE}]}
    body = httpx.post(served.url + "/v1/chat/completions", json=request, headers=headers, timeout=60).json()
    _check(body["bot"]["environment"], body["bot"]["mismatches"])
    assert "418.67" in body["choices"][0]["message"]["content"]
