"""Pastes as people make them at their worst: huge, cut, coloured, several GPUs. No exception, a sensible diagnosis,
linear time (growth compared within one run, never against the clock)."""

import re
from re import _constants as sre_constants
from re import _parser as sre_parse

import pytest

import bot.diagnose.compat as compat
import bot.diagnose.environment as environment
from bot.answer.environment_text import describe
from bot.diagnose.compat import check, table_from_toml
from bot.diagnose.environment import read_environment
from bot.kb.domain import shipped
from fixtures.compat_table import TABLE


def _pip_list(lines: int) -> str:
    body = "\n".join(f"package-{i:05d}            {i % 7}.{i % 13}.{i % 5}" for i in range(lines))
    return f"Package    Version\n---------- -------\n{body}\npaddlepaddle-gpu    2.6.0.post120\n"


def test_five_thousand_line_pip_list():
    env = read_environment(_pip_list(5_000))
    assert [p.name for p in env.packages] == ["paddlepaddle-gpu"]
    assert check(env, table_from_toml(TABLE)).status in ("incomplete", "consistent")


def test_truncated_coloured_box_drawn_smi_with_three_gpus_gives_a_sensible_reply():
    paste = (
        "╒═════════╕\n│ NVIDIA-SMI 418.67  Driver Version: \x1b[1m418.67\x1b[0m  CUDA Version: 10.1 │\n"
        "│   0  Tesla P40\tOff  │ 0000:01:00.0 Off │\n│   1  NVIDIA A30   Off  │ 0000:02:00.0 Off │\n"
        "│   2  Tesla T4     Off  │ 00"
    )
    env = read_environment(paste + "\npaddle with cuda: 10.2")
    assert env.gpus[:2] == ("Tesla P40", "NVIDIA A30")
    d = check(env, table_from_toml(TABLE))
    assert set(d.codes) == {"driver_too_old", "compute_capability"}
    assert "418.67" in describe(d, "zh") and "NVIDIA A30" in describe(d, "en")


def test_binary_and_control_characters_do_not_raise():
    junk = "".join(chr(c) for c in range(0, 0x3000, 7)) * 3
    assert check(read_environment(junk), table_from_toml(TABLE)).status in (
        "none",
        "incomplete",
        "consistent",
        "mismatch",
    )


def _repeats(tree, depth=0):
    """Yield (max repeat, nesting depth of repeats) for every repeat in a parsed pattern."""
    for op, arg in tree:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            _low, high, sub = arg
            yield high, depth
            yield from _repeats(sub, depth + 1)
        elif op == sre_constants.SUBPATTERN:
            yield from _repeats(arg[-1], depth)
        elif op == sre_constants.BRANCH:
            for branch in arg[1]:
                yield from _repeats(branch, depth)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            yield from _repeats(arg[1], depth)


def _patterns(module):
    return [(name, value) for name, value in vars(module).items() if isinstance(value, re.Pattern)]


def test_every_pattern_has_only_bounded_repeats_and_no_nested_unbounded_ones():
    shipped_patterns = list(shipped().environment.named.items())
    assert len(shipped_patterns) > 80  # the reader's patterns are checked, not only the module's own
    for name, pattern in shipped_patterns + _patterns(environment) + _patterns(compat):
        for high, depth in _repeats(sre_parse.parse(pattern.pattern, pattern.flags)):
            assert high != sre_constants.MAXREPEAT, f"{name}: unbounded repeat in {pattern.pattern!r}"
            assert depth == 0 or high <= 40, f"{name}: nested repeat up to {high}"


def test_a_companys_pattern_that_could_take_quadratic_time_or_is_unknown_is_refused(tmp_path):
    """Issue 41's leftover: the patterns are data a company may replace, so the loader, not only this test, refuses
    a pattern that is not linear (a paste of 200,000 characters is read on every turn)."""
    from bot.kb.domain import DomainError, load_domain

    (tmp_path / "environment.toml").write_text("[pattern.TEXT_CUDA]\nre = '(?:cuda\\s*)+(\\d+)'\n", encoding="utf-8")
    with pytest.raises(DomainError, match=r"environment.toml: \[pattern.TEXT_CUDA\] has an unbounded repeat"):
        load_domain(tmp_path)
    (tmp_path / "environment.toml").write_text("[pattern.CUDA_VERSIONS]\nre = 'cuda'\n", encoding="utf-8")
    with pytest.raises(DomainError, match="not a pattern the reader uses"):
        load_domain(tmp_path)


def test_a_companys_pattern_replaces_the_shipped_one_by_name(tmp_path):
    """A company whose machines print "CUDA-Toolkit v12.4" teaches the reader that, with no Python edit."""
    from bot.kb.domain import load_domain

    (tmp_path / "environment.toml").write_text(
        "[pattern.TEXT_CUDA]\nre = 'CUDA-Toolkit v(\\d{1,2}\\.\\d{1,2})'\n", encoding="utf-8"
    )
    patterns = load_domain(tmp_path).environment
    assert read_environment("CUDA-Toolkit v12.4", patterns).cuda_toolkit == ("12.4",)
    assert read_environment("CUDA-Toolkit v12.4").cuda_toolkit == ()  # the shipped reader does not know it
