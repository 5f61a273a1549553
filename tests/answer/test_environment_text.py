"""The words: the mismatch in the user's language with its source and fix; 'consistent'; the one command asked."""

from bot.answer.environment_text import ASKS, FIXES, TITLES, describe
from bot.diagnose.compat import check, table_from_toml
from bot.diagnose.environment import read_environment
from fixtures.compat_table import TABLE


def test_chinese_reply_names_values_source_and_fix():
    d = check(
        read_environment("Driver Version: 418.67   CUDA Version: 10.1\npaddle with cuda: 10.2"), table_from_toml(TABLE)
    )
    text = describe(d, "zh")
    assert "驱动 418.67 最高支持 CUDA 10.1；安装包是 CUDA 10.2 版本" in text
    assert "(https://nvidia.example/driver)" in text and FIXES["driver_too_old"]["zh"] in text


def test_english_reply_for_consistent_versions_says_so():
    d = check(
        read_environment("Driver Version: 470.82.01   CUDA Version: 11.4\npaddle with cuda: 11.7"),
        table_from_toml(TABLE),
    )
    assert describe(d, "en").startswith(
        "**Environment check**: the versions you pasted are consistent (driver and CUDA)"
    )


def test_missing_value_asks_for_the_one_command():
    d = check(
        read_environment("paddle with cuda: 10.2\nGPU: NVIDIA GeForce RTX 3050 Laptop GPU"), table_from_toml(TABLE)
    )
    assert describe(d, "zh").endswith(ASKS["gpu_query"]["zh"])


def test_no_environment_no_words():
    assert describe(check(read_environment("loss is nan"), table_from_toml(TABLE)), "en") == ""


def test_every_code_has_words_in_both_languages():
    for words in (TITLES, FIXES):
        assert all(set(v) == {"zh", "en"} for v in words.values()) and len(words) == 6


def test_a_gpu_named_in_an_ordinary_question_asks_for_nothing():
    d = check(read_environment("训练时显存不足怎么办？我的卡是 NVIDIA A30"), table_from_toml(TABLE))
    assert d.ask is None and describe(d, "zh") == ""
