"""Issue 35 (what a person sees): messages read with the versions they carry, and replies that name them.

Each paste here is written for the test (the labelled batches are scored in test_environment_batches.py)."""

from __future__ import annotations

from bot.answer.environment_text import describe
from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import read_environment


def _check(paste: str):
    return check(read_environment(paste), table_for(None))


def test_the_driver_api_integer_is_major_thousands_and_minor_tens():
    # "found version 6000" is CUDA 6.0 (it was read as 60.0); 10020 is 10.2.
    assert read_environment("NVIDIA driver on your system is too old (found version 6000)").cuda_driver_api == "6.0"
    assert read_environment("NVIDIA driver on your system is too old (found version 10020)").cuda_driver_api == "10.2"
    said = describe(_check("RuntimeError: The NVIDIA driver on your system is too old (found version 9010)."), "en")
    assert "9.1" in said and "90.1" not in said


def test_pytorchs_old_gpu_warning_names_the_card_and_its_capability():
    paste = (
        "UserWarning:\n    Found GPU0 GeForce GTX 770 which is of cuda capability 3.0.\n"
        "    PyTorch no longer supports this GPU because it is too old.\n"
    )
    diagnosis = _check(paste)
    assert diagnosis.codes == ("compute_capability",)
    said = describe(diagnosis, "en")
    assert "GTX 770" in said and "3.0" in said


def test_pytorchs_integer_cudnn_mismatch_is_read():
    diagnosis = _check(
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 6021"
    )
    assert diagnosis.codes == ("cudnn_cuda",)
    values = diagnosis.mismatches[0].values
    assert (values["build_cudnn"], values["cudnn"]) == ("7.1", "6.0")


def test_paddles_cudnn_warning_with_the_same_version_twice_is_no_conflict():
    paste = (
        "W1101 gpu_resources.cc:306] WARNING: device: 0. The installed Paddle is compiled with CUDNN 9.0, but CUDNN "
        "version in your machine is 9.0, which may cause serious incompatible bug."
    )
    assert _check(paste).mismatches == ()


def test_a_cuda_extension_build_names_both_cudas():
    paste = (
        "RuntimeError:\nThe detected CUDA version (11.8) mismatches the version that was used to compile\n"
        "PyTorch (12.1). Please make sure to use the same CUDA versions.\nI installed cuda 12.1 before"
    )
    diagnosis = _check(paste)
    assert diagnosis.codes == ("wheel_cuda",)
    said = describe(diagnosis, "en")
    assert "11.8" in said and "12.1" in said


def test_paddle_2_1_on_linux_is_the_cuda_10_2_build():
    diagnosis = _check("driver: 418.87\ncuda: 10.1\npip install paddlepaddle-gpu==2.1.0\nUbuntu 18.04")
    assert "driver_too_old" in diagnosis.codes
    said = describe(diagnosis, "en")
    assert "418.87" in said and "10.2" in said


def test_conda_package_names_are_not_cuda_versions():
    assert read_environment("conda install pytorch cuda90 -c pytorch").cuda_toolkit == ()
    assert read_environment("I have cuda 10 installed").cuda_toolkit == ("10",)


def test_the_windows_toolkit_folder_gives_the_cuda_installed():
    env = read_environment(r"CUDA_PATH: C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1")
    assert env.cuda_toolkit == ("12.1",)


def test_a_cuda_named_in_words_on_the_smi_line_is_read_but_not_the_header():
    env = read_environment("I use NVIDIA-SMI 352.39, Driver Version: 352.39 and Cuda 7.5 on Ubuntu")
    assert env.cuda_toolkit == ("7.5",) and env.driver == "352.39"
    header = read_environment("| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |")
    assert header.cuda_toolkit == ()


def test_a_version_inside_a_library_name_does_not_count_as_named():
    said = describe(_check("cuda 11.0 is installed\nImportError: libcusparse.so.11.0: cannot open shared object"), "en")
    assert "CUDA 11.0" in said


def test_the_build_and_the_machine_values_of_one_finding_are_all_named():
    # TensorFlow 2.2's tested build is CUDA 10.1 / cuDNN 7.6; the missing libcudnn.so.7 says the same.
    paste = (
        "- TensorFlow version: `2.2.0`\n- CUDA/cuDNN version: `11.0 / v8.0.1`\nDebian GNU/Linux 10\n"
        "Could not load dynamic library 'libcudnn.so.7'; dlerror: libcudnn.so.7: cannot open shared object file"
    )
    diagnosis = _check(paste)
    assert "wheel_cuda" in diagnosis.codes
    said = describe(diagnosis, "en")
    for value in ("10.1", "7.6", "11.0", "8.0.1"):
        assert value in said, value


def test_the_pytorch_index_gives_a_plain_versions_cuda_build():
    env = read_environment("pip install torch==2.4.0 --index-url https://download.pytorch.org/whl/cu118")
    assert [(p.name, p.version, p.variant) for p in env.packages] == [("torch", "2.4.0", "cu118")]
    assert read_environment("pip install torch===1.4.0 -f https://x/torch_stable.html").packages[0].version == "1.4.0"
