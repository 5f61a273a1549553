"""Benchmark queries: what users type (Chinese, English) and what they paste (traces).

Written for the benchmark; none is taken from the evaluation sets. ``expect`` is
the seed file prefix and a fragment of the heading a good answer cites; it is
used only for an informational "top-3 agrees" count, never for a timing.
Fifty distinct questions, so the concurrency run can give every client its own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Query:
    kind: str  # "zh" | "en" | "trace"
    text: str
    expect: tuple[str, str] = ("", "")  # (source prefix, heading fragment)


ZH = [
    ("训练时报 out of memory，batch size 要调多小", ("002", "显存不足")),
    ("怎么让 paddle 只用第二块显卡跑训练", ("001", "指定对应的GPU设备")),
    ("网络里一部分层放 CPU 一部分放 GPU 可以吗", ("001", "GPU和CPU")),
    ("多卡训练保存的模型加载后评估精度不对", ("000", "加载模型评估")),
    ("fluid 1.2 能不能装 cudnn6", ("000", "cuDNN6")),
    ("loss 训练几轮后变成 nan 了", ("002", "NaN")),
    ("模型训练一直不收敛，loss 不下降", ("002", "不收敛")),
    ("训练好的模型文件太大，想做量化压缩", ("002", "压缩")),
    ("预测的时候想看每个 op 花了多少时间", ("002", "耗时")),
    ("梯度爆炸了，怎么做梯度裁剪", ("002", "梯度裁剪")),
    ("冻结某一层的参数不让它更新", ("002", "不训练某层")),
    ("CPU 上训练太慢，多核怎么利用起来", ("002", "CPU")),
    ("变长的 ID 特征把内存撑爆了", ("002", "变长ID")),
    ("多机多卡训练之前要准备什么环境", ("003", "准备多机多卡环境")),
    ("tensorflow 怎么设置显存按需增长", ("004", "管理GPU RAM")),
    ("tensorflow 里怎么把操作指定到某个 GPU 上", ("004", "放置node")),
    ("paddle.multiply 和 matmul 分别什么时候用", ("002", "matmul")),
    ("inplace 操作以后梯度还在吗", ("002", "inplace")),
]

EN = [
    ("Training crashes because GPU memory is exhausted; what should I change?", ("002", "显存不足")),
    ("How do I restrict Paddle to one specific GPU card?", ("001", "指定对应的GPU设备")),
    ("GPU usage is nearly 0% while training with fluid, why?", ("000", "利用率")),
    ("cuDNN version 6 compatibility with fluid 1.2", ("000", "cuDNN6")),
    ("Wrong evaluation accuracy after loading a model trained on several GPUs", ("000", "加载模型评估")),
    ("My loss becomes NaN after some iterations", ("002", "NaN")),
    ("the model does not converge, loss stays flat", ("002", "不收敛")),
    ("How can I compress a large trained model for deployment?", ("002", "压缩")),
    ("How can I print the time spent in each operator during inference?", ("002", "耗时")),
    ("clip gradients by global norm in paddle", ("002", "梯度裁剪")),
    ("How do I freeze the weights of one layer?", ("002", "不训练某层")),
    ("speed up CPU training with several worker processes", ("002", "CPU")),
    ("how to initialize the distributed environment for multi-node training", ("003", "初始化分布式环境")),
    ("How do I wrap my model for data-parallel training on several machines?", ("003", "数据并行")),
    ("TensorFlow grabs all GPU memory at startup, how do I limit it?", ("004", "管理GPU RAM")),
    ("pin a TensorFlow op to a specific device", ("004", "放置node")),
    ("how to read the gradient of an intermediate variable in static graph mode", ("002", "梯度")),
]

TRACE = [
    (
        "W0301 10:12:01.123456  4242 device_context.cc:236] Please NOTE: device: 0, CUDA Capability: 70\n"
        "ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 1.5GB memory on GPU 0, "
        "available memory is only 512MB.",
        ("002", "显存不足"),
    ),
    (
        'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    exe.run(startup)\n'
        "RuntimeError: NCCL error(2), unhandled system error",
        ("002", "Nccl"),
    ),
    (
        "paddle.fluid.core.EnforceNotMet: Failed to find dynamic library: libcudnn.so ( libcudnn.so: cannot open "
        "shared object file: No such file or directory )",
        ("", ""),
    ),
    (
        "E0912 08:01:33.000001 1337 cuda_driver.cc:965] failed to allocate 3.66G (3929931776 bytes) from device: "
        "CUDA_ERROR_OUT_OF_MEMORY",
        ("004", "管理GPU RAM"),
    ),
    (
        "ERROR 2021-03-02 11:22:33,101 launch.py:285] Out of all 8 Trainers, trainer 3 exited with error code 1",
        ("002", "Trainers"),
    ),
    (
        'Traceback (most recent call last):\n  File "run.py", line 12, in <module>\n    loss.backward()\n'
        "FloatingPointError: loss is nan at step 120",
        ("002", "NaN"),
    ),
    (
        "InvalidArgumentError: Cannot assign a device for operation MatMul: Could not satisfy explicit device "
        "specification '/device:GPU:1' because no supported kernel for GPU devices is available.",
        ("004", ""),
    ),
    (
        "F0101 00:00:01.000000 1000 init.cc:88] Check failed: cudaSetDevice(3) == cudaSuccess (10 vs. 0) "
        "invalid device ordinal",
        ("001", ""),
    ),
    (
        '*** Aborted at 1550000000 (unix time) try "date -d @1550000000" if you are using GNU date ***\n'
        "PC: @ 0x0 (unknown)\n*** SIGSEGV (@0x0) received by PID 1234 (TID 0x7f0012345678) from PID 0; stack trace: ***\n"
        "Segmentation fault (core dumped)",
        ("", ""),
    ),
    (
        "2023-05-01 10:00:00 ERROR paddle.distributed: init_parallel_env failed: connection refused by trainer 1",
        ("003", ""),
    ),
    ("ImportError: libcudart.so.8.0: cannot open shared object file: No such file or directory", ("001", "")),
    (
        "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n"
        "MemoryError: cannot allocate memory for the embedding table",
        ("002", ""),
    ),
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
        "shape[256,1024,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0",
        ("004", ""),
    ),
    (
        "RuntimeError: (PreconditionNotMet) The number of trainers 2 does not match the number of ips 1\n"
        "  [Hint: Expected nranks == ips.size(), but received nranks:2 != ips.size():1.]",
        ("003", ""),
    ),
    (
        "I0101 12:00:00.000100   100 executor.cc:200] step 100 cost 2.31s\n"
        "WARNING: GPU utilization stays at 0%, the data reader is the bottleneck",
        ("000", "利用率"),
    ),
]

QUERIES: tuple[Query, ...] = tuple(
    [Query("zh", t, e) for t, e in ZH] + [Query("en", t, e) for t, e in EN] + [Query("trace", t, e) for t, e in TRACE]
)

assert len({q.text for q in QUERIES}) == len(QUERIES) == 50, "benchmark questions must be distinct"


def agrees(query: Query, hits: list[dict], depth: int = 3) -> bool | None:
    """Whether one of the first ``depth`` hits is the expected section (None when no expectation)."""
    source, fragment = query.expect
    if not source:
        return None
    for hit in hits[:depth]:
        if str(hit.get("source", "")).startswith(source) and fragment.lower() in str(hit.get("section", "")).lower():
            return True
    return False
