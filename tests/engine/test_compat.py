"""The checker against a small table written here: each code, its source row, and what stays undecided."""

import pytest

from bot.diagnose.compat import check, load_table, table_from_toml
from bot.diagnose.environment import read_environment
from fixtures.compat_table import TABLE, TF_TABLE


@pytest.fixture
def table():
    return table_from_toml(TABLE)


def test_driver_older_than_the_toolkit_minimum(table):
    d = check(read_environment("Driver Version: 418.67   CUDA Version: 10.1\npaddle with cuda: 10.2"), table)
    assert d.status == "mismatch" and d.codes == ("driver_too_old",)
    assert d.mismatches[0].source.url == "https://nvidia.example/driver"
    # The row's minimum is named too (issue 35), both platforms' while the OS is unknown.
    assert dict(d.mismatches[0].values) == {
        "driver": "418.67",
        "driver_cuda": "10.1",
        "cuda": "10.2",
        "minimum": "440.33 (Linux) / 441.22 (Windows)",
    }


def test_minor_version_compatibility_is_not_a_mismatch(table):
    d = check(read_environment("Driver Version: 470.82.01   CUDA Version: 11.4\npaddle with cuda: 11.7"), table)
    assert d.codes == () and "driver" in d.checked


def test_framework_reported_driver_api_wins_over_the_host_header(table):
    # A forward-compatibility package in the image: host says 11.4, the framework sees driver API 12.0.
    paste = (
        "Driver Version: 470.182.03   CUDA Version: 11.4\n"
        "Please NOTE: device: 0, GPU Compute Capability: 8.0, Driver API Version: 12.0, Runtime API Version: 12.0"
    )
    assert check(read_environment(paste), table).codes == ()


def test_error_35_is_driver_too_old_with_its_message_row(table):
    d = check(
        read_environment(
            "OSError: (External) Cuda error(35), CUDA driver version is insufficient for CUDA runtime version."
        ),
        table,
    )
    assert d.codes == ("driver_too_old",) and d.mismatches[0].evidence == "message"
    assert d.mismatches[0].source.url == "https://nvidia.example/error35"


def test_gpu_newer_than_the_cuda_build(table):
    d = check(read_environment("paddle=2.2.2\ncuda 10.2\nNVIDIA A30"), table)
    assert d.codes == ("compute_capability",)
    assert dict(d.mismatches[0].values)["compute_capability"] == "8.0"
    assert d.mismatches[0].source.url == "https://arch.example"


def test_one_of_three_gpus_too_new_is_named(table):
    d = check(read_environment("cuda 10.2\nworks on Tesla P40, fails on NVIDIA A30"), table)
    assert d.codes == ("compute_capability",) and dict(d.mismatches[0].values)["gpu"] == "NVIDIA A30"


def test_unknown_gpu_model_is_not_guessed_and_the_one_command_is_asked(table):
    d = check(read_environment("paddle with cuda: 10.2\nGPU: NVIDIA GeForce RTX 3050 Laptop GPU"), table)
    assert d.codes == () and d.status == "incomplete" and d.ask == "gpu_query"


def test_cudnn_not_listed_for_the_cuda(table):
    d = check(
        read_environment(
            "Please NOTE: device: 0, GPU Compute Capability: 7.0, Driver API Version: 11.2, "
            "Runtime API Version: 11.2\ndevice: 0, cuDNN Version: 7.6."
        ),
        table,
    )
    assert d.codes == ("cudnn_cuda",) and d.mismatches[0].source.url == "https://cudnn.example"


def test_cudnn_without_a_row_is_undecided(table):
    d = check(read_environment("Runtime API Version: 12.0\ndevice: 0, cuDNN Version: 8.9."), table)
    assert "cudnn_cuda" not in d.codes


def test_wheel_for_another_cuda(table):
    d = check(
        read_environment(
            "Ubuntu 20.04\npaddlepaddle-gpu 2.6.0.post120\nnvcc: NVIDIA (R) Cuda compiler driver\n"
            "Cuda compilation tools, release 11.2, V11.2.152"
        ),
        table,
    )
    assert d.codes == ("wheel_cuda",) and d.mismatches[0].source.url == "https://paddle.example/install"


def test_missing_library_of_another_major_is_also_the_wheel(table):
    d = check(
        read_environment("cuda版本： 12.2\nImportError: libcudart.so.11.0: cannot open shared object file"), table
    )
    assert d.codes == ("wheel_cuda", "missing_library")


