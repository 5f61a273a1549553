"""Builds questions.jsonl, questions_unlabelled.jsonl and labels20.jsonl for kb7."""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

ACC = "kb7/accelerate_troubleshooting.md"
PT = "kb7/pytorch_faq.md"
CT = "kb7/nvidia_container_toolkit_troubleshooting.md"
JX = "kb7/jax_faq.md"
SEED_TRAIN = "002_5c885a5c94776257.txt"


def E(src, sec):
    return {"source": src, "section": sec}


LOSING = E(CT, "Containers losing access to GPUs")
AFFECTED = E(CT, "Affected Environments")
SIGNED = E(CT, "Conflicting values set for option Signed-By")
SEL_WRAP = E(CT, "Permission denied error when running the nvidia-docker wrapper under SELinux")
NVML_PERM = E(CT, "NVML: Insufficient Permissions and SELinux")
GROUPID = E(CT, "cannot find name for group ID")
DBGLOG = E(CT, "Generating Debugging Logs")
CORE = E(CT, "Generating Core Dumps")
PT_OOM = E(PT, 'My model reports "cuda runtime error(2): out of memory"')
PT_FREE = E(PT, "My GPU memory isn't freed properly")
PT_HANDLER = E(PT, "My out of memory exception handler can't allocate memory")
PT_RANDOM = E(PT, "My data loader workers return identical random numbers")
PT_RNN = E(PT, "My recurrent network doesn't work with data parallelism")
A_LOG = E(ACC, "Logging")
A_HANG = E(ACC, "Hanging code and timeout errors")
A_DEBUG = E(ACC, "Accelerate's operational debug mode")
A_OOM = E(ACC, "CUDA out of memory")
A_FEBS = E(ACC, "find_executable_batch_size")
A_REPRO = E(ACC, "Non-reproducible results between device setups")
A_PERF = E(ACC, "Performance issues on different GPUs")
J_NUMERICS = E(JX, "jit changes the exact numerics of outputs")
J_SLOW = E(JX, "jit decorated function is very slow to compile")
J_METHODS = E(JX, "How to use jit with methods?")
J_STRAT2 = E(JX, "Strategy 2: Marking self as static")
J_VSNUMPY = E(JX, "Is JAX faster than NumPy?")
J_NAN = E(JX, "Gradients contain NaN where using where")
J_ZERO = E(JX, "Why are gradients zero for functions based on sort order?")
J_TRACER = E(JX, "How can I convert a JAX Tracer to a NumPy array?")
J_CUDA = E(JX, "Why do some CUDA libraries fail to load/initialize?")


def T(query, kind, expect, url, note, doubt=None, lang="en"):
    d = {
        "query": query,
        "kind": kind,
        "expect": expect,
        "url": url,
        "source_kind": "thread",
        "lang": lang,
        "note": note,
    }
    if doubt:
        d["doubt"] = doubt
    return d


def W(query, kind, expect, note, doubt=None, lang="en"):
    d = {
        "query": query,
        "kind": kind,
        "expect": expect,
        "url": "",
        "source_kind": "written",
        "lang": lang,
        "note": note,
    }
    if doubt:
        d["doubt"] = doubt
    return d


