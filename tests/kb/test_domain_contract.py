"""Issue 41, the domain as data: a knowledge base written in another FAQ convention, with its own subjects, is
served fix-first and named in its own words from ``seeds/domain.toml`` alone, with no Python edit.

The knowledge base below is English only and uses the two conventions the shipped domain does not know: "**Q:** …
**A:** …" entries and "### Problem" / "### Solution" sub-headings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.answer.turn import take_turn
from bot.engine.subjects import Lexicon
from bot.kb.domain import DomainError, load_domain, shipped
from bot.web.admin.texts import group_label
from fixtures.engines import hash_engine, hash_settings_for

pytestmark = pytest.mark.unit

WIDGETS = """# Widget support

## The widget hangs at boot

### Problem

The widget freezes on the splash screen after a firmware update; the flux capacitor LED blinks amber.

### Solution

Hold the reset button for ten seconds, then reflash the firmware with `widget-flash --safe`.

## Pairing with a phone

**Q:** The phone does not find the widget over Bluetooth.

**A:** Turn pairing mode on with a double press, then forget the widget in the phone's settings and pair again.
"""

DOMAIN = """[faq]
fields = ["Problem", "Solution", "Q", "A"]
fix = ["Solution", "A"]
pairs = []
quiet = []

[[subject]]
name = "Flux capacitor"
category = "product"
aliases = ["flux capacitor", "fluxcap"]
names = { zh = "通量电容" }
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("widgets")
    (root / "seeds").mkdir()
    (root / "seeds" / "widgets.md").write_text(WIDGETS, encoding="utf-8")
    (root / "seeds" / "domain.toml").write_text(DOMAIN, encoding="utf-8")
    return hash_engine(hash_settings_for(root))


def test_the_sub_headings_and_bold_labels_are_fields_with_the_fix_known(engine) -> None:
    by_heading = {s.heading: s for s in engine.sections}
    assert "Problem" not in by_heading and "Solution" not in by_heading  # fields of their section, not sections
    boot = by_heading["The widget hangs at boot"]
    assert [name for name, _ in boot.fields] == ["Problem", "Solution"] and boot.having("fix") == ("Solution",)
    assert boot.field("Solution").startswith("Hold the reset button")
    pairing = by_heading["Pairing with a phone"]
    assert [name for name, _ in pairing.fields] == ["Q", "A"] and pairing.having("fix") == ("A",)


@pytest.mark.parametrize(
    "question,fix,problem",
    [
        ("The widget hangs at boot after a firmware update", "Hold the reset button", "freezes on the splash"),
        ("The phone does not find the widget over Bluetooth", "Turn pairing mode on", "does not find the widget"),
    ],
)
def test_the_reply_leads_with_the_fix(engine, question: str, fix: str, problem: str) -> None:
    turned, _ = take_turn(engine, question)
    reply = turned.reply
    assert reply.shown, reply.markdown  # a section was cited
    body = reply.markdown
    assert fix in body, body
    assert problem not in body or body.index(fix) < body.index(problem), body  # the fix first, the problem after


def test_its_own_subjects_are_found_and_named_in_its_own_words(engine) -> None:
    boot = next(n for n, s in enumerate(engine.sections) if s.heading == "The widget hangs at boot")
    assert "Flux capacitor" in engine.facts[boot].named  # the build's facts read the company's subjects
    lexicon = Lexicon.of(engine.index.domain)
    assert lexicon.find("my fluxcap blinks") >= {"Flux capacitor"}
    label = group_label("Flux capacitor", ("Flux capacitor",), "", True, "zh", lexicon)
    assert label == "通量电容"  # the admin's name for a group of this subject
    assert group_label("Flux capacitor", ("Flux capacitor",), "", True, "en", lexicon) == "Flux capacitor"


def test_the_shipped_conventions_stay_for_a_knowledge_base_without_a_domain_file(tmp_path: Path) -> None:
    assert load_domain(tmp_path) == shipped() and "解决方法" in shipped().faq.fix


@pytest.mark.parametrize(
    "content,says",
    [
        ('[faq]\nfix = ["Fix"]\n', "[faq] fix names 'Fix', which is not in [faq] fields; add it to fields"),
        ('[faq]\nfields = "Q"\n', "[faq] fields must be a list of names"),
        ('[faq]\nsolution = ["A"]\n', "[faq] has no key 'solution'; use fields, fix, pairs or quiet"),
        ('[[subject]]\nname = "X"\n', "[[subject]] 'X' is missing or mistypes 'category'"),
        ('[[subject]]\nname = "X"\ncategory = "tool"\naliases = ["x"]\nimplies = ["Y"]\n', "unknown subject 'Y'"),
        ("[faq\n", "cannot be read"),
    ],
)
def test_a_bad_domain_file_is_refused_naming_the_file_the_key_and_the_fix(tmp_path: Path, content, says) -> None:
    (tmp_path / "domain.toml").write_text(content, encoding="utf-8")
    with pytest.raises(DomainError) as problem:
        load_domain(tmp_path)
    assert str(tmp_path / "domain.toml") in str(problem.value) and says in str(problem.value), problem.value
