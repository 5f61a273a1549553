"""Builds questions.jsonl, questions_unlabelled.jsonl and labels20.jsonl for kb9."""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

VT = "kb9/vllm_troubleshooting.md"
VC = "kb9/vllm_conserving_memory.md"
TF = "kb9/transformers_troubleshooting.md"
PF = "kb9/peft_troubleshooting.md"
SEED_TRAIN = "002_5c885a5c94776257.txt"


def E(src, sec):
    return {"source": src, "section": sec}


VT_DOWNLOAD = E(VT, "Hangs downloading a model")
VT_LOADDISK = E(VT, "Hangs loading a model from disk")
VT_OOM = E(VT, "Out of memory")
VT_GENQ = E(VT, "Generation quality changed")
VT_LOG = E(VT, "Enable more logging")
VT_BREAK = E(VT, "Breakpoints")
VT_NET = E(VT, "Incorrect network setup")
VT_GRAPH = E(VT, "Error near self.graph.replay()")
VT_HW = E(VT, "Incorrect hardware/driver")
VT_MP = E(VT, "Python multiprocessing")
VT_RTE = E(VT, "RuntimeError Exception")
VT_COMPILE = E(VT, "torch.compile Error")
VT_INSPECT = E(VT, "Model failed to be inspected")
VT_UNSUP = E(VT, "Model not supported")
VT_DEVICE = E(VT, "Failed to infer device type")
VT_NCCLSYS = E(VT, "NCCL error: unhandled system error during ncclCommInitRank")
VT_KNOWN = E(VT, "Known Issues")
VC_TITLE = E(VC, "Conserving Memory")
VC_TP = E(VC, "Tensor Parallelism (TP)")
VC_QUANT = E(VC, "Quantization")
VC_CTX = E(VC, "Context length and batch size")
VC_GRAPHS = E(VC, "Reduce CUDA Graphs")
VC_CACHE = E(VC, "Adjust cache size")
VC_MMLIMIT = E(VC, "Multi-modal input limits")
VC_CONFIG = E(VC, "Configurable options")
VC_MMPROC = E(VC, "Multi-modal processor arguments")
TF_FIREWALL = E(TF, "Firewalled environments")
TF_OOM = E(TF, "CUDA out of memory")
TF_IMPORT = E(TF, "ImportError")
TF_ASSERT = E(TF, "CUDA error: device-side assert triggered")
TF_PAD = E(TF, "Incorrect output when padding tokens aren't masked")
TF_UNRECOG = E(TF, "ValueError: Unrecognized configuration class XYZ for this kind of AutoModel")
PF_EXAMPLES = E(PF, "Examples don't work")
PF_FP16 = E(PF, "ValueError: Attempting to unscale FP16 gradients")
PF_BAD = E(PF, "Bad results from a loaded PEFT model")
PF_RANDOM = E(PF, "Random deviations")
PF_LOADED = E(PF, "Incorrectly loaded model")
PF_RANDINIT = E(PF, "Randomly initialized layers")
PF_VOCAB = E(PF, "Extending the vocabulary")
PF_STATUS = E(PF, "Investigating the status of the PEFT model")
SEED_OOM = E(SEED_TRAIN, "训练时报错提示显存不足")


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


G = "https://github.com/"
V = G + "vllm-project/vllm/issues/"

