"""Issue 35: pastes read as the user meant them, and findings that name the card, the driver and the minimum."""

from __future__ import annotations

from bot.answer.environment_text import describe
from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import read_environment
from bot.diagnose.evaluate_environments import read_batch, score, values_named
from fixtures import REPO


def _check(paste: str):
    return check(read_environment(paste), table_for(None))


def test_a_tensorflow_source_path_is_not_a_docker_image():
    env = read_environment(
        "2019-03-01 10:00:00.1: E tensorflow/stream_executor/cuda/cuda_dnn.cc:319] Loaded runtime CuDNN library: "
        "7.1.4 but source was compiled with: 7.2.1."
    )
    assert env.docker_image is None and not env.docker and env.image_cuda is None
    assert read_environment("docker run paddlepaddle/paddle:2.4.2-gpu-cuda11.7-cudnn8.4-trt8.4").image_cuda == "11.7"


def test_versions_tried_in_turn_are_not_the_installed_version():
    for paste in (
        "paddlepaddle-gpu 2.0.2和2.0.1都试过",
        "paddle 2.0.2和2.0.1都试过，都不行",
        "tried paddle 2.0.2 and 2.0.1",
    ):
        assert read_environment(paste).packages == (), paste
    assert read_environment("paddlepaddle-gpu 2.0.2，还是不行").packages[0].version == "2.0.2"


def test_an_rtx_3060_on_cuda_10_2_is_named_with_the_cuda_it_needs():
    said = describe(_check("gpu为3060的机子上安装cuda10.2，paddlepaddle-gpu 2.2.1 报错"), "zh")
    assert "RTX 3060" in said and "8.6" in said and "10.2" in said and "CUDA 11.1" in said


def test_the_card_the_framework_printed_its_capability_for_is_named():
    paste = (
        "gpu是2080的机子上可以运行，gpu为3060的机子上安装cuda10.2报错\n"
        "W0214 device_context.cc:447] Please NOTE: device: 0, GPU Compute Capability: 8.6, Driver API Version: 11.4, "
        "Runtime API Version: 10.2\nRuntimeError: no kernel image is available for execution on the device"
    )
    [finding] = _check(paste).mismatches
    assert finding.values["gpu"] == "RTX 3060" and finding.values["compute_capability"] == "8.6"


def test_driver_430_with_cuda_10_2_is_found_with_the_minimum():
    diagnosis = _check(
        "驱动版本 430.64，CUDA 版本 10.2，paddle 训练报错\n/home/u/.local/lib/python3.6/site-packages/paddle/x.py"
    )
    [finding] = diagnosis.mismatches
    assert finding.code == "driver_too_old" and finding.values["minimum"] == "440.33"
    said = describe(diagnosis, "zh")
    assert "430.64" in said and "10.2" in said and "440.33" in said


def test_a_library_message_still_names_the_versions_pasted():
    said = describe(
        _check("Driver Version: 418.67   CUDA Version: 10.1\nCUDA error(35), CUDA driver version is insufficient"), "en"
    )
    assert "418.67" in said and "10.1" in said
    missing = describe(_check("cuda 11.8\nOSError: libcudnn.so: cannot open shared object file"), "en")
    assert "libcudnn.so" in missing and "11.8" in missing


def test_values_named_reads_sm_numbers_models_and_files():
    assert values_named({"compute_capability": "sm_120", "gpu": "RTX 5090"}, "RTX 5090 (compute capability 12.0)") == ()
    assert values_named({"library": "cudart64_110.dll"}, "cudart64_110.dll was not found") == ()
    assert values_named({"cuda": "10.1.243"}, "CUDA 10.10") == ("cuda=10.1.243",)


def test_batch_a_replies_name_the_conflicting_versions():
    figures = score(read_batch(REPO / "eval" / "environments" / "batch_a.jsonl"), table_for(None), describe)
    assert figures.named_with_versions is not None
    assert figures.named_with_versions / figures.mismatch_cases >= 0.80
