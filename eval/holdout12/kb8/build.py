# ruff: noqa -- a gatherer's one-off script that wrote the batch, kept as it ran
# Builds questions.jsonl, questions_unlabelled.jsonl and labels20.jsonl for kb8 (MindSpore FAQ pages).
# Thread query texts are the users' own words (title + first message, trimmed) copied from the public
# issue index; "written" cases are chat-widget style questions written for this batch. Notes give the reason.
import json
import os

I = "kb8/mindspore_faq_installation.md"
D = "kb8/mindspore_faq_distributed.md"
SEED_NCCL = {"source": "002_5c885a5c94776257.txt", "section": "Nccl error"}


def e(src, sec):
    return {"source": src, "section": sec}


def gh(path):
    return "https://github.com/" + path


# section substrings (each hits exactly one heading; see check.py)
WHEEL = e(I, "mindspore_{VERSION}.whl is not a supported wheel")
SSL = e(I, "CERTIFICATE_VERIFY_FATLED")
NOMATCH = e(I, "No matching distribution found for XXX")
CUBLAS = e(I, "GPU、CUDA 10.1、0.5.0-beta")
MD5 = e(I, "MD5 does not match")
PY3NF = e(I, "Python3 not found")
CLEAN = e(I, "编译失败后，应该清理哪些路径")
UNDEF = e(I, "undefined reference to XXXX")
MSVER = e(I, "No module named 'mindspore.version'")
WINGPU = e(I, "Nvidia GPU独立显卡+Windows")
UNINST = e(I, "如何卸载MindSpore")
DEVID = e(I, "如何设置`DEVICE_ID`环境变量")
LIBPY = e(I, "libpython3.so: cannot open shared object file")
CAP = e(I, "GPU版本对设备的计算能力有限制吗")
TLS = e(I, "cannot allocate memory in static TLS block")
SUBN = e(I, "smallest subnormal")
SIX = e(I, "module 'six' has no attribute 'ensure_text'")
JPEG = e(I, "could not be found for jpeg")
VIS = e(D, "CUDA_VISIBLE_DEVICES的个数小于执行的进程数")
EXIT = e(D, "若某进程异常退出，可能导致其余进程阻塞问题")
INIT = e(D, "不使用mpirun启动进程时，调用mindspore.communication.init")
UCX = e(D, "MPI_Allgather失败")
HOST = e(D, "某些机器提示GPU device id设置失败")
NET = e(D, "NCCL报错提示网络不通")
RDMA = e(D, "选择特定名称的RDMA网卡")
ENV = e(D, "扩展脚本到多机多卡后，其他主机提示各类报错")
SPLIT = e(D, "无法被当前策略完整切分")
IPCS = e(D, "通过ipcs命令看到有共享内存残留")
DNS = e(D, "DNS解析失败")
UID = e(D, "重复尝试获取Unique ID")


def T(query, kind, expect, url, lang, note, doubt=None):
    d = dict(query=query, kind=kind, expect=expect, url=url, lang=lang, note=note, source_kind="thread")
    if doubt:
        d["doubt"] = doubt
    return d


def W(query, kind, expect, lang, note, doubt=None):
    d = dict(query=query, kind=kind, expect=expect, url="", lang=lang, note=note, source_kind="written")
    if doubt:
        d["doubt"] = doubt
    return d