Q = [
    # ---------------- answerable, real threads ----------------
    T(
        "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n"
        "I followed the Quickstart tutorial and deployed the Chinese-llama-alpaca-2 model using vllm, and I got the following error.\n"
        "CUDA_VISIBLE_DEVICES=0 python load_llm.py\n"
        "INFO 01-11 15:51:02 llm_engine.py:70] Initializing an LLM engine with config: model='/home/***/models/alpaca-2', dtype=torch.float16, max_seq_len=4096, tensor_parallel_size=1, quantization=None, enforce_eager=False\n"
        "INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512\n"
        "  File \"load_llm.py\", line 8, in <module>\n    llm = LLM(model='/home/***/models/alpaca-2')",
        "trace",
        [VC_CTX],
        V + "2418",
        "KV cache too small for max_model_len -> Context length and batch size (limit max_model_len / max_num_seqs)",
    ),
    T(
        "vllm 部署 Qwen1.5-7B-Chat 出错 KV cache 怎么是7344呢？\n"
        "python -m vllm.entrypoints.openai.api_server --served-model-name Qwen1.5-7B-Chat --model  /models--Qwen--Qwen1.5-7B-Chat\n"
        " raise ValueError(\n"
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        "mixed",
        [VC_CTX],
        G + "QwenLM/Qwen3/issues/295",
        "Chinese user, same max seq len > KV cache error -> Context length and batch size",
        lang="zh",
    ),
    T(
        "Where does the default number 43328 of KV cache come from and How can I change it?\n"
        "I have encountered \"The model's max seq len (56000) is larger than the maximum number of tokens that can be stored in KV cache (43328)\" numerous times. Although it can be solved by setting a smaller --max-model-len parameter, it's actually an issue when you really want to set a large --max-model-len for a large context. What makes it more complicated is that the KV cache number changes automatically when we set different --max-model-len. My question is: 1) can we change the size of KV cache? 2) how? 3) Anyway for us user to manage the KV cache issue more directly?",
        "en",
        [VC_CTX],
        V + "11391",
        "KV cache capacity vs --max-model-len -> Context length and batch size",
        doubt="the user wants a larger KV cache, not a smaller context; the page only covers limiting max_model_len/max_num_seqs (gpu_memory_utilization is not on these pages)",
    ),
    T(
        "[Bug]: RuntimeError with tensor_parallel_size > 1 in Process Bootstrapping Phase\n"
        "(venv-vllm) ben@sakura-h100-3:/nvme0n1/ben/test$ python test.py\n"
        "INFO 06-19 01:40:01 config.py:632] Defaulting to use mp for distributed inference\n"
        "INFO 06-19 01:40:01 llm_engine.py:161] Initializing an LLM engine (v0.5.0.post1) with config: model='meta-llama/Meta-Llama-3-8B-Instruct', tensor_parallel_size=2, ...\n"
        "RuntimeError:\n        An attempt has been made to start a new process before the\n        current process has finished its bootstrapping phase.",
        "trace",
        [VT_RTE, VT_MP],
        V + "5637",
        "TP>1 with mp workers, bootstrapping RuntimeError -> `RuntimeError` Exception under Python multiprocessing (guard with if __name__ == '__main__')",
    ),
    T(
        "[Bug]: Model architectures ['Qwen2_5_VLForConditionalGeneration'] failed to be inspected\n"
        "vLLM Version                 : 0.9.2.dev195+g202c5df93.d20250622\n"
        "[pip3] torch==2.6.0\n[pip3] transformers==4.53.0.dev0\n[pip3] triton==3.2.0\n"
        "ValueError: Model architectures ['Qwen2_5_VLForConditionalGeneration'] failed to be inspected. Please check the logs for more details.",
        "trace",
        [VT_INSPECT],
        V + "19951",
        "exact error -> Model failed to be inspected",
    ),
    T(
        "[Bug]: ValueError: Model architectures ['LlamaForCausalLM'] failed to be inspected. Please check the logs for more details\n"
        '  File "/root/miniconda3/envs/vllm311/lib/python3.11/site-packages/vllm-0.7.2+cpu-py3.11-linux-aarch64.egg/vllm/entrypoints/openai/api_server.py", line 875, in run_server\n'
        "    async with build_async_engine_client(args) as engine_client:\n"
        "    engine_config = engine_args.create_engine_config(...)\n"
        "ValueError: Model architectures ['LlamaForCausalLM'] failed to be inspected. Please check the logs for more details.",
        "trace",
        [VT_INSPECT],
        V + "13332",
        "self-built vllm (cpu, aarch64) cannot import the model file -> Model failed to be inspected (outdated binaries / missing deps)",
    ),
    T(
        "[Bug]: `RuntimeError: Failed to infer device type` with v0.7.2\n"
        "vllm serve fails right at startup after upgrading to 0.7.2:\n"
        '    raise RuntimeError("Failed to infer device type")\nRuntimeError: Failed to infer device type',
        "trace",
        [VT_DEVICE],
        V + "12847",
        "exact error -> Failed to infer device type",
    ),
    T(
        "[Bug]: When deploying LLM with Docker, the following error occurs: RuntimeError: Failed to infer device type\n"
        "served_model_name=['qwen2.5-32b-instruct'], device='auto', ...\n"
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/arg_utils.py", line 1074, in create_engine_config\n'
        "    device_config = DeviceConfig(device=self.device)\n"
        "RuntimeError: Failed to infer device type",
        "trace",
        [VT_DEVICE],
        V + "13946",
        "docker deployment, device inference fails -> Failed to infer device type",
    ),
    T(
        "[Bug]: docker Loading safetensors too slow\n"
        " Loading safetensors checkpoint shards:   0% Completed | 0/2 [00:00<?, ?it/s]\n"
        "ssd loads 20M/s, while comfyui loads 1G/s\n"
        'docker run --rm --name q1 --runtime nvidia --gpus "device=0" --ipc=host -v "m:\\ComfyUI\\ComfyUI\\models\\LLM\\Qwen-VL\\Qwen3-VL-4B-Instruct-FP8:/app/models/Qwen3-VL-4B-Instruct-FP8" -p 8000:8000 vllm/vllm-openai:latest --model /app/models/Qwen3-VL-4B-Instruct-FP8 --tensor-parallel-size 1 --gpu-memory-utilization 0.85 --max-num-seqs 128',
        "en",
        [VT_LOADDISK],
        V + "28381",
        "model mounted from a Windows path into docker loads at 20MB/s -> Hangs loading a model from disk (where the model is stored, local disk)",
    ),
    T(
        "[Bug]: Qwen3-1.7B download just hangs on engine startup\n"
        "vllm serve Qwen/Qwen3-1.7B\nThe engine starts, prints that it is loading the model and then nothing happens, the download never finishes and no error is shown.",
        "en",
        [VT_DOWNLOAD],
        V + "18303",
        "download hangs at startup -> Hangs downloading a model (download with huggingface-cli first; the maintainer answered exactly that)",
        doubt="body paraphrased from the title; the thread's first message is mostly the env template",
    ),
    T(
        "[Bug]: vllm 0.8.2 have severe quality problem\n"
        "After upgrading from vLLM 0.7.2 to 0.8.2 the answers of the same model with the same requests are clearly worse.",
        "en",
        [VT_GENQ],
        V + "15622",
        "quality drop after 0.8 -> Generation quality changed (the section was written in answer to this thread)",
        doubt="body reduced to the title's claim plus the versions from the env dump",
    ),
    T(
        "[Usage]: How to use pdb using the latest version?\n"
        "when I use `pdb.set_trace()` in the latest code, it crashes.\nHow to use pdb in the latest vllm?\n"
        "Process SpawnProcess-1:\nTraceback (most recent call last):\n"
        '  File "/opt/vllm/vllm/worker/model_runner_base.py", line 116, in _wrapper\n'
        '  File "/opt/vllm/vllm/model_executor/models/llama.py", line 479, in forward',
        "trace",
        [VT_BREAK],
        V + "9602",
        "pdb in vLLM worker subprocess -> Breakpoints",
    ),
    T(
        "[Usage]: How to debug in subprocess\n"
        "I want to debug in qwen2.py. I insert` import ipdb; ipdb.set_trace().` But it got the following error.\n[screenshot]",
        "en",
        [VT_BREAK],
        V + "19935",
        "ipdb in vLLM model file fails -> Breakpoints (VLLM_ENABLE_V1_MULTIPROCESSING=0 was the reply)",
    ),
    T(
        "[Bug]: vLLM hang at nccl step when trying to use multiple GPUs\n"
        "DEBUG 08-31 09:50:46 parallel_state.py:845] world_size=2 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:39423 backend=nccl\n"
        "INFO 08-31 09:50:46 utils.py:975] Found nccl from library libnccl.so.2\n"
        "INFO 08-31 09:50:46 pynccl.py:63] vLLM is using nccl==2.20.5\n"
        "osprey1:1927386:1927386 [0] NCCL INFO Bootstrap : Using eno1:128.174.136.27<0>\n"
        "... and then it hangs forever (VLLM_TRACE_FUNCTION logs saved to /tmp/vllm/...)",
        "trace",
        [VT_HW, VT_LOG],
        V + "8058",
        "TP=2 hangs at NCCL init -> Incorrect hardware/driver (sanity-check script, NCCL_P2P_DISABLE); Enable more logging also fits since the user is already tracing",
    ),
    T(
        "[Usage]: Can only run tensor parallel=2 once and subsequent stalls on Ada A6000/48GB x2 GPUs for any models\n"
        "each time i restart my computer, i can run the code once.\n"
        "llm = LLM(model='Qwen/Qwen2.5-Math-1.5B-Instruct', tensor_parallel_size = 2, trust_remote_code=True, gpu_memory_utilization=0.9, enforce_eager=True)\n"
        "after I try to run it again, it hangs at llm.generate(). This is what I get for os.environ['NCCL_DEBUG']='TRACE' when it stalls:\n"
        "vllm.__version__ 0.5.2",
        "en",
        [VT_HW, VT_KNOWN],
        V + "9920",
        "TP=2 stalls on a workstation -> Incorrect hardware/driver; Known Issues also applies (0.5.2 zmq hang)",
        doubt="Known Issues names 0.5.2 explicitly; which one leads is debatable",
    ),
    T(
        "[Bug]: vllm hanging on initializing\n"
        "2024-03-26 18:23:55,708 INFO worker.py:1752 -- Started a local Ray instance.\n"
        "INFO 03-26 18:23:57 llm_engine.py:70] Initializing an LLM engine (v0.3.3) with config: model='mosaicml/mpt-7b', tensor_parallel_size=2, ...\n"
        "[E socket.cpp:922] [c10d] The client socket has timed out after 1800s while trying to connect to (172.27.21.224, 43115).\n"
        "    llm = LLM(model=model_name, trust_remote_code=True, tensor_parallel_size=2)",
        "trace",
        [VT_NET],
        V + "3644",
        "workers connect to a wrong/unreachable IP -> Incorrect network setup (VLLM_HOST_IP); maintainers later hard-coded localhost for single node",
    ),
    T(
        "[Bug]: Can't serve on ray cluster although passing VLLM_HOST_IP\n"
        "Two nodes in a ray cluster, I export VLLM_HOST_IP on every node and start vllm serve with --tensor-parallel-size 8 --pipeline-parallel-size 2, but it still fails to start on the cluster.",
        "en",
        [VT_NET],
        V + "13521",
        "multi-node IP selection -> Incorrect network setup",
        doubt="first message only partly visible; the user already set VLLM_HOST_IP, so the page's advice is a retry at best",
    ),
    T(
        "[Bug]: torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: TypeError: 'int' object is not iterable\n"
        "vllm serve /home/ai-llm/Downloads/models/Qwen2.5-Coder-32B-Instruct-AutoRound-GPTQ-4bit --max_model_len 1024 --tensor_parallel 2\n"
        '  File "/home/ai-llm/Downloads/vllm/vllmenv/lib/python3.10/site-packages/torch/_inductor/codegen/triton_utils.py", line 176, in config_of\n'
        '  File "/home/ai-llm/Downloads/vllm/triton/python/triton/backends/compiler.py", line 186, in from_dict\n'
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nTypeError: 'int' object is not iterable",
        "trace",
        [VT_COMPILE],
        V + "11450",
        "inductor error from a self-built triton -> torch.compile Error (custom triton incompatible with PyTorch)",
    ),
    T(
        "[Bug]: When tensor_parallel_size>1, RuntimeError: Cannot re-initialize CUDA in forked subprocess.\n"
        "vllm version: '0.5.0.post1'\nWhen I set tensor_parallel_size=1, it works well.\nBut, if I set tensor_parallel_size>1, below error occurs:\n"
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method.\n"
        "After I add\nimport torch\nimport multiprocessing\ntorch.multiprocessing.set_start_method('spawn')\nthe same RuntimeError still occurs.",
        "trace",
        [VC_TP, VT_RTE, VT_MP],
        V + "6152",
        "CUDA initialised before vLLM with TP>1 -> Tensor Parallelism (TP) warning (don't touch CUDA before vLLM, use CUDA_VISIBLE_DEVICES); the spawn warning is shown under `RuntimeError` Exception",
        doubt="the exact error string sits in the conserving-memory page's TP warning; the troubleshooting page covers spawn only through the warning text",
    ),
    T(
        "[Bug]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 6 has a total capacity of 44.53 GiB of which 448.00 KiB is free.\n"
        "vllm serve fails with OOM at startup; with --enforce-eager it starts fine. Is there any other solution? Because using --enforce-eager may affect performance.",
        "trace",
        [VC_GRAPHS, VT_OOM, VC_CTX],
        V + "15598",
        "OOM only without --enforce-eager -> Reduce CUDA Graphs (cudagraph_capture_sizes); Out of memory / Context length and batch size (max_num_seqs) also accepted",
        doubt="second sentence merges the first message with the user's own follow-up",
    ),
    T(
        "enforce_eager flag\n"
        "engine.py :190 Error initializing vLLM engine: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacty of 44.35 GiB of which 53.38 MiB is free. Process 3663367 has 44.28 GiB memory in use.\n"
        "INFO 02-03 03:43:49 model_runner.py:629] CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing `gpu_memory_utilization` or enforcing eager mode.\n"
        "INFO 02-03 03:43:49 model_runner.py:625] Capturing the model for CUDA graphs.",
        "trace",
        [VC_GRAPHS, VT_OOM],
        G + "runpod-workers/worker-vllm/issues/40",
        "OOM during CUDA graph capture, wants enforce_eager -> Reduce CUDA Graphs",
    ),
    T(
        "vllm 运行Qwen-72B-Chat 报OOM错误。\n"
        "我拷贝的官方的代码，在8块4090（24G）服务器上，部署Qwen-72B-Chat。报错：\n"
        "RuntimeError: CUDA error: out of memory\n"
        "(RayWorkerVllm pid=74362) INFO 12-18 21:44:36 model_runner.py:394] Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI.\n"
        "我不使用vLLM时，是可以运行推理的。很好奇这是怎么回事，应该怎么解决呢？",
        "mixed",
        [VC_GRAPHS, VT_OOM],
        G + "QwenLM/Qwen/issues/819",
        "vLLM OOM while capturing CUDA graphs on 8x4090 -> Reduce CUDA Graphs / Out of memory",
        lang="zh",
    ),
    T(
        "[Usage]: qwen2.5vl multi images inference meets OOM\n"
        "vllm 0.8.5. I want to run inference of Qwen2.5-VL-72B-Instruct-AWQ with multi images.\n"
        'llm = LLM(model=MODEL_PATH, tensor_parallel_size=torch.cuda.device_count(), gpu_memory_utilization=0.95, max_model_len=32768, max_num_seqs=1, limit_mm_per_prompt={"image": 12, "video": 0})\n'
        'I need 12 images in my prompt, but if I set limit_mm_per_prompt={"image": 12, "video": 0}, vLLM will reserve 16384 * 12 tokens for multi-modal embeddings during the profiling stage, which causes an OOM error. However, I set max_pixels to 768 x 28 x 28 when loading the Qwen2_5_VLProcessor, so each image would consume at most 768 tokens.',
        "en",
        [VC_CONFIG, VC_MMPROC, VC_MMLIMIT],
        V + "18550",
        "profiling reserves worst-case image tokens -> Configurable options (size hints in limit_mm_per_prompt) / Multi-modal processor arguments (max_pixels)",
        doubt="the user's own text (the question) is in the second message of the thread; kept because it is the user's first explanation",
    ),
    T(
        "[Usage]: Unreasonable value for multi-modal memory profiling\n"
        'Run the official demo script for using Qwen 2.5 VL 3B. When specifying `limit_mm_per_prompt={"image": 1}`, I got\n'
        "WARNING 06-26 07:12:07 [profiling.py:245] The sequence length used for profiling (max_num_batched_tokens / max_num_seqs = 5120) is too short to hold the multi-modal embeddings in the worst case (32768 tokens in total, out of which {'image': 16384, 'video': 16384} are reserved for multi-modal embeddings).\n"
        "Where does this (approx.) 16384 tokens per image come from? How can I set it by myself? This very large hard-coded value blocks me from using multiple images as it will cause OOM during memory profiling.",
        "en",
        [VC_CONFIG, VC_MMPROC, VC_MMLIMIT],
        V + "20123",
        "worst-case image tokens in profiling -> Configurable options / Multi-modal processor arguments; video reserved although unused -> Multi-modal input limits",
    ),
    T(
        "[Bug]: about NCCL error：unhandled system error\n"
        "(VllmWorkerProcess pid=55933) ERROR 11-25 08:17:34 multiproc_worker_utils.py:229]     self.pynccl_comm = PyNcclCommunicator(\n"
        '  File ".../vllm/distributed/device_communicators/pynccl.py", line 99, in __init__\n'
        "    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(\n"
        '  File ".../vllm/distributed/device_communicators/pynccl_wrapper.py", line 244, in ncclCommInitRank\n'
        "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
        "trace",
        [VT_NCCLSYS, VT_HW],
        V + "10626",
        "ncclCommInitRank unhandled system error -> NCCL error: unhandled system error during ncclCommInitRank (/dev/shm, IPC_LOCK); hardware/driver check also accepted",
        doubt="single node multiproc here, while the section speaks of GPUDirect RDMA across nodes",
    ),
    T(
        "[Bug]: Error executing method 'init_device'. This might cause deadlock in distributed execution. & RuntimeError: NCCL error: unhandled system error\n"
        '(RayWorkerWrapper pid=880) ERROR 04-16 01:01:44 [worker_base.py:620]   File "/usr/local/lib/python3.12/dist-packages/vllm/distributed/device_communicators/pynccl_wrapper.py", line 277, in ncclCommInitRank\n'
        "(RayWorkerWrapper pid=880) ERROR 04-16 01:01:44 [worker_base.py:620] RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details) [repeated 6x across cluster]\n"
        "Could anyone please tell me what the possible reasons are and how to solve it?",
        "trace",
        [VT_NCCLSYS],
        V + "16707",
        "ray multi-node init_device NCCL unhandled system error -> NCCL error: unhandled system error during ncclCommInitRank",
    ),
    T(
        "[Usage]:ValueError: Model architectures ['Qwen2ForCausalLM'] failed to be inspected. Please check the logs for more details.\n"
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/registry.py", line 460, in is_multimodal_model\n'
        "    model_cls, _ = self.inspect_model_cls(architectures)\n"
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/registry.py", line 372, in _raise_for_unsupported\n'
        "ValueError: Model architectures ['Qwen2ForCausalLM'] failed to be inspected.",
        "trace",
        [VT_INSPECT],
        V + "14475",
        "exact error -> Model failed to be inspected",
    ),
    T(
        "ValueError: Attempting to unscale FP16 gradients.\n"
        "使用2块V100GPU 训练LLaMA-13B模型曝出错误ValueError: Attempting to unscale FP16 gradients.\n"
        '  File "finetune.py", line 271, in <module>\n    trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)\n'
        '  File ".../transformers/trainer.py", line 1973, in _inner_training_loop\n    self.scaler.unscale_(self.optimizer)\n'
        '  File ".../torch/cuda/amp/grad_scaler.py", line 210, in _unscale_grads_\n'
        "ValueError: Attempting to unscale FP16 gradients.",
        "mixed",
        [PF_FP16],
        G + "Facico/Chinese-Vicuna/issues/168",
        "LoRA finetune with fp16 Trainer -> ValueError: Attempting to unscale FP16 gradients",
        lang="zh",
    ),
    T(
        "[Usage] ValueError: Attempting to unscale FP16 gradients\n"
        "Command:\npython llava/train/train.py --lora_enable True --model_name_or_path ./weights/vicuna-7b-v1.3 --version v1 --fp16 True --per_device_train_batch_size 1 --gradient_accumulation_steps 1 --learning_rate 2e-4 --tf32 False --model_max_length 2048 --gradient_checkpointing True",
        "en",
        [PF_FP16],
        G + "haotian-liu/LLaVA/issues/363",
        "LoRA + --fp16 -> ValueError: Attempting to unscale FP16 gradients",
    ),
    T(
        "LoRA for SequenceClassification models do not save output layer weights\n"
        "When using PEFT with a `LoraConfig` to train a SequenceClassification model there should be a way to save the adapter weight matrices added by LoRA inside the attention blocks, as well as the classification head added for the classification task.\n"
        "After training the model, the `save_pretrained` method produces an `adapter_model.bin` that only contains the weight matrices for the attention blocks. The weights for the classification head are not included.\n"
        "peft 0.2.0, transformers 4.24.0",
        "en",
        [PF_RANDINIT],
        G + "huggingface/peft/issues/310",
        "classification head not saved -> Randomly initialized layers (modules_to_save)",
    ),
    T(
        "Performance of Reloaded Models are Much Worse than the Fine-Tuned Model\n"
        "I fine-tuned LlamaForSequenceClassification with LoRA; the test loss right after training is good, but after save_pretrained and loading the adapter again the model performs much worse.",
        "en",
        [PF_RANDINIT, PF_BAD],
        G + "huggingface/peft/issues/876",
        "reloaded seq-cls model worse -> Randomly initialized layers (the maintainer's answer) / Bad results from a loaded PEFT model",
        doubt="first message paraphrased from the title and the later comments; the user never mentions the head himself",
    ),
    T(
        "RuntimeError: CUDA error: device-side assert triggered\n"
        "I am facing the following error:\nRuntimeError: CUDA error: device-side assert triggered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
        'when try to run the Minimal Start Code by doing little modification (ClassificationModel with custom labels ["true", "false", "neutral"]).',
        "trace",
        [TF_ASSERT],
        G + "ThilinaRajapakse/simpletransformers/issues/1249",
        "device-side assert while fine-tuning a transformers classifier -> CUDA error: device-side assert triggered",
    ),
    T(
        "why always raise this error: RuntimeError: CUDA error: device-side assert triggered\n查了好多资料，有人说是标签超出范围，但是我查了标签页没有问题啊，",
        "mixed",
        [TF_ASSERT],
        G + "chenyuntc/simple-faster-rcnn-pytorch/issues/198",
        "generic device-side assert -> CUDA error: device-side assert triggered (run on CPU / CUDA_LAUNCH_BLOCKING)",
        doubt="the page is transformers'; the advice is generic and the user names no framework (seeds have no such section)",
        lang="zh",
    ),
    T(
        '"Connection error, and we cannot find the requested files in the cached path."\n'
        "ValueError: Connection error, and we cannot find the requested files in the cached path. Please try again or make sure your Internet connection is on.",
        "trace",
        [TF_FIREWALL],
        G + "lixin4ever/BERT-E2E-ABSA/issues/30",
        "exact error -> Firewalled environments (offline mode)",
    ),
    # ---------------- answerable, written ----------------
    W(
        "vllm serve Llama-3-8B on a single 24GB 4090 -> torch.OutOfMemoryError at startup. what can I turn down?",
        "en",
        [VT_OOM, VC_TITLE, VC_CTX, VC_GRAPHS, VC_QUANT, VC_TP],
        "vLLM OOM -> Out of memory, which points to the conserving-memory page (any of its OOM options accepted)",
    ),
    W(
        "ImportError: cannot import name 'Qwen2_5_VLForConditionalGeneration' from 'transformers'",
        "trace",
        [TF_IMPORT],
        "new model class missing -> ImportError (upgrade transformers)",
    ),
    W(
        "ValueError: Unrecognized configuration class <class 'transformers.models.t5.configuration_t5.T5Config'> for this kind of AutoModel: AutoModelForCausalLM. 怎么解决",
        "trace",
        [TF_UNRECOG],
        "-> ValueError: Unrecognized configuration class XYZ for this kind of AutoModel",
        lang="mixed",
    ),
    W(
        "bert分类，batch推理时短句补了pad，结果跟单条推理不一样？attention_mask要自己传吗",
        "zh",
        [TF_PAD],
        "-> Incorrect output when padding tokens aren't masked",
        lang="zh",
    ),
    W(
        "lora训完用get_peft_model加载adapter，效果跟没训练一样",
        "zh",
        [PF_LOADED, PF_BAD],
        "loading a trained adapter with get_peft_model -> Incorrectly loaded model",
        lang="zh",
    ),
    W(
        "added special tokens + resized embeddings before LoRA training, now loading the adapter gives size mismatch for embed_tokens",
        "en",
        [PF_VOCAB],
        "-> Extending the vocabulary (resize base model first, save embedding layer)",
    ),
    W(
        "vllm 0.5.3.post1 偶尔整个卡死 没报错 hang住",
        "zh",
        [VT_KNOWN, VT_LOG],
        "version named in Known Issues (zmq hang) -> Known Issues; Enable more logging accepted",
        lang="zh",
    ),
    W(
        "vllm stuck, no output no error, how do I see where it hangs",
        "en",
        [VT_LOG],
        "-> Enable more logging (VLLM_LOGGING_LEVEL, VLLM_TRACE_FUNCTION)",
    ),
    W(
        "llama lora 每次推理结果都不太一样，merge之后也有点偏差，正常吗",
        "zh",
        [PF_RANDOM],
        "-> Random deviations (eval mode, sampling seed, rounding after merge)",
        lang="zh",
    ),
    W(
        "Trainer CUDA OOM with per_device_train_batch_size=16 on a 3090, how to keep effective batch size",
        "en",
        [TF_OOM],
        "transformers Trainer OOM -> CUDA out of memory (smaller per_device batch + gradient_accumulation_steps)",
    ),
    W(
        "训练的时候显存爆了 CUDA out of memory 怎么办",
        "zh",
        [SEED_OOM, TF_OOM],
        "names no framework -> the seed's OOM FAQ; the transformers OOM section also accepted",
        doubt="near-domain rule: a question naming no framework is answered from the seeds; TF_OOM kept as a second acceptable answer",
        lang="zh",
    ),
    # ---------------- near: GPU training / inference questions the pages do not answer ----------------
    T(
        "[zero3] how to get the model reconstructed for saving?\n"
        "Under zero2 `self.model.state_dict()` returns a fp16 version of the model, under zero3 it returns some placeholder: with all the weights being just `tensor([1.],`, so how can we get the trained model out of deepspeed?",
        "en",
        [],
        G + "deepspeedai/DeepSpeed/issues/872",
        "DeepSpeed ZeRO-3 weight consolidation: nothing on these pages or the seeds",
    ),
    T(
        'binary wheels can fail to install when CUDA_HOME not set: "nvcc not found"\n'
        "Building wheel for flash-attn (setup.py) ... error\n"
        '  File "/tmp/pip-install-56tllxed/flash-attn_e3fae8fde0f54220827a3730f9387260/setup.py", line 249, in run\n'
        '    raise_if_cuda_home_none("flash_attn")',
        "trace",
        [],
        G + "Dao-AILab/flash-attention/issues/447",
        "flash-attn build needs nvcc/CUDA_HOME: not covered",
    ),
    T(
        "Flash-attention Installation Failed\n"
        "Cuda : 12.2, Ubuntu 20.04, Python 3.10.12, Pytorch : 2.0.1+cu117\npip install flash-attn --no-build-isolation\n"
        "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported version by running nvcc -V.\n"
        "torch.__version__  = 2.0.1+cu117",
        "trace",
        [],
        G + "Dao-AILab/flash-attention/issues/597",
        "flash-attn CUDA/nvcc version check: not covered",
        doubt="a 'cuda version mismatch' question; none of the four pages (nor the seeds) covers building CUDA extensions",
    ),
    T(
        "[Bug]: Speculative decoding with a draft model makes generation slower\n"
        "I tried several vLLM versions (0.6.2 and latest 0.7.3) and have consistent speed drop when using speculative decoding with draft model. Main model - 1.7B, speculative model - 135M (SmolLMv2). acceptance rate is very high. Still I get consistent performance drop ~30% when using 5 speculative tokens.",
        "en",
        [],
        V + "15025",
        "vLLM speculative decoding speed: not on these pages",
    ),
    T(
        "[Usage]: speculative model\n"
        "I am curious about the speculative model support in VLLM. I could not find much about speculation in docs, except the following flags: --speculative-model, --num-speculative-tokens. I am curious if this is supported now. And possibly how to use.",
        "en",
        [],
        V + "4266",
        "how to use speculative decoding: not covered",
    ),
    T(
        "[Bug]: Offline inference data parallel significantly slower in 0.8.2 than 0.6.4.post1\n"
        "Running the offline data parallel example with VLLM_DP_RANK / VLLM_DP_SIZE set, the same job takes much longer on 0.8.2 than on 0.6.4.post1.",
        "en",
        [],
        V + "17685",
        "DP throughput regression: not covered",
        doubt="body reduced from the title and the maintainer's reply",
    ),
    W(
        "deepspeed zero3 + cpu offload 训练特别慢，GPU利用率只有20%，正常吗",
        "zh",
        [],
        "DeepSpeed offload speed: not covered (the seeds' GPU-utilisation FAQ is Paddle's and the user names DeepSpeed)",
        doubt="seed 002 has a GPU-utilisation FAQ; DeepSpeed is named so it does not apply",
        lang="zh",
    ),
    W(
        "FSDP vs DeepSpeed ZeRO-3 for a 7B full finetune on 8xA100, which is faster?",
        "en",
        [],
        "framework choice: not covered",
    ),
    W(
        "vllm how to serve several LoRA adapters on one base model (--enable-lora)?",
        "en",
        [],
        "multi-LoRA serving: not on these pages",
    ),
    W(
        "nvcc fatal : Unsupported gpu architecture 'compute_90' when building apex",
        "trace",
        [],
        "building apex for H100: not covered",
    ),
    W(
        "torchrun elastic: worker group restarts 3 times then fails, where is max_restarts set",
        "en",
        [],
        "torchrun elasticity: not covered",
    ),
    W(
        "bitsandbytes load_in_4bit 在 V100 上能用吗",
        "mixed",
        [],
        "bitsandbytes hardware support: no bitsandbytes page in kb9",
        lang="mixed",
    ),
]

