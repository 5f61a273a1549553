"""Issue 44, third round: each common printed format is read as the user typed it, and the reply names the user's setup
in their own words (the GPU, driver, CUDA, cuDNN, build, system, paths) with nothing the paste does not hold."""

import json
import re
from pathlib import Path

import pytest

from bot.answer.environment_text import describe, library_fix, setup_text
from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import read_environment

ROOT = Path(__file__).resolve().parents[2]


def _words(field: str, paste: str) -> list[str]:
    return [words for f, _, words in read_environment(paste).typed if f == field]


# One made-up paste per printed format: (the format, the paste, the field, the user's words the reply may quote).
FORMATS = [
    (
        "nvidia-smi header",
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |",
        "driver",
        "535.104.05",
    ),
    (
        "nvidia-smi header's CUDA",
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |",
        "driver_cuda",
        "CUDA Version: 12.2",
    ),
    (
        "nvidia-smi GPU row",
        "|   0  NVIDIA GeForce RTX 3060 Laptop GPU  Off | 00000000:01:00.0 Off |                  N/A |",
        "gpu",
        "NVIDIA GeForce RTX 3060 Laptop GPU",
    ),
    (
        "nvcc --version",
        "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.8, V11.8.89",
        "cuda",
        "Cuda compilation tools, release 11.8",
    ),
    ("version.txt", "cat /usr/local/cuda/version.txt\nCUDA Version 10.1.243", "cuda", "CUDA Version 10.1.243"),
    (
        "collect_env",
        "CUDA runtime version: 11.7.64\nCUDA used to build PyTorch: 11.8",
        "cuda",
        "CUDA runtime version: 11.7",
    ),
    ("collect_env build", "CUDA used to build PyTorch: 11.8\nIs CUDA available: False", "build_cuda", "11.8"),
    (
        "cudnn.h defines",
        "cat cudnn_version.h | grep CUDNN_MAJOR -A 2\n#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 6\n",
        "cudnn",
        "#define CUDNN_MINOR 6",
    ),
    ("cuDNN in prose", "I installed cudnn 8.6.0 for it", "cudnn", "cudnn 8.6.0"),
    (
        "run_check",
        "W0824 gpu_resources.cc:61] Please NOTE: device: 0, GPU Compute Capability: 6.1, Driver API Version: 11.7, "
        "Runtime API Version: 11.7",
        "cuda",
        "Runtime API Version: 11.7",
    ),
    (
        "run_check capability",
        "device: 0, GPU Compute Capability: 8.6, Driver API Version: 12.0",
        "compute_capability",
        "GPU Compute Capability: 8.6",
    ),
    ("paddle.version.cuda()", ">>> paddle.version.cuda()\n'11.7'\npaddle.version.cuda()   11.7", "build_cuda", "11.7"),
    ("pip list row", "paddlepaddle-gpu          2.4.2.post117", "package", "paddlepaddle-gpu          2.4.2.post117"),
    (
        "conda list row",
        "cudatoolkit               11.3.1               h2bc3f7f_2",
        "cuda",
        "cudatoolkit               11.3.1",
    ),
    ("pip show", "Name: tensorflow\nVersion: 2.10.1", "package", "2.10.1"),
    ("torch build tag", "torch==2.1.0+cu118", "package", "torch==2.1.0+cu118"),
    (
        "Paddle's index",
        "pip install paddlepaddle-gpu==3.0.0 -i https://www.paddlepaddle.org.cn/packages/stable/cu118/",
        "build_tag",
        "cu118",
    ),
    ("a bare Paddle build", "the 2.3.1.post112 version does not run here", "package", "2.3.1.post112"),
    (
        "tf build info",
        "{'cuda_version': '11.2', 'cudnn_version': '8', 'is_cuda_build': True}",
        "build_cuda",
        "11.2",
    ),
    (
        "TF device line",
        "Found device 0 with properties:\npciBusID: 0000:01:00.0 name: GeForce GTX 1050 Ti computeCapability: 6.1",
        "gpu",
        "GeForce GTX 1050 Ti",
    ),
    (
        "template GPU field",
        "- CUDA/cuDNN version: 10.2\n- GPU model and memory: nVidia GeForce GT 710, 1GB of memory",
        "gpu",
        "nVidia GeForce GT 710, 1GB of memory",
    ),
    (
        "template GPU heading",
        "### CUDA/cuDNN version\n\ncuda 12.8\n\n### GPU model and memory\n\nv100\n\n### Current",
        "gpu",
        "v100",
    ),
    (
        "template OS heading",
        "### OS platform and distribution\n\nLinux CentOS 7\n\n### Python version\n\n3.8",
        "os",
        "Linux CentOS 7",
    ),
    (
        "template Python heading",
        "### OS platform and distribution\n\nLinux CentOS 7\n\n### Python version\n\n3.11.9\n",
        "python",
        "3.11.9",
    ),
    (
        "template TensorFlow, next line",
        "- **TensorFlow version (use command below)**:\nv1.3.0-rc2-20-g0787eee 1.3.0\n",
        "package",
        "v1.3.0-rc2-20-g0787eee 1.3.0",
    ),
    (
        "template nightly",
        "- TensorFlow version: tf-nightly-gpu 2.5.0.dev20201125\n",
        "package",
        "tf-nightly-gpu 2.5.0.dev20201125",
    ),
    ("driver branch", "I installed Nvidia driver 455 successfully", "driver", "driver 455"),
    ("Jetson", "running on a Jetson Nano with JetPack 4.3, TensorFlow 1.15.2", "os", "JetPack 4.3"),
]


