"""/admin shows the knowledge bases' self-test (bot.kb.selftest): hit@1 on their own held-out pseudo-questions for
the product, dense alone and BM25 alone; a damaged file is named with the fix, and the page still answers."""

from __future__ import annotations

import httpx

from bot.kb.index import read_manifest
from bot.kb.selftest import SELFTEST_FILE, read
from bot.web.admin.routes import selftest_of
from bot.web.admin.texts import TEXTS
from web.test_admin import ADMIN, admin_site  # noqa: F401  (the fixture)


def test_admin_shows_the_self_test_figures(admin_site, hash_settings):  # noqa: F811
    server, _ = admin_site
    generation, _ = read_manifest(hash_settings.index_dir)
    stored, problem = read(generation)
    assert stored is not None and not problem
    (kb,) = stored.kbs
    html = httpx.get(server.url + "/admin", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60).text
    assert 'id="selftest"' in html
    # each figure carries its column's name, which a phone shows beside it when the table stacks
    heads = TEXTS["en"]["selftest_head"].split("|")
    cells = (kb.kb, kb.n, f"{kb.product:.3f}", f"{kb.dense:.3f}", f"{kb.bm25:.3f}")
    row = f"<td>{cells[0]}</td>" + "".join(
        f'<td data-label="{head}">{cell}</td>' for head, cell in zip(heads[1:], cells[1:])
    )
    assert row in html


def test_admin_names_a_corrupt_self_test(admin_site, hash_settings):  # noqa: F811
    server, _ = admin_site
    generation, _ = read_manifest(hash_settings.index_dir)
    (generation / SELFTEST_FILE).write_bytes(b"\x00garbage")
    page = httpx.get(server.url + "/admin", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
    assert page.status_code == 200
    assert f"{generation / SELFTEST_FILE} is unreadable" in page.text and "python -m bot build" in page.text


def test_no_self_test_section_for_an_engine_without_one():
    class Stub:
        @property
        def selftest(self):
            raise RuntimeError("still loading")

    assert selftest_of(Stub()) is None and selftest_of(None) is None