questions = [
    # ---------------- answerable, real threads ----------------
    T(
        'ImportError: libcublas.so.10: cannot open shared object file: No such file or directory\n使用如下命令安装：\npip install https://ms-release.obs.cn-north-4.myhuaweicloud.com/0.6.0-beta/MindSpore/gpu/ubuntu_x86/cuda-10.1/mindspore_gpu-0.6.0-cp37-cp37m-linux_x86_64.whl\n运行测试：context.set_context(device_target="GPU") ... print(F.tensor_add(x, y))\n报错：\nImportError: libcublas.so.10: cannot open shared object file: No such file or directory\n环境：\npython3.7, CUDA10.1',
        "trace",
        [CUBLAS],
        gh("mindspore-ai/mindspore/issues/62"),
        "zh",
        "MindSpore GPU + CUDA 10.1 cannot find libcublas -> the cuBLAS question (add its directory to LD_LIBRARY_PATH)",
    ),
    T(
        'cannot install on WSL\nwhile I try to intall MindSpore on the WSL with the command "pip install https://ms-release.obs.cn-north-4.myhuaweicloud.com/0.1.0-alpha/MindSpore/cpu/ubuntu-x86/mindspore-0.1.0-cp37-cp37m-linux_x86_64.whl"\nit report the error:\nERROR: mindspore-0.1.0-cp37-cp37m-linux_x86_64.whl is not a supported wheel on this platform.\nmy python version is 3.7.7',
        "trace",
        [WHEEL],
        gh("mindspore-ai/mindspore/issues/7"),
        "en",
        "'is not a supported wheel on this platform' for a MindSpore wheel -> pip wheel question (check Python/OS/arch match the wheel)",
        "maintainer's answer was 'WSL not supported'; the FAQ's check-your-environment answer still applies",
    ),
    T(
        "Install by Source Code failed\nls output\nmindquantum-0.10.0-cp312-cp312-manylinux_2_35_x86_64.whl\npip3.10 install mindquantum-*.whl\nERROR: mindquantum-0.10.0-cp312-cp312-manylinux_2_35_x86_64.whl is not a supported wheel on this platform.",
        "trace",
        [WHEEL],
        gh("mindspore-ai/mindquantum/issues/29"),
        "en",
        "cp312 wheel installed with pip3.10 -> wheel question (pip checks the Python version in the file name)",
    ),
    T(
        "安装提示：is not a supported wheel on this platform.\npip install rknn_toolkit2-2.2.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl is not a supported wheel on this platform.\n(平台 rockchip-ubuntu-22.04-arm64-orangepi-5, python 3.10)",
        "trace",
        [WHEEL],
        gh("airockchip/rknn-toolkit2/issues/191"),
        "zh",
        "x86_64 wheel on an arm64 board -> wheel question (architecture must match)",
        "platform line comes from the user's own follow-up comment; without it the cause is less clear",
    ),
    T(
        "[Bug] PIP install failure is not a supported wheel on this platform.\nin docker environment trying to pip install offline and download wheel from mlc.ai/wheels\nERROR: mlc_ai_nightly_rocm56-0.12.dev1832-cp38-cp38-manylinux_2_28_x86_64.whl is not a supported wheel on this platform.\n - Platform ROCM, ubuntu20, Python version 3.8",
        "trace",
        [WHEEL],
        gh("mlc-ai/mlc-llm/issues/1281"),
        "en",
        "wheel rejected -> wheel question (check the environment matches the wheel tags)",
        "real fix was upgrading pip for the manylinux_2_28 tag; the FAQ only says to check the environment",
    ),
    T(
        'cannot allocate memory in static TLS block\nPlatform: arm64, Ubuntu 20.04\nTensorflow-aarch64 2.9.2, xgboost 1.7.1\nI got error "cannot allocate memory in static TLS block" in case I import tensorflow 2.9.2 before xgboost\n>>> import tensorflow\n>>> import xgboost\nxgboost.core.XGBoostError: XGBoost Library (libxgboost.so) could not be loaded.\n  * OpenMP runtime is not installed\n    - libgomp.so for Linux',
        "trace",
        [TLS],
        gh("dmlc/xgboost/issues/8488"),
        "en",
        "static TLS error depending on import order (libgomp) -> the TLS question (swap import order or LD_PRELOAD libgomp)",
        "names TensorFlow; the seeds have nothing on static TLS, so only the kb8 answer applies",
    ),
    T(
        "Import Error\nImportError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block\" indicates that there is not enough memory available to allocate a static TLS block for the `hnswlib` module.\nI'm running this in a docker container and I receive this error.",
        "trace",
        [TLS],
        gh("nmslib/hnswlib/issues/462"),
        "en",
        "libgomp.so.1 static TLS on aarch64 -> the TLS question (LD_PRELOAD / import order)",
    ),
    T(
        "多机多卡训练报错\ntorch 1.9.0+cu111\ncuda version 11.1\n启动后得到如下报错，求指导\nvoicec105:90736:90736 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\nvoicec105:90736:90736 [0] NCCL INFO NET/Socket : Using [0]eno1:172.16.20.105<0>\nvoicec105:90736:91655 [0] NCCL INFO Channel 00 : 1[89000] -> 2[b1000] [send] via NET/Socket/0\nvoicec105:90736:91655 [0] include/socket.h:403 NCCL WARN Connect to fe80::c4eb:49ff:fe04:e32d%6<57335> failed : Network is unreachable",
        "trace",
        [NET],
        gh("wenet-e2e/wenet/issues/1891"),
        "zh",
        "multi-node NCCL 'Connect to ... failed : Network is unreachable' -> NCCL网络不通 (set NCCL_SOCKET_IFNAME)",
    ),
    T(
        "NCCL Network is unreachable / Connection refused when initializing DDP\nRank 0:\nip-172-31-0-137:14605:14673 [0] NCCL INFO Bootstrap : Using [0]ens5:172.31.0.137<0> [1]veth75fa783:fe80::14ad:64ff:fe64:b31e%veth75fa783<0>\nip-172-31-0-137:14605:14673 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\nip-172-31-0-137:14605:14673 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.137<0> [1]veth75fa783:fe80::14ad:64ff:fe64:b31e%veth75fa783<0>\nNCCL version 2.7.8+cuda11.1",
        "trace",
        [NET],
        gh("pytorch/pytorch/issues/68893"),
        "en",
        "NCCL picks a docker veth interface, Network is unreachable -> NCCL网络不通 (NCCL_SOCKET_IFNAME)",
    ),
    T(
        "多机多卡预训练，从节点无法连接到主节点\nzgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (26/34) after sleep for 2600 msec\nzgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (33/34) after sleep for 3300 msec\nzgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (34/34) after sleep for 3400 msec",
        "trace",
        [NET, SEED_NCCL],
        gh("hiyouga/LlamaFactory/issues/8045"),
        "zh",
        "multi-node NCCL cannot reach the master ('No route to host') -> NCCL网络不通 (choose the right NIC); names no framework, so the seed Nccl error section also counts",
        "'No route to host' can also be a firewall; the section's NIC fix is the usual first answer",
    ),
    T(
        "misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable\n(two DGX H100 nodes, nccl-tests)\ndgxh100-3:2152176:2152299 [0] NCCL INFO Ring 00 : 0 -> 1 -> 0\ndgxh100-4:460770:460842 [0] NCCL INFO Channel 00/04 :    0   1",
        "trace",
        [RDMA, SEED_NCCL],
        gh("NVIDIA/nccl-tests/issues/185"),
        "en",
        "multi-node ibv_modify_qp failure over RDMA -> the RDMA网卡 question (NCCL_IB_HCA); no framework named, seed Nccl error section also accepted",
        "the FAQ's log says 'Invalid argument', this one 'Network is unreachable'; same call failing",
    ),
    T(
        "OpenMPI 4.1.3 + UCX 1.12.1 - Failed to receive UCX worker address\nmpirun across two nodes fails:\npml_ucx.c:175 Error: Failed to receive UCX worker address: Not found (-13)\npml_ucx.c:452 Error: Failed to resolve UCX endpoint for rank 1",
        "trace",
        [UCX],
        gh("openucx/ucx/issues/8322"),
        "en",
        "OpenMPI pml_ucx 'Failed to receive UCX worker address' -> the MPI_Allgather question (pin btl tcp + interface)",
        "body trimmed to the two error lines shown in the thread title/log; the UCX thread dumps ucx_info output",
    ),
    T(
        "module 'six' has no attribute 'ensure_text'\n(screenshot of traceback)\nAttributeError: module 'six' has no attribute 'ensure_text'",
        "trace",
        [SIX],
        gh("father-bot/chatgpt_telegram_bot/issues/72"),
        "en",
        "six too old for ensure_text -> six question (upgrade six >= 1.12.0)",
    ),
    T(
        "AttributeError: 'module' object has no attribute 'ensure_text' after upgrade to 0.7.0\nAfter upgrading from 0.6.1 to 0.7.0 we have the following error in ou logs:\n    delimiter = sniffer.sniff(six.ensure_text(header_line)).delimiter\nAttributeError: 'module' object has no attribute 'ensure_text'",
        "trace",
        [SIX],
        gh("ckan/ckanext-xloader/issues/125"),
        "en",
        "six.ensure_text missing -> six question",
    ),
    T(
        "通过pip使用PyPI安装包报错\n运行：\npip install -i https://mirrors.tuna.tsinghua.edu.cn/pypi/web/simple pandas -t /tmp/aaaa\n提示：\nLooking in indexes: https://mirrors.tuna.tsinghua.edu.cn/pypi/web/simple\nERROR: Could not find a version that satisfies the requirement pandas (from versions: none)\nERROR: No matching distribution found for pandas\n但尝试使用其他镜像是正常的",
        "trace",
        [NOMATCH],
        gh("tuna/issues/issues/2353"),
        "zh",
        "mirror index cannot find the package -> No matching distribution found (check index-url, switch index)",
    ),
    T(
        "bug: 联合pip源出现无法寻找合适的pip包版本\n(aod) chen@Asus:~/py/aod$ pip install jupyter\nLooking in indexes: https://mirrors.cernet.edu.cn/pypi/web/simple\nERROR: Could not find a version that satisfies the requirement jupyter (from versions: none)\nERROR: No matching distribution found for jupyter",
        "trace",
        [NOMATCH],
        gh("mirrorz-org/mirrorz-help/issues/145"),
        "zh",
        "mirror lagging -> No matching distribution found",
    ),
    T(
        "Build v0.7.0 failed at MD5 check of OpenCV and Eigen.\ncmake .. -C ../cmake/caches/international/cpu.cmake\nmake -j64\nThe make -j64 command failed at\n-- verifying file...\n       file='/home/wkyi/w/oneflow/build/opencv/src/51cef2651.tar.gz'\n-- MD5 hash of\n    /home/wkyi/w/oneflow/build/opencv/src/51cef2651.tar.gz\n  does not match expected value\n-- Hash mismatch, removing...",
        "trace",
        [MD5],
        gh("Oneflow-Inc/oneflow/issues/8399"),
        "en",
        "third-party download fails MD5 check during a source build -> MD5 does not match (delete the cached partial download, rebuild)",
        "OneFlow, not MindSpore; in this thread the archive itself changed upstream, so clearing the cache may not be enough",
    ),
    T(
        "pip install 报 [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed (_ssl.c:852)\nCollecting django\n  WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'SSLError(SSLError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed (_ssl.c:852)'),)': /packages/b8/6f/.../Django-3.1.7-py3-none-any.whl",
        "trace",
        [SSL],
        gh("Zijue/blog/issues/14"),
        "zh",
        "pip SSL certificate verification fails -> SSL:CERTIFICATE_VERIFY_FATLED question (add --trusted-host)",
        "the FAQ's --trusted-host value is MindSpore's download host; the user must use their own host",
    ),
    T(
        "Bug in gpu device setting\nif CUDA_VISIBLE_DEVICES is set to other than 0, calling torch.cuda.set_device would result in CUDA error: invalid device ordinal. Maybe remove this line or just call torch.cuda.set_device(0)",
        "en",
        [DEVID],
        gh("modelscope/FunCodec/issues/3"),
        "en",
        "device index must be counted inside CUDA_VISIBLE_DEVICES -> 如何设置DEVICE_ID环境变量 (DEVICE_ID is the index among visible GPUs)",
        "the section is written for MindSpore's DEVICE_ID; the user sets a torch device, same indexing rule",
    ),
    T(
        "RuntimeError: CUDA error: invalid device ordinal\n您好，我想使用4✖️A100(40G)进行一个简单的训练\n运行：bash scripts/text_condition/gpu/train_t2v.sh\n报错：RuntimeError: CUDA error: invalid device ordinal\n请问您知道可能是哪里出问题了吗？",
        "trace",
        [VIS],
        gh("PKU-YuanGroup/Open-Sora-Plan/issues/385"),
        "zh",
        "more processes than visible GPUs -> CUDA_VISIBLE_DEVICES个数小于进程数 (set the right card count)",
        "the parameters were screenshots; the cause (process count vs 4 GPUs) is inferred",
    ),
    # ---------------- answerable, written ----------------
    W(
        "mpirun跑两台机器，报 pml_ucx.c:452 Error: Failed to resolve UCX endpoint for rank 3，单机没问题",
        "trace",
        [UCX],
        "zh",
        "OpenMPI UCX endpoint error across nodes -> MPI_Allgather question",
    ),
    W(
        "两台服务器hostname一样，多机多卡训练时第二台报 SetDevice for id:7 failed, ret[101], invalid device ordinal，单机8卡是好的",
        "mixed",
        [HOST],
        "zh",
        "same HOSTNAME on both machines -> GPU device id设置失败 question (export HOSTNAME=ip)",
    ),
    W(
        "单机多卡ok 扩到多机以后别的节点报找不到whl包、cuda库加载失败 用的mpirun --hostfile",
        "zh",
        [ENV],
        "zh",
        "other hosts miss environment variables -> 扩展到多机多卡后其他主机报错 (mpirun -x)",
    ),
    W(
        "one rank died with an exception and the others are stuck forever at 'Start initializing NCCL communicator for device 1'",
        "en",
        [EXIT],
        "en",
        "other ranks blocked in ncclCommInitRank after one exits -> 某进程异常退出 question (kill and restart)",
        "the CUDA_VISIBLE_DEVICES question shows the same log line; its trigger (SetDevice failure) is not mentioned here",
    ),
    W(
        "mindspore 单卡脚本里调用了 init()，没用mpirun直接python跑，报 InitNodeRole] Role name is invalid",
        "trace",
        [INIT],
        "zh",
        "init() without mpirun -> 不使用mpirun调用init question",
    ),
    W(
        "msrun 用主机名当 master_addr 报 RuntimeError: DNS resolution failed: [Errno -2] Name or service not known",
        "trace",
        [DNS],
        "mixed",
        "msrun hostname not resolvable -> DNS解析失败 question",
    ),
    W(
        "NCCL WARN Call to ibv_modify_qp failed with error Invalid argument 多机训练，有的机器网卡同时开了IB和RoCE",
        "trace",
        [RDMA],
        "mixed",
        "mixed IB/RoCE NICs -> RDMA网卡 question (NCCL_IB_HCA=mlx)",
    ),
    W(
        "GTX 750 Ti 能装 mindspore-gpu 吗，算力好像是5.0",
        "zh",
        [CAP],
        "zh",
        "compute capability limit -> GPU版本对设备的计算能力有限制吗 (needs > 5.3)",
    ),
    W(
        "win10 + RTX3060 能不能直接装 mindspore gpu 版？",
        "zh",
        [WINGPU],
        "zh",
        "Windows + NVIDIA GPU -> Nvidia GPU独立显卡+Windows question (WSL + docker)",
    ),
    W(
        "编译mindspore一直报 Python3 not found，python3.7.5 明明装好了 PATH也设了",
        "zh",
        [PY3NF],
        "zh",
        "Python without shared library -> Python3 not found question (--enable-shared)",
    ),
    # ---------------- near: real threads (expect []) ----------------
    T(
        "MindSpore 1.0.0 conflict with CUDA 10.1 Installation\n### Hardware Environment(`GPU`)\nMindSpore version: pip install, Python 3.7.5, ubuntu 18.04\n## Describe the current behavior\nOSError: MindSpore version 1.0.0 and cuda version 10.0 does not match,\n1. pip install https://ms-release.obs.cn-north-4.myhuaweicloud.com/1.0.0/MindSpore/gpu/ubuntu_x86/cuda-10.1/mindspore_gpu-1.0.0-cp37-cp37m-linux_x86_64.whl\n2. python\n3. >> import mindspore",
        "trace",
        [],
        gh("mindspore-ai/mindspore/issues/89"),
        "en",
        "MindSpore/CUDA version mismatch check fails at import: no section of the two pages covers the CUDA version check",
        "the cuBLAS question is GPU-install related but about a missing library, not a version mismatch",
    ),
    T(
        "ubuntu22.4安装好GPU版本2.1.0后不能使用GPU\nMindSpore version: 2.1.0, Python 3.7.5, Ubuntu 22.04\n$ python -c \"import mindspore;mindspore.set_context(device_target='GPU');mindspore.run_check()\"\nThe result of multiplication calculation is correct, MindSpore has been installed on platform [GPU] successfully!\n[ERROR] DEVICE ... WorkerJoin failed:\n- Cuda error:\nThe cudaStreamCreateWithFlags failed, ret[2], out of memory",
        "trace",
        [],
        gh("mindspore-ai/mindspore/issues/253"),
        "zh",
        "cudaStreamCreateWithFlags out of memory on a GPU install: not covered by the installation or distributed pages",
        "an 'out of memory' string; the seed 显存不足 section is Paddle-specific and the user names MindSpore",
    ),
    T(
        "Installation Question\nI am installing it on an x86_64 platform (CentOS 7.3) with GPUs (CUDA 10.2) using\nexport CUDNN_HOME=/opt/cudnn/ ./build.sh -e GPU\nCMake Error at mindspore/ccsrc/CMakeLists.txt:40 (message):\n  Failed to find cudnn library file, please set environment variable\n  CUDNN_HOME to cudnn installation position.",
        "trace",
        [],
        gh("mindspore-ai/mindspore/issues/91"),
        "en",
        "source build cannot find cuDNN: no FAQ question about CUDNN_HOME",
        "编译失败后应该清理哪些路径 is about third-party download/patch failures, not a missing cuDNN",
    ),
    T(
        'mindspore gpu import error\n>>> import mindspore\n  File ".../mindspore/_check_version.py", line 362, in check_version_and_env_config\n    from . import _c_expression\nImportError: .../site-packages/mindspore/_c_expression.cpython-37m-x86_64-linux-gnu.so: undefined symbol: cudnnGetFilterSizeInBytes, version libcudnn.so.7',
        "trace",
        [],
        gh("mindspore-ai/mindspore/issues/133"),
        "en",
        "pip-installed GPU package meets a cuDNN version it was not built for: the 'undefined symbol' question is about stale/modified source builds and Ascend CANN, not cuDNN",
        "the heading 'undefined reference to XXXX或undefined symbol XXXX' matches the error text; a labeller could accept it",
    ),
    T(
        "The same code runs successfully on the cpu but fails to run on the gpu",
        "en",
        [],
        gh("mindspore-ai/mindspore/issues/283"),
        "en",
        "CPU works, GPU fails: nothing specific on the two pages",
        "title only; no log",
    ),
    T(
        "mindcv quick start 中报错 Could not load library libcudnn_cnn_infer.so.8. Error: /usr/local/cuda-10.1/targets/x86_64-linux/lib/libnvrtc.so: undefined symbol: nvrtcGetCUBIN",
        "trace",
        [],
        gh("mindspore-lab/mindcv/issues/729"),
        "zh",
        "cuDNN 8 loaded against a CUDA 10.1 libnvrtc: CUDA/cuDNN mismatch, not covered",
        "the cuBLAS question is also a 'library not found'; here the library loads but a symbol is missing",
    ),
    T(
        "[Question] Does MindSpore support multi-GPU with auto-parallel strategy?\n    _context.set_context(mode=context.GRAPH_MODE, device_target=\"GPU\")\n    init('nccl')\nE           RuntimeError: mindspore/ccsrc/device/gpu/distribution/collective_init.cc:35 InitCollective] Loading libgpu_collective.so failed. Many reasons could cause this:\nE           1.libgpu_collective.so is not installed.\nE           2.nccl is not installed or found.\nE           3.mpi is not installed or found",
        "trace",
        [],
        gh("mindspore-ai/mindspore/issues/31"),
        "en",
        "'Loading libgpu_collective.so failed' had its own question in older versions of this FAQ page; the master version copied here no longer has it",
        "hard near: the distributed page is all about GPU multi-card; a labeller reading an older page would label it",
    ),
    T(
        "[Bug] 再更新了lmdeploy的版本后，chat turbomind命令炸显存\n您好，这个问题很困扰我，我在使用0.1.0版本的时候只用14G显存就足够了，但是今天更新了lmdeploy的版本之后，无论是1还是internlm2-chat-7b在使用同样的命令转换成turbomind进行chat的时候都炸显存了。\nlmdeploy convert internlm2-chat-7b /root/share/temp/model_repos/internlm2-chat-7b/\nlmdeploy chat turbomind ./workspace",
        "zh",
        [],
        gh("InternLM/lmdeploy/issues/1001"),
        "zh",
        "inference engine KV-cache memory after an upgrade: not MindSpore, not covered",
    ),
    # ---------------- near: written (expect []) ----------------
    W(
        "mindspore 1.8 GPU版 第一次跑脚本卡了好几分钟才开始训练，后面再跑就正常，这是为啥",
        "zh",
        [],
        "zh",
        "first-run CUDA JIT compile delay: answered on MindSpore's 执行问题 FAQ page, which is not in kb8",
        "hard near: same FAQ family, different page",
    ),
    W(
        "mindspore 2.2 的 GPU 版要配 cuda 11.1 还是 11.6？",
        "zh",
        [],
        "zh",
        "version compatibility table question: the pages give no CUDA versions",
    ),
    W(
        "mindspore GPU上 model.train 先 dataset_sink_mode=True 再 False 就报错",
        "mixed",
        [],
        "zh",
        "sink-mode switching: on the 执行问题 page, not in kb8",
    ),
]