Q = [
    # ---------------- NVIDIA Container Toolkit ----------------
    T(
        "Failed to initialize nvml unknown error inside docker\nNvidia-smi is not working after few hours inside docker(NVML error)\ndocker : bladedisc/bladedisc:latest-runtime-torch1.13.1-cu116. \nGPU : T4 (nvidia-drivers 515 in host machine)\nOS : Linux -ubuntu 22.04\nOn the start of docker , nvidia-smi shows GPU information .\nAfter few hours , nvidia-smi gives  **failed to initialize nvml unknown error** which results in blocking the GPU usage inside the docker.",
        "en",
        [LOSING, AFFECTED],
        "https://github.com/alibaba/BladeDISC/issues/1248",
        "container loses the GPU after some hours with 'Failed to initialize NVML: Unknown Error' -> Containers losing access to GPUs (Affected Environments explains the systemd trigger)",
    ),
    T(
        'nvidia-smi command in container returns "Failed to initialize NVML: Unknown Error" after couple of times\nNvidia gpu works well upon the container has started, but  when it runs a couple  of times(maybe several days),  gpus mounted by nvidia container runtime becomes invalid.  Command Nvidia-smi returns "Failed to initialize NVML: Unknown Error" in container, while it works well on the  host machine.\nNvidia-smi looks well on host,and we can see the training process information through host nvidia-smi command output. If now we stop the training process, it can no longer restart.\nReferring to the solution from issue https://github.com/NVIDIA/nvidia-docker/issues/1618 . We try to upgrade cgroup to v2 version, but it does not work.',
        "en",
        [LOSING, AFFECTED],
        "https://github.com/NVIDIA/nvidia-docker/issues/1678",
        "training container loses GPU after days, NVML Unknown Error -> Containers losing access to GPUs",
    ),
    T(
        'Failed to initialize NVML: Unknown Error After "systemctl daemon-reload"\nOn a gpu working node, running `systemctl daemon-reload` cause all running gpu containers to lost gpu devices.\n(container) $ nvidia-smi -L\nFailed to initialize NVML: Unknown Error\nWhile it seems all good outside contianer:\n(host) # nvidia-smi -L\nGPU 0: NVIDIA A10 (UUID: GPU-f15ae561-21b1-6003-c768-861fc285203b)\nGPU 1: NVIDIA A10 (UUID: GPU-466be1f8-6148-1a27-a450-592604f3df54)\nGPU 2: Tesla T4 (UUID: GPU-bf507abe-ec25-2053-5435-1c82511a3ae8)\nGPU 3: Tesla T4 (UUID: GPU-a1329f2e-1e73-88f2-4d4b-1ce18debbc6d)\nOperating System: Ubuntu 22.04 LTS\nKernel: Linux 5.15.0-25-generic\nsystemd 249 (249.11-0ubuntu3.11)\nNVIDIA-SMI 570.133.20             Driver Version: 570.133.20     CUDA Version: 12.8',
        "trace",
        [AFFECTED, LOSING],
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/1227",
        "daemon-reload removes GPU access from running containers -> Affected Environments / Containers losing access (workarounds: cgroupfs driver, --device, CDI)",
    ),
    T(
        "I am recivieng this error\n sudo apt-get update\nE: Conflicting values set for option Signed-By regarding source https://nvidia.github.io/libnvidia-container/stable/ubuntu18.04/amd64/ /: /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg !=\nE: The list of sources could not be read.",
        "trace",
        [SIGNED],
        "https://github.com/NVIDIA/libnvidia-container/issues/194",
        "apt Signed-By conflict for nvidia.github.io -> Conflicting values set for option Signed-By (maintainer linked this section)",
    ),
    T(
        "Unable to use sudo apt-get\nHi. I tried to install nvidia-container-runtime, setup the package repository and the GPG key. But I got an error while executing `sudo apt-get update`:\nnik@nik:~$ sudo apt-get update \nN: Ignoring file 'skypeforlinux.lis' in directory '/etc/apt/sources.list.d/' as it has an invalid filename extension\nE: Conflicting values set for option Signed-By regarding source https://download.docker.com/linux/ubuntu/ focal: /usr/share/keyrings/docker-ce-archive-keyring.gpg != /usr/share/keyrings/docker-archive-keyring.gpg\nE: Conflicting values set for option Signed-By regarding source https://nvidia.github.io/libnvidia-container/stable/ubuntu18.04/amd64/ /: /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg != \nE: The list of sources could not be read.",
        "trace",
        [SIGNED],
        "https://github.com/NVIDIA/nvidia-docker/issues/1626",
        "Signed-By conflict while installing nvidia-container-runtime -> Conflicting values set for option Signed-By",
        doubt="the log also shows an unrelated docker.com Signed-By conflict, which the section does not cover",
    ),
    T(
        "nvidia-docker 2.0 Failed to initialize NVML: Insufficient Permissions\nI did a fresh build and install of libnvidia, nvidia-container-runtime, and nvidia-docker 2.0 on a Rhel 7.4/ppc64le environment.  \nI run\n`docker run -ti --rm nvidia/cuda-ppc64le:9.1-base-centos7 bash`\nThen `nvidia-smi`  I get the following error\n`Failed to initialize NVML: Insufficient Permissions`\nI get past the issue with the `--privileged` keyword.  I know there was talk about nvidia-docker 2.0 solving some Selinux problems.  Is that still the case?",
        "en",
        [NVML_PERM],
        "https://github.com/NVIDIA/nvidia-docker/issues/676",
        "RHEL + SELinux, NVML Insufficient Permissions in container -> NVML: Insufficient Permissions and SELinux (--security-opt=label=disable)",
    ),
    T(
        'SE Linux Permissions\nI just updated my machine today, and when I run an nvidia-docker container, I get the following in `/var/log/messages`\nAug 30 16:12:35 viola audit[25758]: AVC avc:  denied  { entrypoint } for  pid=25758 comm="nvidia-docker" path="/usr/bin/docker" dev="sdc3" ino=12832289 scontext=unconfined_u:system_r:xserver_t:s0-s0:c0.c1023 tcontext=system_u:object_r:container_runtime_exec_t:s0 tclass=file permissive=0\nSame happens with `docker-compose`',
        "trace",
        [SEL_WRAP],
        "https://github.com/NVIDIA/nvidia-docker/issues/814",
        "SELinux denies entrypoint for nvidia-docker wrapper on /usr/bin/docker -> Permission denied error when running the nvidia-docker wrapper under SELinux (use --runtime=nvidia or a local policy)",
    ),
    T(
        "[Bug]: v1.19.1 container toolkit `additionalGids` group injection without corresponding /etc/group definition\nnvidia-container-toolkit - 1.19.1 introduced `additionalGids` ... to allow rootless support for video/render device. However, if a container startup script calls the group command with an undefined group name then we'll get this warning message:\n`groups: cannot find name for group ID 993`\nCan reproduce with either method below:\n1. `docker run -it --rm --runtime=nvidia nvcr.io/nvidia/cuda-dl-base:26.05-cuda13.2-inference-devel-ubuntu24.04 bash`\n2. ` docker run -it --rm --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,video ubuntu:24.04 bash`",
        "trace",
        [GROUPID],
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/1909",
        "'groups: cannot find name for group ID 993' in GPU container -> \"cannot find name for group ID\" warning (cosmetic; feature flag to suppress)",
        doubt="reporter is an NVIDIA engineer and the thread led to the doc section; the reporter's own workaround text was trimmed",
    ),
    # ---------------- PyTorch FAQ ----------------
    T(
        'NVIDIA memory not deallocated after interupt\nWhen I interrupt my Pytorch script using Ctrl-C occasionally GPU memory is not deallocated. Also threads related to my script may or may not still be running. If they are running I kill them using "kill -9 PID". However this does not deallocate memory on the GPU.',
        "en",
        [PT_FREE],
        "https://github.com/pytorch/pytorch/issues/4031",
        "GPU memory still held after Ctrl-C -> My GPU memory isn't freed properly (leftover python subprocesses, kill them)",
    ),
    T(
        "GPU memory is not been freed correctly\nWhen i delete a tensor on gpu,the gpu memory is not been freed on ```nvidia-smi``` even if i use ```\ntorch.cuda.empty_cache()```\nimport torch\nimport time\n\ntemp = torch.ones([4000, 4000], device='cuda')\ntime.sleep(5)\ndel temp\ntorch.cuda.empty_cache()\ntime.sleep(1000)\nWe can see that the program still use 1105M on gpu which is not be cleared to 0.\nI think if the tensor on gpu is be deleted,the usage on nvidia-smi ought to be 0.",
        "en",
        [PT_FREE],
        "https://github.com/pytorch/pytorch/issues/60150",
        "nvidia-smi still shows memory after del + empty_cache -> My GPU memory isn't freed properly (caching allocator, nvidia-smi does not reflect true usage)",
        doubt="the remaining ~1.1 GB is the CUDA context, which the section does not name explicitly",
    ),
    T(
        "How to do independent random number generatation in multiprocessing dataloader.\nWhen I use num_woker > 0 in DataLoader, and I generate a random number in __getitem__ function.\nI found all threads will generate the same random number... \nFor example, I set num_worker=8, and I want to got a random number to define my scale augmentation. \nI will get \n0.9 0.9 0.9 0.9 0.9 0.9 0.9 0.9\neight same 0.9!\nSo I want to know how to inplement  independent random number generation in multiprocessing dataloader.",
        "en",
        [PT_RANDOM],
        "https://github.com/pytorch/pytorch/issues/31246",
        "same random number in every DataLoader worker -> My data loader workers return identical random numbers (maintainer linked this FAQ)",
    ),
    T(
        "Assigning data loading workers different numpy random seeds\nIf I add this to the `__getitem__` function in my dataset with `num-workers=8`\n```\nprint(np.random.randint(0, 100, 10))\ntime.sleep(3)\n```\nmy output looks like this:\n```\n[40 90 37 39 71 66 85 16 85 69]\n[40 90 37 39 71 66 85 16 85 69]\n[40 90 37 39 71 66 85 16 85 69]\n[40 90 37 39 71 66 85 16 85 69]\n[86 76 23 64 11 65 88 99 55  8]\n[86 76 23 64 11 65 88 99 55  8]\n```\nFor on the fly data augmentation, this results in a lots of duplication.\nIt would be helpful to expose a way to initialize worker seeds and other configs.",
        "en",
        [PT_RANDOM],
        "https://github.com/facebookresearch/fairseq/issues/1383",
        "np.random identical across data-loading workers (fairseq = PyTorch) -> My data loader workers return identical random numbers (worker_init_fn)",
    ),
    T(
        "np.random generates the same random numbers for each data batch\nI used RandomRotate, RandomContrast and other transformers for data augmentation. I found out the angles in RandomRotate and brightness_factors in RandomContrast in each batch are the same, in other words, RandomRotate rotates images the same angle and RandonContrast clips images with the same factor every time.\nWhen I set num_workers  in configuration files to 0, transformers work just fine. \nIt seems like np.random generates the same random numbers for each data batch and it is an old issue in pytorch opened 2 years ago.",
        "en",
        [PT_RANDOM],
        "https://github.com/wolny/pytorch-3dunet/issues/32",
        "augmentations identical across workers, fine with num_workers=0 -> My data loader workers return identical random numbers",
    ),
    T(
        "Error when training on multi-GPU\nWhen I training on multi-GPU a got this error, but when I training on single-GPU that error will not appear.\n`ValueError: gather got an input of invalid size: got 10x110x29, but expected 10x226x29\n`\n> python -m multiproc train.py --train-manifest qkids/manifest/qkids_train_manifest_limit_250.csv --val-manifest qkids/manifest/qkids_test_manifest_limit_never_train.csv --cuda --model-path models/libri_final_and_limit.pth --epochs 50 --checkpoint --checkpoint-per-batch 1000 --batch-size 20",
        "trace",
        [PT_RNN],
        "https://github.com/SeanNaren/deepspeech.pytorch/issues/325",
        "deepspeech.pytorch (packed RNN) gather size mismatch only on multi-GPU: time dims 110 vs 226 -> My recurrent network doesn't work with data parallelism (pad_packed_sequence total_length)",
        doubt="the user ran DistributedDataParallel via multiproc; the gather error is the DataParallel-style unpack mismatch the section describes, but the user does not mention pack/pad himself",
    ),
    T(
        "cuda runtime error: out of memory after 15K iteration of 4 GPUs training\nHi, @roytseng-tw, I have successfully ran train_net.py of resnet-C4 (using 4 GPUs), but after 15K training steps, `cuda runtime error with out of memory`.\nAs I thought, this was caused by the increasing GPU-memory of  dynamic graph, such as `loss+=xxx`, can you give some advices for solving this issue.",
        "en",
        [PT_OOM, E(SEED_TRAIN, "训练时报错提示显存不足")],
        "https://github.com/roytseng-tw/Detectron.pytorch/issues/22",
        "OOM after many iterations, user suspects loss+=xxx accumulating graph -> My model reports \"cuda runtime error(2): out of memory\" (don't accumulate history); the seed's generic OOM FAQ also accepted since the text names no framework",
        doubt="framework only visible from the repo name (Detectron.pytorch); the 'cuda runtime error' wording is PyTorch's",
    ),
    T(
        'Inconsistent recovery from CUDA OOMs\nCatching a RuntimeError on a CUDA OOM should allow one to gracefully recover, for example by lowering the batchsize. This is particularly important when using DistributedDataParallel, where workers must sync on backward, and so it\'s important that we be able to perform a "dummy batch" after an OOM in order to stay in sync with other workers.\nObserved behavior during a CUDA out of memory event is inconsistent across nondistributed/dataparallel/distributeddataparallel. Expected behavior is that all modes should be able to recover easily.',
        "en",
        [PT_HANDLER],
        "https://github.com/pytorch/pytorch/issues/18853",
        "recovering from a caught CUDA OOM fails -> My out of memory exception handler can't allocate memory (move recovery outside except; the maintainers' editorial note says the same)",
    ),
    T(
        'DataParallel is not compatible with pack_padded_sequence\nIf the model has `pack_padded_sequence`, then with `DataParallel ` module it will output error `"ValueError: lengths array has incorrect size"`',
        "trace",
        [PT_RNN],
        "https://github.com/pytorch/pytorch/issues/2312",
        "pack_padded_sequence inside DataParallel fails -> My recurrent network doesn't work with data parallelism",
        doubt="the lengths-list scattering problem is only touched by the section's last paragraph",
    ),
    # ---------------- Accelerate ----------------
    T(
        "About Timeout when use Multi-gpu training\nWhen I used the single-node multi-GPU mode to train, a timeout error was reported. The strange thing is that for the first few epochs, the code works fine. This error was reported after the end of a step eval in the middle.\nThe reported error message is：\n[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1808499 milliseconds before timing out.\n[E ProcessGroupNCCL.cpp:587] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1808493 milliseconds before timing out.\n[E ProcessGroupNCCL.cpp:341] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this inconsistency, we are taking the entire process down.",
        "trace",
        [A_HANG, A_DEBUG],
        "https://github.com/huggingface/accelerate/issues/314",
        "collective (BROADCAST) timeout after an eval step in multi-GPU training -> Hanging code and timeout errors / operational debug mode",
        doubt="the text names no library (only PyTorch's ProcessGroupNCCL in the log); root cause in the thread is not confirmed to be a shape mismatch",
    ),
    T(
        "With the same epoch, the result of multiple Gpus is much lower than that of a single gpu，why？\nUnder the same epoch, multi-gpu training is less accurate than single-gpu training, but eventually both results converge to a certain value. Is this normal? Why is the result of multi-gpu so much lower at the same epoch?",
        "en",
        [A_REPRO],
        "https://github.com/huggingface/accelerate/issues/2903",
        "multi-GPU worse than single GPU at the same epoch -> Non-reproducible results between device setups (batch size / lr scaling; maintainer pointed to this guide)",
        doubt="the text names no framework; seed 000 '#4 GPU多卡情况下加载模型评估结果有误' is about loading a model for eval, rejected",
    ),
    T(
        "Feature request: distributed logger\nIn single process training, we may use the original `logging.Logger` to record log information. However, in multi-process training(such as DDP), since there're multiple running processes, using `logging.Logger` will print log information much more verbosely.\nI'm wondering whether `Accelerate` will support distributed logger as Colossal does in the future. Using the naive `Accelerator.print` is not flexible enough.",
        "en",
        [A_LOG],
        "https://github.com/huggingface/accelerate/issues/969",
        "per-process duplicated logs in DDP -> Logging (accelerate.logging.get_logger, main_process_only)",
    ),
    T(
        "RuntimeError: No executable batch size found, reached zero.\naccelerate version: 0.22.0\ntorch version: 2.0.1\nHere, upon using the `auto_find_batch_size=True` flag, I was assuming that accelerate would find the ideal batch size. So, I am not sure that caused the runtime error as the training ran successfully for over 2.5 hours.",
        "en",
        [A_FEBS, A_OOM],
        "https://github.com/huggingface/accelerate/issues/1934",
        "auto batch-size search ends with 'reached zero' -> find_executable_batch_size (halves on every OOM until zero)",
        doubt="why it hit OOM after 2.5 h is not explained by the page",
    ),
    # ---------------- JAX FAQ ----------------
    T(
        "Jax indexing code runs extremely slowly?\nThis code takes more than 15 seconds to run, while running it in standard numpy is instantaneous. I've looked around but can't find any explanation why. Intuitively, it feels like doing a simple indexing operation should not take nearly this long.\n```\nimport jax\nimport jax.numpy as jnp\nfrom jax import jit\n\n@jit\ndef foo(a):\n\tfor i in range(128):\n\t\tfor j in range(128):\n\t\t\ts = a[0]\n\treturn 0\n\na = jnp.zeros(128)\nfoo(a)\n```",
        "en",
        [J_SLOW],
        "https://github.com/jax-ml/jax/issues/4436",
        "jit over nested Python loops takes 15 s -> jit decorated function is very slow to compile (loops unrolled; use lax control flow)",
    ),
    T(
        "Why my program takes 6 minutes to calculate gradient of a function first time but 0.3 seconds for second time?\n```python\nNUM_VAR = 10**4\nNUM_ARG = 200\n\ndef func(arg):\n    divider = 0 # denominator\n    numerator = 0\n    for i in range(NUM_ARG):\n        temp = np.dot(arg[i], var)\n        temp1 = np.sin(temp)\n        temp2 = np.cos(temp)\n        ...\n    return np.log(np.divide(numerator, divider))\n\nres = jax.jit(jax.grad(func))\n```\nFirst Execution time: ... s",
        "en",
        [J_SLOW],
        "https://github.com/jax-ml/jax/issues/1399",
        "first call of jit(grad) takes minutes, later calls fast -> jit decorated function is very slow to compile",
    ),
    T(
        "nan when using np.where and grad\nHere is the situation:\n```\nf = lambda x: np.where(x<1., x, np.sqrt(x))\ndf = grad(f)\ndf(1e-9)  # evaluates to 1, as expected\ndf(0.0)   # evaluates to nan, presumably because the second case of the where is nan in that case\n         # but it is the first case that should give the result, not the second!\n```\nNot sure if this is expected behavior, but it is surprising.",
        "en",
        [J_NAN],
        "https://github.com/jax-ml/jax/issues/5798",
        "grad through jnp.where gives NaN -> Gradients contain NaN where using where (double-where trick; maintainer linked the FAQ)",
    ),
    T(
        'jax library error jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed\nI am working on a code that uses the Jax library, and I run into this error over and over again no matter how I tried to configure my environment:\n2024-08-20 16:26:58.037892: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] \nCould not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n2024-08-20 16:26:58.037952: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:443] Memory usage: 46637514752 bytes free, 47587131392 bytes total.\nTraceback (most recent call last):\n  File "GPU_pairwise_pipline.py", line 260, in <module>\n    SSMD_res_with_indices = process_blocks(train_set_sick, train_set_healthy, block_size)\n  File "GPU_pairwise_pipline.py", line 17, in cal_mean_and_var\n    data_jax = jnp.array(data)',
        "trace",
        [J_CUDA],
        "https://github.com/jax-ml/jax/issues/23145",
        "cuDNN handle cannot be created under JAX -> Why do some CUDA libraries fail to load/initialize? (library paths / pip CUDA packages / preallocation)",
        doubt="memory is mostly free here, so the section's memory explanation may not be the cause; version mismatch is covered only by the library-path paragraph",
    ),
    T(
        'jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed\nHello im having an issue using jax and cuda. My error message looks like this:\n2024-07-19 15:49:01.341533: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n2024-07-19 15:49:01.341571: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:443] Memory usage: 2624061440 bytes free, 12524191744 bytes total.\nTraceback (most recent call last):\nFile "scripts/train_vqgan.py", line 202, in\nmain()\nFile "scripts/train_vqgan.py", line 32, in main\nrng = jax.random.PRNGKey(config.seed)',
        "trace",
        [J_CUDA],
        "https://github.com/jax-ml/jax/issues/22626",
        "cuDNN init fails with only 2.6 of 12.5 GB free -> Why do some CUDA libraries fail to load/initialize? (preallocation leaves too little memory)",
    ),
    T(
        "JIT for class method\nI want to use JIT for a class method. The following works fine:\n```\nclass A1:\n    def __init__(self):\n        self.f = jax.jit(self.f)\n        pass\n\n    # @jit\n    def f(self, x):\n        return x\n\na = A1()\nprint(a.f(5))\n```\nBut the following gives a type error:\n```\nclass A1:\n    def __init__(self):\n        # self.f = jax.jit(self.f)\n        pass\n\n    @jit\n    def f(self, x):\n        return x\n\na = A1()\nprint(a.f(5))\n```\n`TypeError: Argument '<__main__.A1 object at 0x7fabf5a8d400>' of type <class '__main__.A1'> is not a valid JAX type.`\nCould anyone help clarify the difference between the two?",
        "trace",
        [J_METHODS, J_STRAT2],
        "https://github.com/jax-ml/jax/issues/5595",
        "@jit on a method -> 'not a valid JAX type' -> How to use jit with methods? (Strategy 2 static self also answers)",
    ),
    T(
        "JIT returns a different value for `add+sinh`\n```py\nimport jax\n\ndef fn(arg_0):\n    arg_0 = jax.numpy.add(arg_0, jax.numpy.array(16, dtype=jax.numpy.float32))\n    fn_res = jax.lax.sinh(arg_0)\n    return fn_res\n\narg_0 = jax.numpy.array(-6.9080677, dtype=jax.numpy.float32)\narg_0 = jax.numpy.sin(arg_0)\n\nprint(fn(arg_0))\nprint(jax.jit(fn)(arg_0))\n```\n```\n2475248.5\n2475246.2\n```\nThus, it should be that the optimization of `add` and `sinh` changes the value\njax v0.3.23, jaxlib v0.3.22\nCPU and GPU",
        "en",
        [J_NUMERICS],
        "https://github.com/jax-ml/jax/issues/12949",
        "jit vs non-jit float32 results differ -> jit changes the exact numerics of outputs (maintainer linked the FAQ)",
    ),
    T(
        "Numerical difference before and after `jax_disable_jit`\nI have a code snippet that reads an image from file, normalizes it, and converts it to `jax.numpy` array. At the end, there's this line: `jax.config.update('jax_disable_jit', True)`. Once it reaches this line, the value of the image array changes. Although this numerical difference is small, but it is significantly important.\njax v0.3.23, jaxlib v0.3.22",
        "en",
        [J_NUMERICS],
        "https://github.com/jax-ml/jax/issues/12833",
        "values change slightly when disabling jit -> jit changes the exact numerics of outputs",
    ),
    T(
        "Jax is somehow much slower than numpy!\nHi, I am new to Jax and attracted by its elegance. I implement `Softmax Regression` and compare the speed on two frameworks: jax & numpy. However, I am surprised to see jax is much slower than numpy. When in numpy, just remove everything related to jax and I do not put it for convenience. When running, there is no error or warning.\n```python\nimport time\nfrom jax import jit\nimport numpy as np\nimport pandas as pd\nimport jax.numpy as jnp\n\nclass SoftmaxRegression:\n    def __init__(self, k=2, lr=0.2, eps=1e-5, theta=None):\n    ...\n```",
        "en",
        [J_VSNUMPY],
        "https://github.com/jax-ml/jax/issues/14620",
        "JAX slower than NumPy in a small benchmark -> Is JAX faster than NumPy?",
        doubt="the class method may also trigger retracing/compile cost (jit with methods, slow compile), not checked",
    ),
    T(
        "jax problems rp_task_simulation\nI am trying to run `rp_task_simulation.ipynb` on google colab but I am getting the following error message back\nUnfilteredStackTrace: jax._src.errors.TracerArrayConversionError: The numpy.ndarray conversion method __array__() was called on the JAX Tracer object Traced<ShapedArray(float32[])>with<DynamicJaxprTrace(level=0/1)>\nWhile tracing the function get_cost at <ipython-input-18-b448627ced96>:8 for jit, this concrete value was not available in Python because it depends on the value of the argument 'unshaped_params'.\nSee https://jax.readthedocs.io/en/latest/errors.html#jax.errors.TracerArrayConversionError",
        "trace",
        [J_TRACER],
        "https://github.com/Quantinuum/qnlp_lorenz_etal_2021_resources/issues/2",
        "TracerArrayConversionError under jit -> How can I convert a JAX Tracer to a NumPy array?",
        doubt="the thread's real fix may be a library version change; the section explains why conversion is impossible",
    ),
    # written, answerable
    W(
        "nvidia container runtime how to turn on debug log? docker --gpus fails and i see nothing useful",
        "en",
        [DBGLOG],
        "enable runtime debug logs -> Generating Debugging Logs (uncomment debug= in config.toml)",
    ),
    W(
        "nvidia-container-cli just hangs when starting container, how do i get a core dump of it",
        "en",
        [CORE],
        "unresponsive nvidia-container-cli -> Generating Core Dumps (gcore)",
    ),
    W(
        "accelerate: gather() hangs forever on 2 gpus in eval loop, how to find which tensor has wrong shape",
        "en",
        [A_DEBUG, A_HANG],
        "hang in gather from shape mismatch -> Accelerate's operational debug mode / Hanging code and timeout errors",
    ),
    W(
        "accelerate with a 3090 and a 1080ti in same box, training is as slow as the 1080ti alone and batch limited by its memory?",
        "en",
        [A_PERF],
        "heterogeneous GPUs -> Performance issues on different GPUs",
    ),
    W(
        "jax grad of (x > 0).astype(float) is always 0 everywhere, why",
        "en",
        [J_ZERO],
        "step function gradient zero -> Why are gradients zero for functions based on sort order?",
    ),
    W(
        "pytorch gpu memory goes up every iteration until OOM, i do total_loss += loss for logging",
        "en",
        [PT_OOM],
        'accumulating loss keeps graph -> My model reports "cuda runtime error(2): out of memory"',
    ),
    # ---------------- near (no answer in kb7 or seeds) ----------------
    T(
        'Error response from daemon: could not select device driver "" with capabilities: [[gpu]]\n问题描述\n执行docker命令后报错\n1. docker pull xagentteam/xagentgen:latest\n2. 运行docker命令\ndocker run -it -p 13520:13520  -v /huggingface/models/XAgentLLaMa-34B-preview/:/model:rw --gpus all --ipc=host xagentteam/xagentgen:latest python app.py --model-path /model --port 13520\n预期行为\ndocker容器正常启动\n操作系统：Ubuntu22.04\ndocker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\nERRO[0000] error waiting for container:  \n我的设备上有4块4090',
        "mixed",
        [],
        "https://github.com/OpenBMB/XAgent/issues/273",
        "toolkit not installed / docker not configured for --gpus -> [] (the troubleshooting page has no install/--gpus driver section)",
        doubt="Generating Debugging Logs is only generic",
        lang="mixed",
    ),
    T(
        "Error occuring in release 1.14.4: load library failed: libnvidia-ml.so.1: cannot open shared object file\nHello, I'm getting a load library failed error as as previous issue (unsure whether related, hence the new issue) when running a nextflow pipeline with docker that uses the nvidia-runtime-toolkit. It seems that the error is only present in the new version of nvidia-runtime-toolkit (1.14.4) but does not occur on an identical computer running version 1.14.3 which I had set up only few days prior.\nCommand error: docker: Error response from daemon: failed to create task for container: failed to create a shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy' nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.",
        "trace",
        [],
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/305",
        "toolkit 1.14.4 regression, libnvidia-ml.so.1 not found -> [] (not covered)",
        doubt="Generating Debugging Logs is a generic first step, not an answer",
    ),
    T(
        "RuntimeError: DataLoader worker (pid 46794) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\nHi, how to solve this problem?",
        "trace",
        [],
        "https://github.com/hkchengrex/STCN/issues/132",
        "PyTorch DataLoader shm exhaustion -> [] (kb7 has no shared-memory section)",
        doubt="'My data loader workers return identical random numbers' is lexically close",
    ),
    T(
        'Give a better error when we run out of shared memory, instead of "RuntimeError: DataLoader worker (pid 13) is killed by signal: Bus error."\nWhen I set `num_workers=1` or other value greater than 0 in `torch.utils.data.DataLoader`, I get this error.\nThe detail of the error:\n  File "/opt/project/train.py", line 51, in train_model\n    outputs = model(inputs)\n  File "/opt/conda/envs/pytorch-py3.6/lib/python3.6/site-packages/torch/nn/parallel/data_parallel.py", line 64, in forward\n    inputs, kwargs = self.scatter(inputs, kwargs, self.device_ids)',
        "trace",
        [],
        "https://github.com/pytorch/pytorch/issues/5040",
        "Bus error in DataLoader workers (shm) -> []",
        doubt="data-loader and DataParallel sections are lexically close",
    ),
    T(
        'RuntimeError: CUDA error: device-side assert triggered\nHi, I got this "device-side assert triggered"  while training fasterRCNN model using trochvision. I used BDD100K Object detection dataset. While training, the model did iterated through the inputs a bit and then crashes with that error message when trained with CUDA. \nI have 11 classes including the background and it ranged from 0 to 10.\nI checked every detail where i could make mistake from my sides and I could not really pin point why is this error occurring.',
        "en",
        [],
        "https://github.com/pytorch/pytorch/issues/61329",
        "device-side assert (label/index out of range) -> [] (not in kb7; the transformers page that covers it was not included)",
    ),
    T(
        "RuntimeError: CUDA error: device-side assert triggered\nI have some trouble in code.\nI just wanted to classify the images using resnet18, but an error occurred and I couldn't proceed.\n---> 12     train(epoch+1, num_epochs, model_ft, optimizer_ft, lr_scheduler_ft )\n/usr/local/lib/python3.6/dist-packages/torch/autograd/__init__.py in _make_grads(outputs, grads)\n---> 36                 new_grads.append(torch.ones_like(out, memory_format=torch.preserve_format))\nRuntimeError: CUDA error: device-side assert triggered",
        "trace",
        [],
        "https://github.com/pytorch/pytorch/issues/40686",
        "device-side assert in PyTorch training -> []",
    ),
    T(
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:514, unhandled system error, NCCL version 2.4.8\nI met an error when I use DDP for multi node (two node, two GPUs each) training and 'nccl' backend (It runs perfect when I use 'gloo'). The environment is Ubuntu 16.04+python3.5+pytorch1.5.0+cuda10.1.\n```\ndef setup(rank, world_size):\n    os.environ['NCCL_DEBUG'] = 'INFO'\n    os.environ['NCCL_SOCKET_IFNAME'] = 'eno1'\n    os.environ['NCCL_IB_DISABLE'] = '1'\n    dist.init_process_group(\n        \"nccl\", rank=rank, init_method='tcp://162.105.146.176:22222', world_size=world_size)\n```\nptwop-176:1755:1755 [0] NCCL INFO Bootstrap : Using [0]eno1:162.105.146.176<0>\nptwop-176:1755:1755 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\nNCCL version 2.4.8+cuda10.1",
        "trace",
        [],
        "https://github.com/pytorch/pytorch/issues/39388",
        "PyTorch multi-node NCCL unhandled system error -> [] (seed 002's Nccl error FAQ is Paddle-specific; kb7 has no NCCL page)",
        doubt="Accelerate 'Hanging code and timeout errors' is only loosely related",
    ),
    T(
        'nccl runtime error: unhandled system error\nGot NCCL RuntimeError when startup a distributed training task with 2 nodes. Error code is:\n  File "train_recognition.py", line 235, in <module>\n    BACKBONE = DistributedDataParallel(BACKBONE, device_ids=[args.local_rank], output_device=args.local_rank)\nRuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1556653114079/work/torch/lib/c10d/ProcessGroupNCCL.cpp:272, unhandled system error\nBut when I run the same code inside 1 nodes with multi-processes and each process per gpu, it works well.\nPyTorch version: 1.1.0',
        "trace",
        [],
        "https://github.com/pytorch/pytorch/issues/20313",
        "PyTorch 2-node NCCL system error -> []",
    ),
    T(
        "Multi-GPU Training+Single-GPU Eval runs into time out\nwe run into a timeout when we evaluate for more than 30 minutes on a single GPU. Is there a way to tell the other GPU to wait until the main GPU completes the evaluation?\n[E ProcessGroupNCCL.cpp:587] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1802157 milliseconds before timing out.",
        "trace",
        [],
        "https://github.com/huggingface/accelerate/issues/223",
        "needs a longer process-group timeout (InitProcessGroupKwargs), which the page does not mention -> []",
        doubt="'Hanging code and timeout errors' heading matches the symptom but its content (shape mismatch, debug mode) does not answer a deliberate long single-GPU eval",
    ),
    T(
        "multiple GPUs is slower than running on a single GPU\nAccelerate version: 0.25.0\nPyTorch version (GPU?): 2.1.1+cu118 (True)\nGPU type: NVIDIA A800-SXM4-80GB\n1. Testing on cv_example.py in the examples, added tqdm to display the running time .\n2. single gpu train： python ./cv_example.py --data_dir images\n3. multi gpu train： accelerate launch --num_processes 4 --multi_gpu python ./cv_example.py --data_dir images\n4. The training time on multiple GPUs",
        "en",
        [],
        "https://github.com/huggingface/accelerate/issues/2432",
        "identical A800s, multi-GPU slower than single -> [] (page only covers heterogeneous GPUs)",
        doubt="'Performance issues on different GPUs' is lexically very close",
    ),
    W(
        "how to run nccl-tests all_reduce_perf inside docker to check nvlink bandwidth between my 8 gpus",
        "en",
        [],
        "NCCL bandwidth testing -> [] (no NCCL page in kb7)",
    ),
    W(
        "jax.distributed.initialize hangs on 2 nodes under slurm, coordinator address?",
        "en",
        [],
        "JAX multi-host init -> [] (not in jax FAQ)",
    ),
]

