"""Issue 35: a pasted environment's reply names the conflicting versions and their source by name, gives the exact
command for this machine, and asks for nothing the paste already showed."""

from __future__ import annotations

from bot.answer.collect import collect_text, missing
from bot.answer.environment_text import TITLES, describe, sentence, source_name
from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import read_environment

SMI = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
|   0  NVIDIA GeForce RTX 3090  Off  | 00000000:01:00.0 Off |                  N/A |
+-------------------------------+----------------------+----------------------+"""
PASTE = f"为什么 Paddle 训练时不用 GPU？\n{SMI}\n$ pip list | grep paddle\npaddlepaddle        2.6.1\n"


def _said(paste: str, language: str = "zh") -> str:
    return describe(check(read_environment(paste), table_for(None)), language)


def test_the_cpu_wheel_reply_gives_the_gpu_wheel_of_that_version_for_cuda_12_with_its_command():
    said = _said(PASTE)
    assert "paddlepaddle==2.6.1" in said and "535.104.05" in said and "12.2" in said
    assert "python -m pip uninstall -y paddlepaddle" in said
    assert (
        "python -m pip install paddlepaddle-gpu==2.6.1.post120 -f https://www.paddlepaddle.org.cn/whl/linux/mkl/avx/stable.html"
        in said
    )
    assert "PaddlePaddle 安装文档" in said  # the install page the table's row was read from, by its name


def test_no_title_is_repeated_by_its_sentence():
    said = _said(PASTE)
    assert "装的是 CPU 版：装的是 CPU 版" not in said
    diagnosis = check(read_environment(PASTE), table_for(None))
    for m in diagnosis.mismatches:
        for lang in ("zh", "en"):
            assert TITLES[m.code][lang].lower() not in sentence(m, lang).lower()


def test_a_source_link_is_named_by_its_publisher_never_by_an_internal_key():
    said = _said(PASTE)
    assert "来源：[message" not in said and "not_compiled_with_cuda" not in said.split("](")[0]
    table = table_for(None)
    for row in table.rows:
        for lang in ("zh", "en"):
            name = source_name(row.source, lang)
            assert name and row.source.kind not in name.split()[0].lower(), (row.source, name)
            if row.source.kind == "message":
                assert row.source.key not in name


def test_nothing_pasted_is_asked_for_again():
    assert missing([PASTE]) == [] and collect_text("zh", [PASTE]) == ""
    # No mismatch: the framework's version a pip list showed is not asked for, nor the driver nvidia-smi showed.
    fine = f"Paddle 训练很慢\n{SMI}\npaddlepaddle-gpu     2.6.1.post120"
    asked = collect_text("zh", [fine])
    assert "PaddlePaddle 的版本" not in asked and "nvidia-smi" not in asked