labels20 = [
    T(
        "OSError: libcublas.so.9.0: cannot open shared object file: No such file or directory\nI managed to install and import tsnecuda but this error came up when I tried:\ntsne = TSNE(n_components=2, verbose=1, perplexity=100, learning_rate=250, n_iter=500)\nOSError: libcublas.so.9.0: cannot open shared object file: No such file or directory\nI have cuda 9.0 installed",
        "trace",
        [CUBLAS],
        gh("CannyLab/tsne-cuda/issues/74"),
        "en",
        "cuBLAS not on the library path -> cuBLAS question (LD_LIBRARY_PATH)",
    ),
    T(
        "error if using deepspeech-gpu\nhi, if i tried to use deepspeech-gpu instead, it throws the error as below\nImportError: libcublas.so.8.0: cannot open shared object file: No such file or directory\nI am using nvidia-docker",
        "trace",
        [CUBLAS],
        gh("MainRo/docker-deepspeech-server/issues/2"),
        "en",
        "libcublas missing in container -> cuBLAS question",
    ),
    T(
        "自己造好的whl轮子为什么说该平台不支持？\nos.system('pip install /root/Mywhl/Myexample-1.0-cp311-cp311-win_amd64.whl')\n下面是报错：\nERROR: Myexample-1.0-cp311-cp311-win_amd64.whl is not a supported wheel on this platform.",
        "trace",
        [WHEEL],
        gh("sipeed/MaixPy/issues/58"),
        "zh",
        "win_amd64 wheel on a Linux board -> wheel question",
    ),
    T(
        "Incompatibility with version 1.10.0 of module six?\n  File \".../pwnlib/log.py\", line 292, in _log\n    msg = six.ensure_text(msg)\nAttributeError: module 'six' has no attribute 'ensure_text'\n>>> import six\n>>> print(six.__version__)\n1.10.0",
        "trace",
        [SIX],
        gh("152334H/pwnscripts/issues/14"),
        "en",
        "six 1.10 lacks ensure_text -> six question",
    ),
    T(
        "ERROR: Could not find a version that satisfies the requirement tb-nightly (from versions: none)\n清华源没有这个pip包\n使用清华源pip install tb-nightly",
        "trace",
        [NOMATCH],
        gh("tuna/issues/issues/1896"),
        "zh",
        "package missing from the mirror -> No matching distribution found (switch index)",
    ),
    T(
        "No matching distribution found for numpy\n执行命令:\npip3 install -r requirements.txt\n遇到错误：\nNo matching distribution found for numpy",
        "trace",
        [NOMATCH],
        gh("Maicius/QQZoneMood/issues/51"),
        "zh",
        "-> No matching distribution found (check index-url)",
    ),
    T(
        "All falco builds from source failing due to wrong MD5 hash on tbb\n-- verifying file...\n       file='.../build/tbb-prefix/src/2018_U5.tar.gz'\n-- MD5 hash of\n    .../build/tbb-prefix/src/2018_U5.tar.gz\n  does not match expected value\n-- Hash mismatch, removing...\nCMake Error at tbb-stamp/download-tbb.cmake:159 (message):\n  Each download failed!",
        "trace",
        [MD5],
        gh("falcosecurity/falco/issues/1128"),
        "en",
        "third-party MD5 mismatch in a source build -> MD5 does not match",
        "the upstream archive changed; deleting the cache would not help",
    ),
    T(
        "NCCL WARN Connect to 10.38.10.112<21724> failed : Connection refused\nIf I use only 2 nodes, each with 1 GPU, it works well. But if 4 nodes, above error accurs.\ntj1-asr-train-v100-11:41449:41449 [6] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\ntj1-asr-train-v100-11:41449:41449 [6] NCCL INFO NET/Socket : Using [0]eth0:10.38.10.4<0>",
        "trace",
        [NET, RDMA],
        gh("espnet/espnet/issues/1940"),
        "en",
        "multi-node NCCL connect failures -> NCCL网络不通 (NIC selection); the RDMA question shows the same 'Connection refused' line",
        "IB is disabled here, so the RDMA answer fits less; both accepted",
    ),
    T(
        'CUDA_VISIBLE_DEVICES=4,3 python ./local_search.py时，tool中不能识别到GPU3\nos.environ["CUDA_VISIBLE_DEVICES"] = "4,3"\nself.device = torch.device("cuda:3" if torch.cuda.is_available() else \'cpu\')',
        "mixed",
        [DEVID],
        gh("FlagAI-Open/Aquila2/issues/132"),
        "zh",
        "after CUDA_VISIBLE_DEVICES=4,3 the indices are 0/1 -> 如何设置DEVICE_ID环境变量 (index among visible devices)",
    ),
    T(
        'RuntimeError: CUDA error: invalid device ordinal\n[rank6]:   File "/workspace/minicpm/finetune/finetune.py", line 162, in train\n[rank6]:   File "/workspace/pypacks/accelerate/state.py", line 790, in set_device\n[rank6]:     torch.cuda.set_device(self.device)\n[rank6]: RuntimeError: CUDA error: invalid device ordinal',
        "trace",
        [VIS],
        gh("OpenBMB/MiniCPM-V/issues/356"),
        "en",
        "rank6 cannot set its device: more processes than visible GPUs -> CUDA_VISIBLE_DEVICES个数小于进程数",
        "the GPU count is not in the text; rank6 failing suggests nproc > visible GPUs",
    ),
    T(
        'RuntimeError: CUDA error: invalid device ordinal\n在运行器件报错：\n  File "/home/ldn/ChatGLM130Dir/GLM-130B/initialize.py", line 51, in initialize\n    args = get_args(args_list)\n  File ".../SwissArmyTransformer/arguments.py", line 414, in initialize_distributed\n    torch.cuda.set_device(args.device)\nRuntimeError: CUDA error: invalid device ordinal',
        "trace",
        [VIS],
        gh("zai-org/GLM-130B/issues/181"),
        "zh",
        "distributed init sets a device beyond the visible count -> CUDA_VISIBLE_DEVICES个数小于进程数",
        "GLM-130B defaults to 8 GPUs; the user's GPU count is not stated",
    ),
    W(
        "pip uninstall mindspore 卸载不掉，装的是gpu版",
        "zh",
        [UNINST],
        "zh",
        "-> 如何卸载MindSpore (pip uninstall mindspore-gpu)",
    ),
    W(
        "import mindspore 报 No module named 'mindspore.version'，我在自己建的mindspore目录下跑的",
        "trace",
        [MSVER],
        "zh",
        "running inside a directory named like the package -> mindspore.version question",
    ),
    W(
        "conda环境里跑mindspore报 error while loading shared libraries: libpython3.so: cannot open shared object file",
        "trace",
        [LIBPY],
        "mixed",
        "-> libpython3.so question (LD_LIBRARY_PATH / upgrade conda Python)",
    ),
    W(
        "arm服务器上 import mindspore 一直刷 UserWarning: The value of the smallest subnormal for <class 'numpy.float64'> type is zero. 有影响吗",
        "trace",
        [SUBN],
        "mixed",
        "-> numpy smallest subnormal warning question (harmless; numpy<=1.21.2)",
    ),
    W(
        "build.sh 编译报 Cmake Error at cmake/utils.cmake:301 (message): Failed patch: 重新编还是一样",
        "trace",
        [CLEAN],
        "mixed",
        "failed third-party patch -> 编译失败后应该清理哪些路径 (delete the package under .mslib)",
    ),
    W(
        "git pull 最新代码重新编译后 import 报 undefined symbol",
        "zh",
        [UNDEF],
        "zh",
        "-> undefined reference/undefined symbol question (delete build/)",
    ),
    W(
        "pip装mindspore的时候 pillow 报 The headers or library files could not be found for jpeg",
        "trace",
        [JPEG],
        "mixed",
        "-> pillow/libjpeg question (apt-get install libjpeg8-dev)",
    ),
    W(
        "训练进程崩了之后 ipcs -m 能看到好多 nattch=0 的共享内存，要手动 ipcrm 吗",
        "zh",
        [IPCS],
        "zh",
        "-> 共享内存残留 question",
    ),
    W(
        "np_tensor can not be split by strategy! 自动并行报这个",
        "trace",
        [SPLIT],
        "mixed",
        "-> 张量无法被当前策略完整切分 question",
    ),
]