L = [
    T(
        "Failed to initialize NVML: Unknown Error after calling`systemctl daemon-reload`\n`Failed to initialize NVML: Unknown Error` does not occurred in initial NVIDIA docker created, but it's happened after calling `systemctl daemon-reload`.\nIt works fine in \nKernel: 4.19.91 and systemd 219.\nBut it doesn't work in \nKernel:  5.10.23 and systemd 239.\nAnd I can see the `devicel.list` in container as below:\ncat /sys/fs/cgroup/devices/devices.list \nc 195:254 rw\nc 195:0 rw\nBut after running `systemctl daemon-reload` ... the `devicel.list` in container as below:\nc 195:* m\nGPU device is not able be `rw`.\nCurrently I'm not able to use `cgroup V2`.",
        "trace",
        [AFFECTED, LOSING],
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/251",
        "daemon-reload drops device cgroup rw -> Affected Environments / Containers losing access",
    ),
    T(
        "Unable to use sudo apt-get - new issue\n```\nsudo apt-get update\nE: Conflicting values set for option Signed-By regarding source https://nvidia.github.io/libnvidia-container/stable/ubuntu18.04/amd64/ /: /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg !=  \nE: The list of sources could not be read. \n```\nSimilar issue to https://github.com/NVIDIA/nvidia-docker/issues/1626 but the solution suggested there does not apply in my case.\nIt started with me running https://github.com/mlcommons/training/blob/master/install_cuda_docker.sh, which failed at `sudo apt-get install -y nvidia-docker2` step",
        "trace",
        [SIGNED],
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/170",
        "Signed-By conflict -> Conflicting values set for option Signed-By",
    ),
    T(
        "gpu memory not released after run `sudo kill [pytorch process id]`\nWhenever I attempt to run the code `sudo kill [PyTorch process id]` to stop PyTorch process, I always find the GPU memory is not released.\nOS: Ubuntu 17.10\nPyTorch version: 0.3.0",
        "en",
        [PT_FREE],
        "https://github.com/pytorch/pytorch/issues/5736",
        "memory held after killing PyTorch -> My GPU memory isn't freed properly",
    ),
    T(
        "np.random generates the same random numbers for each data batch\nFor example, the following script \n```\nclass RandomDataset(object):\n    def __getitem__(self, ind):\n        item = [ind, np.random.randint(1, 10000), random.randint(10000, 20000), 0]\n        tsfm =Transform()(item)\n        return np.array(item + tsfm)\n    def __len__(self):\n        return 20\n\nfrom torch.utils.data import DataLoader\n\nds = RandomDataset()\nds = DataLoader(ds, 10, shuffle=False, num_workers=4)\n\nfor batch in ds:\n    print(batch)\n```\ngives \n#     0   2208  10983      0  15930  26264\n#    10   2208  15203      0  15930  2602",
        "trace",
        [PT_RANDOM],
        "https://github.com/pytorch/pytorch/issues/5059",
        "np.random repeats across DataLoader workers -> My data loader workers return identical random numbers",
    ),
    T(
        'the problem for RNN training with DataParallel\nhello, today I train the nn.LSTM with multi-gpu by nn.DataParallel. I set the batch_size=12 in data.DataLoader, so the shape of input is (12, T, *), T represents the max frame in the 12 sentences(these 12 sentences has been padded into equal length), and * represents the dimension of the feature for each frame. the number of gpu is 3. But the error as follows:\n  File ".../torch/nn/parallel/parallel_apply.py", line 65, in parallel_apply\n    raise output\nValueError: Expected `len(lengths)` to be equal to batch_size, but got 12 (batch_size=4).',
        "trace",
        [PT_RNN],
        "https://github.com/pytorch/pytorch/issues/10537",
        "lengths not scattered with the batch in DataParallel LSTM -> My recurrent network doesn't work with data parallelism (last paragraph)",
    ),
    T(
        "Request for better memory management\nThis issue is mainly about how to recover from an `out of memory` exception, previously posted in forum.\nTill now, it's not always possible to recover from OOM exception whether during train or inference. This will pose huge risk when you use pytorch in large-scale training or deployment.",
        "en",
        [PT_HANDLER],
        "https://github.com/pytorch/pytorch/issues/10615",
        "cannot recover after catching OOM -> My out of memory exception handler can't allocate memory",
    ),
    T(
        'log not work properly with muti-GPU\nWhen I try to run `run_mlm_no_trainer.py` with multi-GPU on one node, I can\'t get any log and the output file in TensorBoard is blank. However when I just run on one GPU by `python run_mlm_no_trainer.py`,it works well.\n```python\naccelerator = Accelerator(log_with="all", logging_dir=args.output_dir,kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)]) if args.with_tracking else Accelerator()\n    if accelerator.is_main_process:\n        logging.basicConfig(\n            format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",\n            datefmt="%m/%d/%Y %H:%M:%S",\n            level=logging.INFO,\n        )\n        logger.info(accelerator.state, main_process_only=False)\n```',
        "en",
        [A_LOG],
        "https://github.com/huggingface/accelerate/issues/381",
        "no logs in multi-GPU accelerate run -> Logging",
        doubt="the TensorBoard tracker part is not covered by the section",
    ),
    T(
        "A problem about multi-GPU training\nWhen I use multi-GPU training, the result is lower than that of single one. What is the reason for this? does it have anything to do with accelerate?",
        "en",
        [A_REPRO],
        "https://github.com/hmkx/HiNeRV/issues/10",
        "multi-GPU result lower with accelerate -> Non-reproducible results between device setups",
    ),
    T(
        "Issue taking gradients through np.where when one of branches is nan.\nIf you take gradients through np.where and one of the branches is nan, the gradient will be nan even if the branch is not taken. \n```\ndef test_fail(x):\n  x = np.sqrt(np.sum(x ** 2, axis=1))\n  ones = np.ones_like(x)\n  x = np.where(x > 0.5, x, ones)\n  return np.sum(x)\n\ndef test_succeed(x):\n  x = np.sum(x ** 2, axis=1)\n  ones = np.ones_like(x)\n  x = np.sqrt(np.where(x > 0.5, x, ones))\n  return np.sum(x)\n```",
        "en",
        [J_NAN],
        "https://github.com/jax-ml/jax/issues/347",
        "NaN gradient through where -> Gradients contain NaN where using where",
    ),
    T(
        "Huge difference in speed between first and subsequent runs\nI'm trying to extract Jacobian of a function f consisting of numerous numpy operations (such as dot, matmul, einsum, etc.) via jacfwd. I've also used jit to compile the jacfwd of my function using J = jit(jacfwd(f)).\nAs f is a relatively small function the calling of J = jit(jacfwd(f)) is lightning fast, but to my surprise the first time when I call J, the run time was 10s, and subsequent runs were at the order of 1 ms or less.\nIs this normal behavior? Really hoping I could lower the run-time of first run significantly as this is meant for speed-critical applications.",
        "en",
        [J_SLOW],
        "https://github.com/jax-ml/jax/issues/4495",
        "first jit call slow -> jit decorated function is very slow to compile",
    ),
    T(
        'Numerical precision differences in jitted vs. non-jitted code!\nHi all! I am seeing some strange numerical behavior in jitted vs. non-jitted code. I start by defining the two functions below. They should ideally give the same result since the second term in `f2` gets multiplied by zero! \n```py\nfrom jax import jit, vmap, config\nimport jax.numpy as jnp\nconfig.update("jax_enable_x64", True)\n\ndef f1(x):\n    return jnp.cos(x/2)\n\ndef f2(x):\n    return jnp.cos(x/2) + 0 * jnp.sin(x/2)\n```\nprint(jit(vmap(f1))(xs) - jit(vmap(f2))(xs))\nOutput: [ 0.00000000e+00  0.00000000e+00  0.00000000e+00  0.00000000e+00\n  0.00000000e+00 -1.11022302e-16',
        "en",
        [J_NUMERICS],
        "https://github.com/jax-ml/jax/issues/22881",
        "jit vs non-jit float differences -> jit changes the exact numerics of outputs",
    ),
    T(
        'jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed\nI have a python virtual environment with a clean installation of JAX\n# Installs the wheel compatible with CUDA 12 and cuDNN 8.8 or newer.\npip install --upgrade "jax[cuda12_local]" -f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html\nWhen I run my scripts, they work perfectly, but sometimes I get the following error with a success rate of between 2 and 10 successful executions and between 1 and 3 failed executions \n2023-04-02 16:00:19.964652: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:429] Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED\n2023-04-02 16:00:19.964737: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:438] Possibly insufficient driver version: 530.30.2',
        "trace",
        [J_CUDA],
        "https://github.com/jax-ml/jax/issues/15361",
        "intermittent cuDNN init failure under JAX -> Why do some CUDA libraries fail to load/initialize?",
        doubt="intermittent failure fits the memory explanation; the driver-version hint in the log is not covered",
    ),
    T(
        'Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\nWhen running "bash run_container.sh", the following error appears: access control disabled, clients can connect from any host docker: \nError response from daemon: could not select device driver "" with capabilities: [[gpu]].\nSystem: Ubuntu 22.04\nNvidia Driver: Driver Version: 550.120\nCUDA version: CUDA Version: 12.4',
        "trace",
        [],
        "https://github.com/NVlabs/BundleSDF/issues/184",
        "toolkit missing for --gpus -> [] (not covered)",
    ),
    T(
        "RuntimeError: NCCL error with 2.4.6\nI'm getting the following error when I'm running the distributed training. I have simple multinode GPU architecture 2 nodes in total and 1 GPU on each node so total GPUs are 2.\nLOG on Worker node:\n  File \"software/fairseq-py/fairseq/distributed_utils.py\", line 77, in all_gather_list\n    torch.distributed.all_gather(out_buffers, in_buffer.cuda())",
        "trace",
        [],
        "https://github.com/NVIDIA/nccl/issues/261",
        "multi-node NCCL error in fairseq/PyTorch -> []",
    ),
    W(
        "where is the debug= option for nvidia-container-runtime config.toml, want logs of why container start fails",
        "en",
        [DBGLOG],
        "runtime debug log -> Generating Debugging Logs",
    ),
    W("what does accelerate launch --debug actually do", "en", [A_DEBUG], "-> Accelerate's operational debug mode"),
    W(
        "jax: loss uses argmax, jax.grad returns all zeros",
        "en",
        [J_ZERO],
        "-> Why are gradients zero for functions based on sort order?",
    ),
    W(
        "print inside jax.jit shows Traced<ShapedArray(float32[3])> how do i see the actual numbers",
        "en",
        [J_TRACER],
        "-> How can I convert a JAX Tracer to a NumPy array? (jax.debug.print)",
    ),
    W(
        "accelerate auto reduce batch size when cuda OOM instead of crashing?",
        "en",
        [A_FEBS, A_OOM],
        "-> find_executable_batch_size / CUDA out of memory",
    ),
    W(
        "mixing rtx 4090 and 3060 for accelerate multi gpu training, 3060 runs out of memory first",
        "en",
        [A_PERF],
        "-> Performance issues on different GPUs",
    ),
]


def dump(rows, path, prefix):
    with open(path, "w") as f:
        for i, r in enumerate(rows, 1):
            r = dict(r)
            r = {"id": f"{prefix}{i:02d}", **r}
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


dump(Q, os.path.join(HERE, "questions.jsonl"), "kb7-q")
dump(L, os.path.join(HERE, "labels20.jsonl"), "kb7-l")
with open(os.path.join(HERE, "questions_unlabelled.jsonl"), "w") as f:
    for i, r in enumerate(Q, 1):
        u = {"id": f"kb7-q{i:02d}"}
        u.update({k: v for k, v in r.items() if k not in ("expect", "note", "doubt")})
        f.write(json.dumps(u, ensure_ascii=False) + "\n")
print(
    len(Q),
    "questions;",
    sum(1 for r in Q if r["expect"]),
    "answerable;",
    sum(1 for r in Q if not r["expect"]),
    "near;",
    sum(1 for r in Q if r["source_kind"] == "written"),
    "written;",
    len(L),
    "labels20",
)