L = [
    T(
        "[Usage]: What's the relationship between KV cache and MAX_SEQUENCE_LENGTH.\n"
        "GPU : H100 80G *2\nModel : Llama 3.1 70B\nMAX_SEQUENCE_LENGTH: '20000', MAX_BATCH_SIZE: '4', NUM_GPUS: '2'\n"
        "Initializing an LLM engine (v0.5.4) with config: model='/mnt/models/models--meta-llama--llama-3-1-70b-instruct', dtype=torch.float16, max_seq_len=131072, tensor_parallel_size=2",
        "en",
        [VC_CTX],
        V + "10517",
        "KV cache vs max sequence length -> Context length and batch size",
    ),
    T(
        "`RuntimeError: Cannot re-initialize CUDA in forked subprocess` when initializing vLLM with tensor parallelism\n"
        "import vllm\nmodel_name = '/QwQ-32B/'\nllm = vllm.LLM(model_name, tensor_parallel_size=8)\n"
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method",
        "trace",
        [VC_TP, VT_RTE, VT_MP],
        V + "14535",
        "-> Tensor Parallelism (TP) warning / spawn under `RuntimeError` Exception",
    ),
    T(
        "[Bug]: ValueError: Model architectures ['LlamaForCausalLM'] failed to be inspected\n"
        'ERROR 01-03 09:38:23 registry.py:293]   File "/opt/conda/lib/python3.11/site-packages/vllm-0.6.6.post2.dev29+g6036d4db.d20250103.cpu-py3.11-linux-ppc64le.egg/vllm/model_executor/models/registry.py", line 491, in _run_in_subprocess\n'
        "ERROR 01-03 09:38:23 registry.py:293] RuntimeError: Error raised in subprocess:",
        "trace",
        [VT_INSPECT],
        V + "11715",
        "-> Model failed to be inspected",
    ),
    T(
        "RuntimeError: Failed to infer device type\n"
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/arg_utils.py", line 1074, in create_engine_config\n'
        "    device_config = DeviceConfig(device=self.device)\n"
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/config.py", line 1626, in __init__\n'
        '    raise RuntimeError("Failed to infer device type")\nRuntimeError: Failed to infer device type',
        "trace",
        [VT_DEVICE],
        G + "ai-dynamo/dynamo/issues/391",
        "-> Failed to infer device type",
    ),
    T(
        "[Bug]: High chance of stuck at model download\nvllm serve often gets stuck right after `Starting to load model` while the weights are being pulled from the HF Hub, no progress and no error.",
        "en",
        [VT_DOWNLOAD],
        V + "20891",
        "-> Hangs downloading a model",
        doubt="body reduced to the title plus the symptom",
    ),
    T(
        "[Bug]: Running mistral-large results in an error related to NCCL\n"
        '(VllmWorkerProcess pid=236) ERROR 08-23 08:25:25 multiproc_worker_utils.py:226]     self.NCCL_CHECK(self._funcs["ncclCommInitRank"](ctypes.byref(comm),\n'
        "(VllmWorkerProcess pid=236) ERROR 08-23 08:25:25 multiproc_worker_utils.py:226] RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
        "trace",
        [VT_NCCLSYS, VT_HW],
        V + "7800",
        "-> NCCL error: unhandled system error during ncclCommInitRank",
    ),
    T(
        "Attempting to unscale FP16 gradients Error\n"
        'I am trying to use finetune_lora.sh to lora finetune on Qwen2.5-VL-7B. I am using one 32GB V100 GPU to do this job. it keeps showing the error "Attempting to unscale FP16 gradients". I am using fp16 since V100 GPU doesn\'t support bf16.',
        "en",
        [PF_FP16],
        G + "2U1/Qwen-VL-Series-Finetune/issues/184",
        "-> ValueError: Attempting to unscale FP16 gradients",
    ),
    T(
        "Attempting to unscale FP16 gradients\n"
        "__main__:create_model:96 - Train model with lora\nLoRA target module names: ['gate_proj', 'down_proj', 'v_proj', 'up_proj', 'o_proj', 'k_proj', 'q_proj']\n"
        "trainable params: 35,192,832 || all params: 529,225,600 || trainable%: 6.6499\n"
        "ValueError: Attempting to unscale FP16 gradients.",
        "trace",
        [PF_FP16],
        G + "mst272/LLM-Dojo/issues/11",
        "-> ValueError: Attempting to unscale FP16 gradients",
    ),
    T(
        "Finetuned model does not load trained weights properly, but instead uses random initialization\n"
        "LoRA on LlamaForSequenceClassification (task_type=TaskType.SEQ_CLS). After loading the saved adapter, the score layer still has the random weights it got when the model was built.",
        "en",
        [PF_RANDINIT, PF_BAD],
        G + "huggingface/peft/issues/577",
        "-> Randomly initialized layers (modules_to_save)",
        doubt="first message reconstructed from title and the discussion",
    ),
    T(
        "ValueError: Connection error, and we cannot find the requested files in the cached path. Please try again or make sure your Internet connection is on.",
        "trace",
        [TF_FIREWALL],
        G + "huggingface/sentence-transformers/issues/1030",
        "-> Firewalled environments",
    ),
    T(
        "[Usage]: what is enforce_eager\nvllm 0.4.0, cuda 12.1, 2*v100-16G, qwen1.5 Moe\nwhat is enforce_eager?\nand when it's enabled, will the inference become slower?",
        "en",
        [VC_GRAPHS, VT_GRAPH],
        V + "4449",
        "-> Reduce CUDA Graphs (enforce_eager disables graph capture, trades speed for memory)",
    ),
    T(
        "[Bug]: vllm serve hang at `Using model weights format ['*.safetensors']` when using tp\n"
        "8a100-5:154783:154783 [1] NCCL INFO Channel 14/0 : 1[1] -> 0[0] via P2P/IPC/read\n"
        "8a100-5:154784:154784 [2] NCCL INFO Channel 17/0 : 2[2] -> 1[1] via P2P/IPC/read\n... then nothing",
        "trace",
        [VT_HW, VT_LOADDISK],
        V + "6636",
        "TP hang right after NCCL setup -> Incorrect hardware/driver; Hangs loading a model from disk also accepted",
        doubt="the log stops at weight loading, so loading-from-disk is a fair second reading",
    ),
    T(
        "[Help] About ZERO 3 model saving and loading\n"
        "1. after saving the zero 3 model, there is successful loading several times, but occasionally there is a shape that some weights in the saved model have a shape of 0, resulting in a mismatch when loading, why is this?\n"
        "2. I want to do model parameter merging after saving the model in zero 3 so that I can load the model inference in fewer machines",
        "en",
        [],
        G + "deepspeedai/DeepSpeed/issues/2413",
        "near: DeepSpeed ZeRO-3 checkpoints",
    ),
    T(
        "pip install flash-attn --no-build-isolation出现问题\n已经安装CUDA\nCUDA_HOME系统变量设置正确\n"
        "UserWarning: flash_attn was requested, but nvcc was not found.  Are you sure your environment has nvcc available?",
        "mixed",
        [],
        G + "hpcaitech/Open-Sora/issues/237",
        "near: flash-attn build",
        lang="zh",
    ),
    W(
        "vllm 多模态模型只跑纯文本，怎么不给图片预留显存",
        "zh",
        [VC_MMLIMIT],
        "-> Multi-modal input limits (limit_mm_per_prompt image=0)",
        lang="zh",
    ),
    W(
        "vllm host RAM keeps growing with qwen2.5-vl, mm cache?",
        "en",
        [VC_CACHE],
        "CPU RAM with multimodal cache -> Adjust cache size",
    ),
    W(
        "what does --load-format dummy do in vllm",
        "en",
        [VT_LOADDISK],
        "-> Hangs loading a model from disk (note on dummy format)",
    ),
    W(
        "vllm crash trace ends in self.graph.replay() in model_runner.py",
        "trace",
        [VT_GRAPH],
        "-> Error near self.graph.replay()",
    ),
    W(
        "Model architectures ['MyCustomForCausalLM'] are not supported for now. Supported architectures: [...]",
        "trace",
        [VT_UNSUP],
        "-> Model not supported",
    ),
    W(
        "peft example script crashes with TypeError unexpected keyword argument, old transformers?",
        "en",
        [PF_EXAMPLES],
        "-> Examples don't work (upgrade peft/transformers/accelerate/torch)",
    ),
]


def dump(rows, path, prefix):
    with open(path, "w") as f:
        for i, r in enumerate(rows, 1):
            f.write(json.dumps({"id": f"{prefix}{i:02d}", **r}, ensure_ascii=False) + "\n")


dump(Q, os.path.join(HERE, "questions.jsonl"), "kb9-q")
dump(L, os.path.join(HERE, "labels20.jsonl"), "kb9-l")
with open(os.path.join(HERE, "questions_unlabelled.jsonl"), "w") as f:
    for i, r in enumerate(Q, 1):
        u = {"id": f"kb9-q{i:02d}"}
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