def test_missing_library_with_consistent_versions_is_only_missing(table):
    d = check(
        read_environment(
            "cuda 10.2\ncudnn 7.6.5\nThe third-party dynamic library (cudnn64_7.dll) that Paddle "
            "depends on is not configured correctly. (error code is 126)"
        ),
        table,
    )
    assert d.codes == ("missing_library",)


def test_cpu_package_while_asking_about_gpu(table):
    d = check(read_environment("paddlepaddle==3.1.0\nuse cpu for inference, gpu not used"), table)
    assert d.codes == ("cpu_only_wheel",)


def test_cpu_package_beside_a_working_gpu_build_is_not_claimed(table):
    paste = "paddlepaddle 2.5.2\npaddlepaddle-gpu 2.5.1\nPaddlePaddle works well on 1 GPU."
    assert check(read_environment(paste), table).codes == ()


def test_nothing_read_is_status_none(table):
    assert check(read_environment("how do I set the learning rate?"), table).status == "none"


def test_row_without_source_is_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"compat.toml: \[\[gpu\]\] row 1 has no source. Add source"):
        table_from_toml('[[gpu]]\nmodel = "X"\ncompute_capability = "9.0"\n')


def test_company_rows_are_read_first(tmp_path):
    public = tmp_path / "compat.toml"
    public.write_text(TABLE, encoding="utf-8")
    company = tmp_path / "seeds_compat.toml"
    company.write_text(
        '[[wheel]]\npackage = "paddlepaddle-gpu"\nversion = "2.6.0"\nvariant = "post120"\n'
        'platform = "linux"\ncuda = "11.8"\nsource = "https://intranet.example/wheels"\nread = "2026-11-24"\n',
        encoding="utf-8",
    )
    table = load_table([public, company, tmp_path / "absent.toml"])
    d = check(read_environment("Ubuntu 20.04\npaddlepaddle-gpu 2.6.0.post120\ncuda 12.2"), table)
    assert d.codes == ("wheel_cuda",) and d.mismatches[0].source.url == "https://intranet.example/wheels"


def test_tensorflow_built_for_another_cuda():
    d = check(
        read_environment(
            "tensorflow 2.15.0\nnvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.2, V11.2.67"
        ),
        table_from_toml(TF_TABLE),
    )
    assert d.codes == ("wheel_cuda",) and dict(d.mismatches[0].values)["build_cuda"] == "12.2"


def test_tensorflow_for_cuda_10_needs_the_same_minor():
    paste = "tensorflow-gpu 2.1.0\nCuda compilation tools, release 10.2, V10.2.89"
    assert check(read_environment(paste), table_from_toml(TF_TABLE)).codes == ("wheel_cuda",)


def test_torch_architecture_warning_and_tf_cudnn_message():
    table = table_from_toml(TF_TABLE)
    torch = check(
        read_environment(
            "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
            "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_80 sm_90."
        ),
        table,
    )
    assert torch.codes == ("compute_capability",) and torch.mismatches[0].source.url == "https://torch.example/cuda"
    tf = check(
        read_environment("E cuda_dnn.cc:425] Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0."),
        table,
    )
    assert tf.codes == ("cudnn_cuda",) and dict(tf.mismatches[0].values) == {"cudnn": "8.5", "build_cudnn": "8.6"}


def test_torch_cpu_wheel():
    d = check(
        read_environment(">>> torch.__version__\n'2.1.0+cpu'\n>>> torch.cuda.is_available()\nFalse"),
        table_from_toml(TF_TABLE),
    )
    assert d.codes == ("cpu_only_wheel",)


def test_torch_brings_its_own_cuda_so_the_toolkit_does_not_decide():
    paste = "torch 2.0.1+cu117\nCuda compilation tools, release 12.1, V12.1.105\nUbuntu 22.04"
    assert "wheel_cuda" not in check(read_environment(paste), table_from_toml(TF_TABLE)).codes


def test_tensorflow_logs_of_a_working_gpu_claim_nothing():
    paste = (
        "I dso_loader.cc:53] Successfully opened dynamic library libcudart.so.11.0\n"
        "W dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file\n"
        "I gpu_device.cc:1510] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22282 MB memory:  -> "
        "device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n"
        "tensorflow-gpu 2.1.0\nResourceExhaustedError: OOM when allocating tensor"
    )
    env = read_environment(paste)
    assert env.compute_capability == "8.6" and "gpu_works" in env.signals
    assert check(env, table_from_toml(TF_TABLE)).codes == ()
