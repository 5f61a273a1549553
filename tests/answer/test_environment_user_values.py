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


# --- issue 44, second round: the values the earlier reading left unnamed ---------------------------------------------

PADDLE_ARCH_LINE = (
    "W1203 10:01:02.123456  4711 gpu_resources.cc:96] The GPU architecture in your current machine is Pascal, "
    "which is not compatible with Paddle installation with arch: 70 75 80 86 , it is recommended to install the "
    "corresponding wheel package according to the installation information on the official Paddle website."
)


def test_paddles_architecture_line_names_the_gpu_family_and_the_builds_arch_list():
    env = read_environment(PADDLE_ARCH_LINE)
    assert env.gpu_arch == "Pascal"
    assert ("build_arch", "70 75 80 86", "70 75 80 86") in env.typed
    for lang in ("en", "zh"):
        said = describe(check(env, table_for(None)), lang)
        # Both sides: the GPU as Paddle names it, and the architectures the wheel was built for.
        assert "Pascal" in said and "70 75 80 86" in said, said
    assert "no kernel image" not in describe(check(env, table_for(None)), "en")  # not the generic message


def test_with_a_printed_capability_the_family_still_shows():
    env = read_environment(
        PADDLE_ARCH_LINE + "\nPlease NOTE: device: 0, GPU Compute Capability: 6.1, "
        "Driver API Version: 11.7, Runtime API Version: 11.7"
    )
    said = describe(check(env, table_for(None)), "en")
    assert "6.1" in said and "Pascal" in said and "70 75 80 86" in said


def test_paddle_version_cudnn_is_the_builds_cudnn_as_printed():
    env = read_environment("paddle.version.cudnn()   8.4.1\npaddle.version.cuda()  11.7")
    assert (env.build_cudnn, env.build_cuda) == ("8.4", "11.7")
    assert ("build_cudnn", "8.4", "8.4.1") in env.typed


def test_a_missing_library_names_the_builds_cudnn_and_the_driver():
    env = read_environment(
        "RuntimeError: (PreconditionNotMet) Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion.\n"
        "paddle.version.cudnn()   8.4.1\ncudnn是8.6\nDriver Version: 470.57.02   CUDA Version: 11.4"
    )
    said = describe(check(env, table_for(None)), "zh")
    assert "8.4.1" in said and "470.57.02" in said, said


def test_a_gpu_typed_with_its_brand_is_quoted_with_it_and_the_2050_is_ampere():
    env = read_environment(
        "显卡：nvidia 2050\ncuda：10.2\nThe GPU architecture in your current machine is Ampere, "
        "which is not compatible with Paddle installation with arch: 52 60 61 70 75"
    )
    assert env.gpus == ("RTX 2050",)
    assert ("gpu", "RTX 2050", "nvidia 2050") in env.typed
    m = check(env, table_for(None)).mismatches[0]
    assert (m.code, m.values.get("compute_capability")) == ("compute_capability", "8.6")
    said = describe(check(env, table_for(None)), "zh")
    assert "nvidia 2050" in said and "52 60 61 70 75" in said


def test_an_rtx_3070_on_a_cuda_10_2_paddle_is_a_gpu_the_build_lacks():
    env = read_environment("配置：windows10, RTX 3070, CUDA 10.2, cuDNN 7.6.5, paddlepaddle2.0rc")
    d = check(env, table_for(None))
    assert d.codes == ("compute_capability",)
    assert "RTX 3070" in describe(d, "zh")


def test_a_compute_capability_finding_names_the_package_as_typed():
    env = read_environment("cuda版本是10.2，显卡是3060，paddlepaddle是2.1.3")
    said = describe(check(env, table_for(None)), "zh")
    assert "3060" in said and "2.1.3" in said and "10.2" in said


def test_an_old_driver_names_the_gpu_it_must_support():
    env = read_environment(
        "InternalError: cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version\n"
        "### TensorFlow version\nTF 2.12\n### CUDA/cuDNN version\n11.8\n### GPU model and memory\nGTX970"
    )
    said = describe(check(env, table_for(None)), "en")
    assert "GTX970" in said and "11.8" in said and "TF 2.12" in said


