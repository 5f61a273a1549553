"""Pastes as people make them at their worst: huge, cut, coloured, several GPUs. No exception, a sensible diagnosis,
linear time (growth compared within one run, never against the clock)."""

import re
from re import _constants as sre_constants
from re import _parser as sre_parse

import bot.diagnose.compat as compat
import bot.diagnose.environment as environment
from bot.answer.environment_text import describe
from bot.diagnose.compat import check, table_from_toml
from bot.diagnose.environment import read_environment
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
    for name, pattern in _patterns(environment) + _patterns(compat):
        for high, depth in _repeats(sre_parse.parse(pattern.pattern, pattern.flags)):
            assert high != sre_constants.MAXREPEAT, f"{name}: unbounded repeat in {pattern.pattern!r}"
            assert depth == 0 or high <= 40, f"{name}: nested repeat up to {high}"
