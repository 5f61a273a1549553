"""TensorFlow and PyTorch pastes: builds read from collect_env, the tested-build tables and the Windows note."""

import pytest

from bot.diagnose.compat import check, table_from_toml
from bot.diagnose.environment import read_environment
from fixtures.compat_table import TF_TABLE

EXTRA = """
[[driver]]
cuda = "10.1"
linux_min = "418.39"
windows_min = "418.96"
source = "https://nvidia.example/driver"
read = "2026-11-24"

[[driver]]
cuda = "10.0"
linux_min = "410.48"
windows_min = "411.31"
source = "https://nvidia.example/driver"
read = "2026-11-24"

[[wheel]]
package = "tensorflow"
version = "2.2.0"
platform = "linux"
cuda = "10.1"
source = "https://tf.example/source"
read = "2026-11-24"

[[wheel]]
package = "tensorflow-gpu"
version = "2.2.0"
platform = "windows"
cuda = "10.1"
source = "https://tf.example/source_windows"
read = "2026-11-24"

[[wheel]]
package = "tensorflow-gpu"
version = "2.1.0"
platform = "windows"
cuda = "10.1"
source = "https://tf.example/source_windows"
read = "2026-11-24"

[[wheel]]
package = "tensorflow-gpu"
version = "1.14.0"
platform = "linux"
cuda = "10.0"
source = "https://tf.example/source"
read = "2026-11-24"

[[wheel]]
package = "torch"
version = "1.5.0"
platform = "linux+windows"
cu_tags = ["cu102", "cu101", "cu92"]
pypi_default_linux = "cu102"
source = "https://torch.example/previous-versions"
read = "2026-11-24"

[[wheel_note]]
package = "tensorflow"
windows_gpu_last = "2.10"
note = "GPU on native Windows only for 2.10 or earlier"
source = "https://tf.example/release-2.11"
read = "2026-11-24"

[[message]]
key = "torch_cuda_none"
code = "cpu_only_wheel"
source = "https://torch.example/collect_env"
read = "2026-11-24"

[[message]]
key = "tf_not_built_with_cuda"
code = "cpu_only_wheel"
source = "https://tf.example/is_built_with_cuda"
read = "2026-11-24"
"""


@pytest.fixture
def table():
    return table_from_toml(TF_TABLE + EXTRA)


def codes(paste, table):
    return check(read_environment(paste), table).codes


def test_tensorflow_after_2_10_on_native_windows_is_the_cpu_build(table):
    d = check(read_environment("Windows 10\ntensorflow==2.16\nGPU Available:  []"), table)
    assert d.codes == ("cpu_only_wheel",) and d.mismatches[0].source.url == "https://tf.example/release-2.11"
    assert codes("Windows 10\ntensorflow==2.10\nGPU Available:  []", table) == ()
    assert codes("Ubuntu 22.04\ntensorflow==2.16\nGPU Available:  []", table) == ()


def test_torch_collect_env_build_cuda_decides_the_driver_not_the_local_toolkit(table):
    paste = (
        "PyTorch version: 1.5.0\nCUDA used to build PyTorch: 10.2\nOS: Ubuntu 18.04.3 LTS\n"
        "CUDA runtime version: 10.0.130\nNvidia driver version: 410.104\n[pip3] torch==1.5.0"
    )
    env = read_environment(paste)
    assert env.build_cuda == "10.2" and env.cuda_toolkit == ("10.0",)
    d = check(env, table)
    assert d.codes == ("driver_too_old",) and dict(d.mismatches[0].values)["cuda"] == "10.2"


def test_torch_built_without_cuda_is_the_cpu_build_unless_rocm(table):
    collect = "PyTorch version: 2.2.2\nCUDA used to build PyTorch: Could not collect\nROCM used to build PyTorch: N/A\n"
    d = check(read_environment(collect + "Is CUDA available: False"), table)
    assert d.codes == ("cpu_only_wheel",) and d.mismatches[0].source.url == "https://torch.example/collect_env"
    assert codes(">>> torch.version.cuda\nNone\n>>> torch.cuda.is_available()\nFalse", table) == ("cpu_only_wheel",)
    rocm = "PyTorch version: 2.2.2\nCUDA used to build PyTorch: N/A\nROCM used to build PyTorch: 6.0.32830\n"
    assert codes(rocm + "Is CUDA available: False", table) == ()


def test_error_35_with_a_driver_that_runs_the_build_claims_nothing(table):
    paste = (
        "RuntimeError: cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version\n"
        "tensorflow-gpu 2.2.0 / Windows 10 Pro / CUDA 10.1.105 / cuDNN 7.6.4\n"
        "| NVIDIA-SMI 451.48       Driver Version: 451.48       CUDA Version: 11.0     |"
    )
    assert codes(paste, table) == ()
    old_driver = paste.replace("451.48", "411.31").replace("11.0 ", "10.0 ")
    assert codes(old_driver, table) == ("driver_too_old",)


def test_three_part_cuda_version_in_prose():
    assert read_environment("CUDA 10.1.105\ncuda version: 11.2.152").cuda_toolkit == ("10.1", "11.2")