@pytest.mark.parametrize(("kind", "paste", "field", "words"), FORMATS, ids=[f[0] for f in FORMATS])
def test_each_printed_format_is_kept_as_typed(kind, paste, field, words):
    assert words in paste  # the made-up paste holds the words
    assert words in _words(field, paste), (kind, read_environment(paste).typed)


def test_a_templates_example_is_not_the_users_system():
    env = read_environment("- OS Platform and Distribution (e.g., Linux Ubuntu 16.04): Windows 10 Pro\n")
    assert env.os == "Windows 10"
    assert "Ubuntu 16.04" not in " ".join(_words("os", "(e.g., Linux Ubuntu 16.04): Windows 10 Pro"))


def test_a_system_inside_a_url_is_not_read():
    env = read_environment("安装https://github.com/x/tensorflow-windows-wheel/tree/master/1.15.0/py37 on Ubuntu 20.04")
    assert env.os == "Ubuntu 20.04"
    assert all("github" not in w for w in _words("os", "see https://github.com/x/tensorflow-windows-wheel/tree"))


def test_a_driver_branch_is_quoted_not_compared():
    assert read_environment("Nvidia driver 455 and CUDA 11.2").driver is None  # (455,) is no version the table has


def test_a_field_without_a_gpu_is_not_quoted_as_one():
    assert _words("gpu", "- GPU model and memory: N/A\n") == []


def test_the_reply_names_the_setup_the_findings_leave_out():
    paste = (
        "### TensorFlow version\n\ntf 2.13\n\n### OS platform and distribution\n\nLinux CentOS 7\n\n"
        "### CUDA/cuDNN version\n\ncuda 12.8 cudnn 9.7.1\n\n### GPU model and memory\n\nv100\n"
    )
    for lang in ("en", "zh"):
        said = describe(check(read_environment(paste), table_for(None)), lang)
        assert "`v100`" in said and "`Linux CentOS 7`" in said, said
        assert said.count("cuda 12.8 cudnn 9.7.1") == 1  # quoted once, in the finding, not again in the setup line


def test_the_setup_line_keeps_the_longer_of_two_spans_and_is_empty_when_all_is_said():
    typed = (("gpu", "GTX 1080 Ti", "GTX 1080 Ti"), ("gpu", "GeForce GTX 1080 Ti", "GeForce GTX 1080 Ti"))
    assert setup_text(typed, "", "en") == "  Your setup as pasted: GPU `GeForce GTX 1080 Ti`."
    assert setup_text(typed, "the GeForce GTX 1080 Ti has no kernels", "en") == ""


def test_a_printed_search_path_gives_the_find_command():
    env = read_environment(
        "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object "
        "file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda/lib:/usr/local/cuda/lib:"
    )
    m = next(m for m in check(env, table_for(None)).mismatches if m.code == "missing_library")
    fix = library_fix(m, env, "en")
    assert "find / -name 'libcudart.so.11.0*'" in fix and "export LD_LIBRARY_PATH=" in fix


_QUOTED = re.compile(r"(?:as you wrote them: |你贴出的原文：|Your setup as pasted: |你贴出的环境：)([^\n]*)")


def test_no_named_value_is_absent_from_its_paste():
    """Every span the reply gives as the user's own (a finding's quotes, the setup line), over every committed paste,
    is in that paste exactly as typed."""
    files = sorted((ROOT / "eval").glob("environments/batch_*.jsonl")) + sorted(
        (ROOT / "eval").glob("holdout1[12]/envs/pastes*_settled.jsonl")
    )
    table, quoted = table_for(None), 0
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            paste = json.loads(line)["paste"]
            for lang in ("en", "zh"):
                for segment in _QUOTED.findall(describe(check(read_environment(paste), table), lang)):
                    for words in re.findall(r"`([^`]+)`", segment):
                        quoted += 1
                        assert words in paste, (path.name, words)
    assert quoted > 500  # the check saw the quotes (over 1,000 on the committed pastes)