out = os.path.dirname(os.path.abspath(__file__))


def norm(d, prefix, i):
    r = {
        "id": f"{prefix}{i:02d}",
        "query": d["query"],
        "kind": d["kind"],
        "expect": d["expect"],
        "url": d["url"],
        "source_kind": d["source_kind"],
        "lang": d["lang"],
        "note": d["note"],
    }
    if d.get("doubt"):
        r["doubt"] = d["doubt"]
    return r


qs = [norm(d, "kb8-q", i + 1) for i, d in enumerate(questions)]
ls = [norm(d, "kb8-l", i + 1) for i, d in enumerate(labels20)]
with open(os.path.join(out, "questions.jsonl"), "w") as f:
    for r in qs:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
with open(os.path.join(out, "questions_unlabelled.jsonl"), "w") as f:
    for r in qs:
        u = {k: v for k, v in r.items() if k not in ("expect", "note", "doubt")}
        f.write(json.dumps(u, ensure_ascii=False) + "\n")
with open(os.path.join(out, "labels20.jsonl"), "w") as f:
    for r in ls:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
print(
    len(qs),
    "questions;",
    sum(1 for r in qs if r["expect"]),
    "answerable;",
    sum(1 for r in qs if not r["expect"]),
    "near;",
    len(ls),
    "labels20",
)
