"""The reader: each recognised output, written here in a few lines, becomes the values it shows."""

from bot.diagnose.environment import Environment, Package, merge, normalise, read_environment

SMI = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 525.125.06   Driver Version: 525.125.06   CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
|===============================+======================+======================|
|   0  NVIDIA A30          On   | 00000000:00:0D.0 Off |                    0 |
"""


def test_nvidia_smi_header_and_gpu_row():
    env = read_environment(SMI)
    assert (env.driver, env.cuda_driver_api, env.gpus) == ("525.125.06", "12.0", ("NVIDIA A30",))
    assert env.driver_api_from_framework is False


def test_nvidia_smi_with_ansi_colours_box_drawing_and_tabs():
    paste = (
        "┌──────────────┐\n│ NVIDIA-SMI 461.72\tDriver Version: \x1b[1;32m461.72\x1b[0m\tCUDA Version: \x1b[1;33m11.2\x1b[0m │\n"
        "│   0  \x1b[36mGeForce GTX 1650\x1b[0m   WDDM  │ 00000000:01:00.0  On │"
    )
    env = read_environment(paste)
    assert (env.driver, env.cuda_driver_api, env.gpus) == ("461.72", "11.2", ("GeForce GTX 1650",))


def test_truncated_nvidia_smi_keeps_what_is_there():
    env = read_environment("| NVIDIA-SMI 418.67       Driver Version: 418.67 ")
    assert (env.driver, env.cuda_driver_api) == ("418.67", None)


def test_three_gpus_of_different_models_are_all_kept():
    rows = "\n".join(
        f"|   {i}  {name}          Off  | 00000000:0{i}:00.0 Off |   0 |"
        for i, name in enumerate(("Tesla V100-SXM2...", "NVIDIA A100-PCIE-40GB", "Tesla T4"))
    )
    assert read_environment(rows).gpus == ("Tesla V100-SXM2", "NVIDIA A100-PCIE-40GB", "Tesla T4")


def test_nvcc_and_version_txt_give_the_toolkit():
    nvcc = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0"
    assert read_environment(nvcc).cuda_toolkit == ("11.8",)
    assert read_environment("$ cat /usr/local/cuda/version.txt\nCUDA Version 10.2.89").cuda_toolkit == ("10.2",)


def test_paddle_run_check_lines():
    paste = (
        "W0826 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 6.1, Driver API Version: 12.2, "
        "Runtime API Version: 11.6\nW0826 gpu_resources.cc:149] device: 0, cuDNN Version: 8.4.\n"
        "PaddlePaddle works well on 1 GPU."
    )
    env = read_environment(paste)
    assert (env.compute_capability, env.cuda_driver_api, env.cuda_runtime, env.cudnn_loaded) == (
        "6.1",
        "12.2",
        "11.6",
        "8.4",
    )
    assert env.driver_api_from_framework and "gpu_works" in env.signals


def test_old_paddle_capability_form_and_warnings():
    env = read_environment(
        "Please NOTE: device: 0, CUDA Capability: 80, Driver API Version: 12.0, Runtime API Version: 10.0\n"
        "WARNING: device: 0. The installed Paddle is compiled with CUDNN 7.6, but CUDNN version in your "
        "machine is 7               .5, which may cause serious incompatible bug."
    )
    assert env.compute_capability == "8.0"
    assert (env.build_cudnn, env.cudnn_loaded) == ("7.6", "7.5")
    assert "paddle_cudnn_older" in env.signals


def test_paddle_architecture_warning():
    env = read_environment(
        "The GPU architecture in your current machine is Pascal, which is not compatible with Paddle "
        "installation with arch: 70 75 80 86 , it is recommended to install"
    )
    assert env.build_arch == ("70", "75", "80", "86") and "paddle_arch" in env.signals


def test_pip_list_pip_show_and_pins():
    env = read_environment("paddlepaddle         1.8.4\npaddlepaddle-gpu     1.8.4.post97\n")
    assert env.packages == (Package("paddlepaddle", "1.8.4"), Package("paddlepaddle-gpu", "1.8.4.post97", "post97"))
    shown = read_environment("Name: paddlepaddle\nVersion: 2.5.2\n")
    assert shown.packages == (Package("paddlepaddle", "2.5.2"),)
    pinned = read_environment("python -m pip install paddlepaddle-gpu==2.1.0.post101 -f https://x")
    assert pinned.packages == (Package("paddlepaddle-gpu", "2.1.0.post101", "post101"),)


def test_capitalised_framework_name_is_not_read_as_the_cpu_package():
    assert read_environment("框架版本:PaddlePaddle 2.1.2").packages == (Package("paddle", "2.1.2"),)


def test_conda_list_and_ldconfig():
    env = read_environment(
        "cudatoolkit               11.3.1               h2bc3f7f_2\n"
        "cudnn                     8.2.1                cuda11.3_0\n"
        "\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8"
    )
    assert env.cuda_toolkit == ("11.3.1",) and env.cudnn == ("8.2.1", "8")


def test_tensorflow_and_torch_prints():
    tf = read_environment(
        ">>> tf.__version__\n'2.10.0'\n>>> tf.sysconfig.get_build_info()\n"
        "OrderedDict([('cuda_version', '64_112'), ('cudnn_version', '64_8'), ('is_cuda_build', True)])"
    )
    assert tf.packages == (Package("tensorflow-any", "2.10.0"),) and (tf.build_cuda, tf.build_cudnn) == ("11.2", "8")
    assert "gpu_build" in tf.signals
    torch = read_environment(">>> torch.__version__\n'2.1.0+cpu'")
    assert torch.packages[0].variant == "cpu"
    no_gpu = read_environment(">>> tf.config.list_physical_devices('GPU')\n[]")
    assert "no_gpu_visible" in no_gpu.signals


def test_missing_libraries_linux_and_windows():
    env = read_environment(
        "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
        "RuntimeError: The third-party dynamic library (cudnn64_7.dll) that Paddle depends on is not "
        "configured correctly. (error code is 126)"
    )
    assert env.missing_libraries == ("libcudart.so.11.0", "cudnn64_7.dll")
    assert "library_not_found" in env.signals


def test_tensorrt_warnings_are_not_missing_cuda_libraries():
    env = read_environment(
        "Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file"
    )
    assert env.missing_libraries == ()


def test_windows_driver_file_version_is_translated():
    assert read_environment("版本：23.21.13.9135").driver == "391.35"


def test_docker_image_tag_and_plain_statements():
    env = read_environment(
        "docker run -it paddlepaddle/paddle:2.1.0-gpu-cuda10.2-cudnn7 /bin/bash\n"
        "cuda 10.2\ncudnn 7.6.5\nNVIDIA A30\npython3.7"
    )
    assert (env.image_cuda, env.image_cudnn, env.docker) == ("10.2", "7", True)
    assert env.cuda_toolkit == ("10.2",) and env.cudnn == ("7.6.5",) and env.gpus == ("NVIDIA A30",)


def test_wsl_and_os_and_python():
    env = read_environment("Ubuntu 22.04 on WSL2\nPython 3.10.12")
    assert (env.os, env.wsl, env.python) == ("Ubuntu 22.04", True, "3.10.12")


def test_unknown_stays_unknown():
    env = read_environment("loss becomes nan after 3 epochs, what should I do?")
    assert env.is_empty and env.as_dict() == {}


def test_merge_keeps_turn_one_and_takes_turn_three():
    turn1 = read_environment(SMI)
    turn3 = read_environment("paddlepaddle-gpu 2.6.0.post120")
    merged = merge(merge(turn1, Environment()), turn3)
    assert merged.driver == "525.125.06" and merged.packages == (
        Package("paddlepaddle-gpu", "2.6.0.post120", "post120"),
    )


def test_normalise_caps_input_before_any_pattern():
    from bot.diagnose.environment import MAX_ENV_CHARS

    assert len(normalise("x" * (MAX_ENV_CHARS + 10))) == MAX_ENV_CHARS
