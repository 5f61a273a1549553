"""Issue 44: an environment reply names each side of a mismatch in the user's own words, read from the paste only."""

import json
from pathlib import Path

from bot.answer.environment_text import describe, library_fix, quotes
from bot.answer.state import _environment
from bot.diagnose.compat import Mismatch, Source, check, table_for
from bot.diagnose.environment import merge, normalise, read_environment
from bot.diagnose.evaluate_environments import format_figures, mismatch_values, score
from bot.records import Environment

ROOT = Path(__file__).resolve().parents[2]

TF_TEMPLATE = """**System information**
- OS Platform and Distribution (e.g., Linux Ubuntu 16.04): Ubuntu 20.04
- TensorFlow installed from (source or binary): pip
- TensorFlow version: 2.4.0-rc1
- CUDA/cuDNN version: 11.1 & 8.0.5
- GPU model and memory: RTX 3080
"""


def test_the_reader_keeps_template_values_as_typed():
    typed = read_environment(TF_TEMPLATE).typed
    assert ("cuda", "11.1", "11.1 & 8.0.5") in typed
    assert ("cudnn", "8.0.5", "11.1 & 8.0.5") in typed
    assert any(f == "package" and w.endswith("2.4.0-rc1") for f, _, w in typed)  # the rc tag the version drops


def test_a_tensorflow_gpu_template_line_is_the_tensorflow_package():
    env = read_environment("- TensorFlow version: tensorflow gpu 2.3.0\n- CUDA/cuDNN version: 10.2")
    assert [(p.name, p.version) for p in env.packages] == [("tensorflow-any", "2.3.0")]
    assert ("package", "tensorflow-any==2.3.0", "tensorflow gpu 2.3.0") in env.typed


def test_statements_keep_the_users_spelling_and_paths_their_folder():
    env = read_environment(
        "目前已安装cuda10.0，cudnn7.6.5，显卡是RTX3070ti\n"
        "Could not load dynamic library 'libcusolver.so.10'; dlerror: libcusolver.so.10: cannot open shared object "
        "file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda-11.2/lib64:/usr/local/cuda/extras"
    )
    assert ("cuda", "10.0", "cuda10.0") in env.typed and ("cudnn", "7.6.5", "cudnn7.6.5") in env.typed
    assert "RTX3070ti" in env.gpus  # "ti" in lower case too
    assert ("cuda", "11.2", "/usr/local/cuda-11.2/lib64") in env.typed  # one entry of the path list
    assert env.cuda_toolkit == ("10.0",)  # a path on LD_LIBRARY_PATH is quoted, not read as the toolkit
    assert ("library_path", "LD_LIBRARY_PATH", "/usr/local/cuda-11.2/lib64:/usr/local/cuda/extras") in env.typed


def test_the_reply_quotes_both_sides_as_typed():
    env = read_environment(TF_TEMPLATE.replace("2.4.0-rc1", "2.3.0").replace("11.1 & 8.0.5", "10.2, 8.0.2"))
    said = describe(check(env, table_for(None)), "en")
    assert "Package built for another CUDA" in said
    assert "`10.2, 8.0.2`" in said and "TensorFlow 2.3.0" in said
    assert "tensorflow-any" not in said  # the reader's internal name is not shown


def test_quotes_are_only_the_values_of_the_finding_and_never_repeat_the_sentence():
    m = Mismatch("wheel_cuda", {"cuda": "11.1"}, Source("wheel", "k", "u"), "table")
    typed = (("cuda", "11.1", "CUDA 11.1"), ("cuda", "11.1", "cuda 11.1 here"), ("gpu", "RTX 3080", "RTX 3080"))
    assert quotes(m, typed) == ("cuda 11.1 here",)  # the longer quote holds the shorter; the GPU is not this finding's
    assert quotes(m, typed, "… this machine has cuda 11.1 here") == ()


def test_a_missing_dll_fix_uses_the_folder_exactly_as_pasted():
    paste = (
        '[WinError 127] 找不到指定的程序。 Error loading "D:\\Soft\\envs\\y\\lib\\site-packages\\paddle\\libs\\'
        'cudnn_cnn_train64_8.dll" or one of its dependencies.'
    )
    env = read_environment(paste)
    m = check(env, table_for(None)).mismatches[0]
    fix = library_fix(m, env, "zh")
    assert "set PATH=D:\\Soft\\envs\\y\\lib\\site-packages\\paddle\\libs;%PATH%" in fix
    linux = Mismatch("missing_library", {"library": "libcudnn.so.8"}, Source("message", "k", "u"), "message")
    assert "export LD_LIBRARY_PATH=" in library_fix(linux, Environment(os="CentOS 7"), "en")
    assert "(CentOS 7)" in library_fix(linux, Environment(os="CentOS 7"), "en")


def test_every_quote_of_every_batch_is_in_its_paste():
    for path in sorted((ROOT / "eval" / "environments").glob("batch_*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            paste = json.loads(line)["paste"]
            flat = " ".join(normalise(paste).lower().split())
            for field, value, words in read_environment(paste).typed:
                assert " ".join(words.lower().split()) in flat, (path.name, field, value, words)


def test_typed_words_survive_the_state_and_a_later_turn():
    first = read_environment("cuda版本是10.0")
    later = read_environment("cudnn版本是7.6.0")
    merged = merge(first, later)
    assert ("cuda", "10.0", "cuda版本是10.0") in merged.typed and ("cudnn", "7.6.0", "cudnn版本是7.6.0") in merged.typed
    assert Environment.from_dict(merged.as_dict()).typed == merged.typed
    # A state whose typed entries are not [field, value, words] lists keeps the rest and drops those.
    kept = _environment({"driver": "418.67", "typed": [["cuda", "10.0"], "x", ["cuda", "10.0", "cuda 10.0"]]})
    assert kept == {"driver": "418.67", "typed": [["cuda", "10.0", "cuda 10.0"]]}


def test_user_values_are_those_of_the_mismatches_and_must_be_quoted():
    expect = {
        "mismatches": [{"code": "wheel_cuda", "values": {"build_cuda": "10.1", "cuda": "10.2"}}],
        "accept": ["compute_capability"],  # an RTX 3080 has no kernels in a CUDA 10.1 build either
    }
    assert mismatch_values(expect, ["GT 710", "10.2, 8.0.2", "Ubuntu 16.04"]) == ("10.2, 8.0.2",)
    case = {
        "id": "a",
        "paste": TF_TEMPLATE.replace("2.4.0-rc1", "2.3.0").replace("11.1 & 8.0.5", "10.2, 8.0.2"),
        "expect": expect,
        "user_values": ["GT 710", "10.2, 8.0.2"],
    }
    table = table_for(None)
    quoted = score([case], table, describe)
    assert (quoted.user_values_named, quoted.user_values_cases, quoted.quotes_not_in_paste) == (1, 1, 0)
    plain = score([case], table, lambda d, lang: "this machine has CUDA 10.2")  # the number, not the user's words
    assert (plain.user_values_named, plain.user_values_quoted, plain.user_values_total) == (0, 0, 1)
    assert "user's values named:          0/1" in format_figures(plain)