def test_tensorflow_issue_templates_give_the_version_and_the_toolkit(table):
    old_template = (
        "- OS Platform and Distribution: Windows 10\n- TensorFlow installed from: pip\n"
        "- TensorFlow version (use command below): 2.1.0\n- CUDA/cuDNN version: 10.2.89\n- GPU model and memory: GTX 1650"
    )
    env = read_environment(old_template)
    assert [p.version for p in env.packages] == ["2.1.0"] and env.cuda_toolkit == ("10.2",)
    assert check(env, table).codes == ("wheel_cuda",)
    new_template = "### TensorFlow version\n\ntf 2.16\n\n### OS platform and distribution\n\nwin10\n\n### CUDA/cuDNN version\n\n12.3"
    env = read_environment(new_template)
    assert [p.version for p in env.packages] == ["2.16"] and env.cuda_toolkit == ("12.3",)
    assert check(env, table).codes == ("cpu_only_wheel",)


def test_tensorflow_build_by_major_minor_and_package(table):
    # tensorflow-gpu on Linux is the row labelled tensorflow-2.2.0; a patch release shares its build.
    assert codes("Ubuntu 18.04\ntensorflow-gpu 2.2.1\nCuda compilation tools, release 10.0, V10.0.130", table) == (
        "wheel_cuda",
    )
    # tf.__version__ 1.14.0 does not name the package: the GPU build's row applies; a pip-listed plain tensorflow
    # before 2.1 is the CPU package and has no CUDA to compare.
    printed = ">>> print(tensorflow.__version__)\n   1.14.0\nUbuntu 18.04\ncat /usr/local/cuda/version.txt\nCUDA Version 10.1.168"
    assert codes(printed, table) == ("wheel_cuda",)
    listed = "tensorflow        1.14.0\nUbuntu 18.04\nCUDA Version 10.1.168"
    assert codes(listed, table) == ()


def test_version_printed_by_python_dash_c():
    paste = (
        'C:\\Users\\u>python -c "import tensorflow as tf; print(tf.__version__); print(tf.config.list_physical_devices())"\n'
        "2.1.0\n[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    )
    assert [(p.name, p.version) for p in read_environment(paste).packages] == [("tensorflow-any", "2.1.0")]


def test_is_built_with_cuda_false_inside_print_cites_tensorflow(table):
    d = check(read_environment(">>> print(tf.test.is_built_with_cuda())\nFalse\nwant the GPU"), table)
    assert d.codes == ("cpu_only_wheel",) and d.mismatches[0].source.url == "https://tf.example/is_built_with_cuda"


def test_driver_older_than_the_one_toolkit_shown_without_a_build(table):
    paste = (
        "cudatoolkit               10.0.130                      0\nNVIDIA Graphics Driver 388.73\nC:\\ProgramData\\x"
    )
    d = check(read_environment(paste), table)
    assert d.codes == ("driver_too_old",) and dict(d.mismatches[0].values)["cuda"].startswith("10.0")
    # PyTorch brings its own CUDA: the toolkit beside it does not set the driver's minimum.
    assert codes(paste + "\ntorch 1.2.0", table) == ()


def test_plain_torch_on_linux_is_the_pages_wheel_without_a_suffix(table):
    paste = "Ubuntu 18.04\n[pip3] torch==1.5.0\nNvidia driver version: 410.104"
    d = check(read_environment(paste), table)
    assert d.codes == ("driver_too_old",) and dict(d.mismatches[0].values)["cuda"] == "10.2"
    assert d.mismatches[0].source.url == "https://nvidia.example/driver"
    # Not on Linux, or a version the page does not list: the build's CUDA is unknown, nothing is claimed.
    assert codes(paste.replace("Ubuntu 18.04", "Windows 10"), table) == ()
    assert codes(paste.replace("1.5.0", "1.3.0"), table) == ()


def test_tensorflow_1_prints_cudnn_versions_as_integers():
    paste = (
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:396] Loaded runtime CuDNN library: 7301 (compatibility "
        "version 7300) but source was compiled with 7003 (compatibility version 7000).  If using a binary install, "
        "upgrade your CuDNN library to match."
    )
    env = read_environment(paste)
    assert (env.cudnn_loaded, env.build_cudnn) == ("7.3", "7.0") and "tf_cudnn_mismatch" in env.signals
    assert check(env, table_from_toml(TF_TABLE)).codes == ("cudnn_cuda",)


def test_collect_env_cuda_available_true_suppresses_table_inferences(table):
    paste = (
        "PyTorch version: 1.5.0\nCUDA used to build PyTorch: 10.2\nOS: Ubuntu 18.04\nNvidia driver version: 410.104\n"
    )
    assert codes(paste + "Is CUDA available: Yes", table) == ()
    assert codes(paste + "Is CUDA available: No", table) == ("driver_too_old",)


def test_cuda_from_pip_wheels_is_not_compared_with_the_toolkit(table):
    paste = "tensorflow 2.15.0\nCuda compilation tools, release 11.2, V11.2.67\nUbuntu 22.04"
    assert codes(paste, table) == ("wheel_cuda",)
    assert codes("pip install tensorflow[and-cuda]\n" + paste, table) == ()