def test_cuda_version_i_am_using_is_read_as_the_machines_cuda():
    env = read_environment("the cuda version i'm using is 11.7 and it works with other code")
    assert env.cuda_toolkit == ("11.7",)
    # "is" joins only a version: a sentence after "cuda" that says no number is not read as one.
    assert read_environment("cuda is installed, 3 gpus").cuda_toolkit == ()


def test_tensorflow_on_native_windows_names_the_system_and_gives_the_windows_fix():
    env = read_environment("tensorflow                2.13.0\nOS: Windows 11\nGPU: RTX 4070\nGPU not detected")
    d = check(env, table_for(None))
    assert d.codes == ("cpu_only_wheel",)
    for lang in ("en", "zh"):
        said = describe(d, lang)
        assert "Windows 11" in said and "2.10" in said and "WSL2" in said, said
        assert 'pip install "tensorflow<2.11"' in said
        assert "install the GPU build" not in said  # there is none for native Windows


def test_a_gpu_typed_in_lower_case_or_without_a_space_is_read_and_quoted_as_typed():
    assert read_environment("my gpu is an rtx 2060 on windows").gpus == ("rtx 2060",)
    env = read_environment(
        "GPU: RTX3090\n| NVIDIA-SMI 455.23.05    Driver Version: 455.23.05    CUDA Version: 11.1 |\n"
        "paddlepaddle-gpu==2.0.0.post101, cuda 10.1"
    )
    said = describe(check(env, table_for(None)), "en")
    # The GPU as typed, and the driver that decides which newer build the fix may install.
    assert "RTX3090" in said and "455.23.05" in said, said


DEVICE_QUERY = """CUDA error: invalid device function
Device 0: "TITAN X (Pascal)"
  CUDA Driver Version / Runtime Version          8.0 / 8.0
  CUDA Capability Major/Minor version number:    6.1
"""


def test_device_query_is_read_and_invalid_device_function_is_a_gpu_the_build_lacks():
    env = read_environment(DEVICE_QUERY)
    assert (env.gpus, env.compute_capability, env.cuda_driver_api, env.cuda_toolkit) == (
        ("TITAN X (Pascal)",),
        "6.1",
        "8.0",
        ("8.0",),
    )
    d = check(env, table_for(None))
    assert d.codes == ("compute_capability",)
    said = describe(d, "en")
    assert "TITAN X (Pascal)" in said and "6.1" in said
    # The table's oldest CUDA row (9.0) is not "the first CUDA for 6.1": CUDA 8.0 already compiles for it.
    assert "needs CUDA 9.0" not in said


def test_a_build_that_lists_its_architectures_gets_an_architecture_fix_not_a_newer_cuda():
    said = describe(check(read_environment(PADDLE_ARCH_LINE), table_for(None)), "en")
    assert "include this GPU's" in said and "Ampere needs CUDA 11" not in said


def test_a_library_that_does_not_exist_on_wsl_gets_the_wsl_fix_and_the_system_as_typed():
    env = read_environment(
        'WSL2: "libcuda.so.1" does not exist\n'
        "- OS Platform and Distribution (e.g., Linux Ubuntu 16.04): Ubuntu 20.04 running on WSL2\n"
        "- TensorFlow version: 2.6.0\n"
    )
    assert env.missing_libraries == ("libcuda.so.1",) and env.wsl
    assert ("os", "Ubuntu 20.04", "Ubuntu 20.04 running on WSL2") in env.typed  # not the template's example
    said = describe(check(env, table_for(None)), "en")
    assert "Ubuntu 20.04 running on WSL2" in said and "/usr/lib/wsl/lib" in said, said
    assert "find / -name" not in said


def test_a_laptop_gpu_has_its_desktop_models_capability():
    env = read_environment(
        "显卡 NVIDIA GeForce RTX 3050 Laptop GPU，装了cuda10.2和paddlepaddle-gpu 2.3.0，run_check卡住"
    )
    d = check(env, table_for(None))
    assert d.codes == ("compute_capability",)
    assert d.mismatches[0].values["compute_capability"] == "8.6"
