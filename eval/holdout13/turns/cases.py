# holdout13/turns cases. Section shorthands -> (source, section substring of a seed heading).
S = {
 "util0": ("000_786bff9181b08d52.txt", "GPU的利用率几乎为0"),
 "nccl_so": ("000_786bff9181b08d52.txt", "使用多卡训练报错"),
 "cudnn6": ("000_786bff9181b08d52.txt", "支持使用cuDNN6"),
 "evalmc": ("000_786bff9181b08d52.txt", "GPU多卡情况下加载模型评估结果有误"),
 "cudaver": ("001_4aa700db6d0e07e4.txt", "使用GPU训练时候报错"),
 "selgpu": ("001_4aa700db6d0e07e4.txt", "指定对应的GPU设备"),
 "cpugpu": ("001_4aa700db6d0e07e4.txt", "同时运行在GPU和CPU"),
 "stopgrad": ("002_5c885a5c94776257.txt", "stop_gradient=True的影响范围"),
 "matmul": ("002_5c885a5c94776257.txt", "paddle.matmul和paddle.multiply有什么区别"),
 "inplace": ("002_5c885a5c94776257.txt", "inplace参数的设置会影响梯度回传吗"),
 "freeze": ("002_5c885a5c94776257.txt", "不训练某层的权重"),
 "cpu": ("002_5c885a5c94776257.txt", "利用多处理器进行加速"),
 "nccl": ("002_5c885a5c94776257.txt", "Nccl error"),
 "trainers": ("002_5c885a5c94776257.txt", "Out of all 4 Trainers"),
 "oom": ("002_5c885a5c94776257.txt", "显存不足"),
 "util": ("002_5c885a5c94776257.txt", "提升模型训练时的GPU利用率"),
 "varlen": ("002_5c885a5c94776257.txt", "变长ID"),
 "conv": ("002_5c885a5c94776257.txt", "不收敛"),
 "nan": ("002_5c885a5c94776257.txt", "Loss为NaN"),
 "big": ("002_5c885a5c94776257.txt", "训练后的模型很大"),
 "pyreader": ("002_5c885a5c94776257.txt", "py_reader"),
 "prof": ("002_5c885a5c94776257.txt", "打印模型中每一步的耗时"),
 "clip": ("002_5c885a5c94776257.txt", "梯度裁剪"),
 "vgrad": ("002_5c885a5c94776257.txt", "variable的梯度"),
 "d2": ("003_ba74d700c0e52ec2.txt", "2. 多机多卡训练功能开发"),
 "d21": ("003_ba74d700c0e52ec2.txt", "2.1 准备多机多卡环境"),
 "d22": ("003_ba74d700c0e52ec2.txt", "2.2 导入依赖"),
 "d23": ("003_ba74d700c0e52ec2.txt", "2.3 初始化分布式环境"),
 "d24": ("003_ba74d700c0e52ec2.txt", "2.4 使用数据并行算子封装模型"),
 "d25": ("003_ba74d700c0e52ec2.txt", "2.5 验证多机多卡程序运行正确"),
 "d26": ("003_ba74d700c0e52ec2.txt", "2.6 开发模型推理程序"),
 "faq": ("003_ba74d700c0e52ec2.txt", "3. FAQ"),
 "tfgpu": ("004_c9562597aefa3d00.txt", "enable GPU"),
 "tfram": ("004_c9562597aefa3d00.txt", "管理GPU RAM"),
 "tfdev": ("004_c9562597aefa3d00.txt", "放置node到特定Device"),
 "tfdep": ("004_c9562597aefa3d00.txt", "Control Dependencies"),
}

# Each case: (lang, url, source_kind, turns, note, doubt)
# turns[0] = (query, [expect keys]); later = (query, [expect keys], act)
C = []
def c(lang, url, sk, turns, note, doubt=None):
    C.append((lang, url, sk, turns, note, doubt))

# ---------------- real threads (t1 from the thread; later turns written unless noted) ----------------
c("en", "https://github.com/tensorflow/tensorflow/issues/64284", "thread", [
 ("Allocating all memory, CUDA OOM\nTensorFlow version 1.13, 1.10. Linux Ubuntu 20, Python 3.8, CUDA 11.7, V100 34GB\nTF tries to allocate ALL memory despite not calling any functions that should put any data on the GPU.\n```\ngpus = tf.config.experimental.list_physical_devices('GPU')\nif gpus:\n    for gpu in gpus:\n        tf.config.experimental.set_memory_growth(gpu, True)\n    tf.config.experimental.set_visible_devices(gpus[0], 'GPU')\n```", ["tfram"]),
 ("still grabs everything after set_memory_growth on every gpu, nvidia-smi shows 33800MiB / 34000MiB before the first batch", [], "failed_fix"),
 ("另外 paddle 那边也报 Out of memory error on GPU 0，batch 16 的时候，这个怎么搞", ["oom"], "new_covered"),
 ("没用 还是 oom", [], "failed_fix"),
], "real t1 (title + body trimmed). t2 'still X after Y' on the memory-growth fix -> failed_fix; TF OOM retry after 管理GPU RAM -> [] (holdout12 convention). t3 a complete Paddle OOM question sharing words -> new_covered 显存不足",
 "t2: 显存不足 is Paddle-worded; kept []")

c("en", "https://github.com/tensorflow/tensorflow/issues/2610", "thread", [
 ("per_process_gpu_memory_fraction=1 does not allocate all of the memory\nSeeing this on TF 0.8 with a Titan X. If I don't specify gpu_options at all, the memory allocated to TF is 11736MB. If I set per_process_gpu_memory_fraction=1.0, I only get 11127MB allocated. It's a small difference, but enough to make my large model crash, while the default allocations lets it just squeak in.", ["tfram"]),
 ("so allow_growth or the fraction, which one if it's the only job on the card?", ["tfram"], "detail"),
 ("unrelated: tf.Variable(3) under with tf.device('/gpu:0') throws Could not satisfy explicit device specification, how do i fix", ["tfdev"], "new_covered"),
], "real t1 (title + OP). t2 asks about the two options of the shown section -> detail. t3 new self-contained TF question on int variable on GPU -> new_covered 放置node")

c("en", "https://github.com/tensorflow/tensorflow/issues/14085", "thread", [
 ("How can I run a Tensorflow file on GPUs? Error: Cannot assign a device for operation 'eval_step'\n  File \"eval_image_classifier.py\", line 210, in <module>\n    tf.app.run()\n  File \".../tensorflow/contrib/slim/python/slim/evaluation.py\", line 296, in evaluation_loop\n  File \".../tensorflow/python/training/evaluation.py\", line 57, in _get_or_create_eval_step\n    collections=[ops.GraphKeys.LOCAL_VARIABLES, ops.GraphKeys.EVAL_STEP])", ["tfdev"]),
 ("tried allow_soft_placement=True, error gone but log_device_placement shows every op on cpu:0, nothing on gpu", ["tfgpu"], "failed_fix"),
 ("pip list | grep tensorflow\ntensorflow 1.4.0\ntensorflow-gpu 1.4.0", ["tfgpu"], "environment"),
 ("卸了 tensorflow 重装 tensorflow-gpu 1.4 还是只看到 cpu", [], "failed_fix"),
], "real t1 (title + traceback lines). t2 the soft-placement fix 'worked' but reveals no GPU at all -> failed_fix, next section enable GPU. t3 pip list for the same problem, no failure word -> environment (both packages installed: enable GPU)",
 "t2 reports the fix applied plus a new symptom; read as failed_fix")

c("en", "https://github.com/tensorflow/tensorflow/issues/61178", "thread", [
 ("Tensorflow detects GPU but uses only CPU\nTF 2.10, Windows x64, Python 3.8.16, CUDA toolkit 11.2.2, cudnn 8.1.0.77, gtx 1070\n- Gpu is detected\n- Gpu is utilizied with tf.compat.v1.Session\n- Gpu is not used in tf.compat.v1.InteractiveSession\n- Gpu is not used without any session\nI know that, because with gpu time per sample is ~100us, but without 4ms", ["tfgpu", "tfdev"]),
 ("那 windows 上 tf 2.11 以后还能不能用 GPU，听说原生不支持了", [], "new_uncovered"),
 ("thx", [], "thanks"),
], "real t1 (title + 'short problem description'). t2 asks about TF release support on native Windows (not in the documents) -> new_uncovered []. t3 thanks",
 "t1: enable GPU vs 放置node (log_device_placement to see where ops run); t2 could be read as detail, but no section answers it")

c("en", "https://github.com/tensorflow/models/issues/4299", "thread", [
 ("Tensorflow-gpu utilize only CPU\nObject detection, just to insert a video instead of using the webcam\nWindows 10 64 bits, TensorFlow binary v1.8.0\nCUDA: cuda_9.0.176, cuDNN: cudnn-9.0\nTask manager shows CPU at 100% and the GPU idle while detecting.", ["tfgpu"]),
 ("didn't help", [], "failed_fix"),
 ("what about pytorch? torch.cuda.is_available() is True on the same box", [], "new_uncovered"),
], "real t1 (title + template fields). t2 'still X after Y' after the enable-GPU step -> failed_fix, nothing else applies -> []. t3 'what about pytorch?' -> framework not covered -> new_uncovered",
 "t2: 放置node (log_device_placement) could help diagnose")

c("en", "https://github.com/tensorflow/tensorflow/issues/48882", "thread", [
 ("Tensorflow is not detecting GPU but Pytorch is\nI am on Manjaro 5.4.114-1-MANJARO kernel. Pytorch is detecting the GPU and using it while training the model but TensorFlow is not detecting it.", ["tfgpu"]),
 ("tf 2.4.1, python 3.9, cuda 11.2\n| 0  GeForce GTX 1650    Off  | 00000000:01:00.0 Off |   N/A |\n| N/A   45C    P8     3W /  N/A |      4MiB /  3911MiB |      0%      Default |", ["tfgpu"], "environment"),
 ("the dso_loader lines in your answer, which one tells me cudnn is missing?", ["tfgpu"], "detail"),
 ("what about jax, does it use the same cuda libs?", [], "new_uncovered"),
], "real t1 (title + body). names PyTorch but asks about TensorFlow -> covered. t2 versions + nvidia-smi, no failure word -> environment. t3 about the log lines of the shown section -> detail")

c("en", "https://github.com/tensorflow/tensorflow/issues/16894", "thread", [
 ("`control_dependencies` unexpected behavior with tensorflow>=1.3\n```python\nfirst_op = custom_ops_module.custom_first(features_v)\nwith tf.control_dependencies([first_op]):\n    second_op = tf.reshape(custom_ops_module.custom_second(), [480, 220, 220, 1])\n\nfor i in range(5):\n    sess.run(second_op)\n```\nAccording to the doc of control dependencies, second_op will only run after first_op has executed. However, this is not true for tensorflow 1.3+ when the ops are customized cpp codes.", ["tfdep"]),
 ("so the dependency only applies to ops created inside the with block? custom_second() is created inside tho", ["tfdep"], "detail"),
 ("另外 loss nan 怎么办，第二个 epoch 开始就 nan", ["nan"], "new_covered"),
], "real t1 (title + describe the problem). t2 question about how the shown mechanism applies -> detail. t3 new covered problem (no framework named -> documents) -> new_covered Loss为NaN")

c("en", "https://github.com/tensorflow/tensorflow/issues/10860", "thread", [
 ("control_dependencies possibly broken\n```\nx = tf.Variable(1.0, dtype=tf.float32, name='x')\ny = tf.Variable(10., dtype=tf.float32, name='y')\nupdate_x = tf.assign(x, y)\nwith tf.control_dependencies([update_x]):\n    update_y = tf.assign(y, x * y)\nupdate_op = tf.group(update_x, update_y)\n```\n1.0.1 -> 100.0 10.0\n1.2.0 -> 28.0 5.5\nsuggesting that the control dependencies are not used as expected in version 1.2.0.", ["tfdep"]),
 ("nope, same numbers", [], "failed_fix"),
 ("is there someone from the team I can talk to? 有人工吗", [], "person"),
], "real t1 (title + code + results). t2 'still X' after following the shown pattern -> failed_fix [] (no other section). t3 asks for a person")

c("zh", "https://github.com/PaddlePaddle/Paddle/issues/48421", "thread", [
 ("多卡报错Retry to connect to 0.1.68.146:63314 while the server is not yet listening.\n安装的paddle是支持多卡的，但是在多卡的时候一直报错不往下进行\npython -m paddle.distributed.launch train.py --config configs/segformer/segformer_b5_cityscapes_1024x1024_160k.yml --do_eval\nI1127 21:31:55.544849 3935673 tcp_utils.cc:181] The server starts to listen on IP_ANY:63314\nI1127 21:34:05.015228 3935673 tcp_utils.cc:107] Retry to connect to 0.1.68.146:63314 while the server is not yet listening.", ["d21", "faq"]),
 ("ping 本机是通的，hostname -i 出来就是 0.1.68.146 这个很奇怪", ["d25"], "failed_fix"),
 ("ok 加了 --ips=127.0.0.1 跑起来了 谢谢", [], "thanks"),
], "real t1 (title + body + log). network / hang -> 2.1 (connectivity) or 3. FAQ (hang). t2 reports what was checked, no failure word -> failed_fix (plan's report); excluding t1's sections, 2.5 shows launch with explicit --ips. t3 thanks",
 "t1 single machine: 2.1 is about two machines; t2 expect 2.5 is a stretch, [] defensible")

c("zh", "https://github.com/PaddlePaddle/Knover/issues/82", "thread", [
 ("想问下分布式训练有什么特殊设置吗，单机多卡可以跑通，多机多卡可以建立通信但是不报错也不训练\n配置里按照paddle分布式教程设置为：distributed_args=\"--ips 10.130.19.203,10.130.17.157 --selected_gpus 0,1\"，两台机器可以建立通信但是不开始训练，GPU每张卡有2g内存占用", ["faq"]),
 ("W0918 15:41:50.323863 21635 nccl_context.cc:142] Socket connect worker 10.130.17.157:6070 failed, try again after 3 seconds.\nW0918 15:41:53.324177 21635 nccl_context.cc:142] Socket connect worker 10.130.17.157:6070 failed, try again after 6 seconds.\nI0918 15:42:20.325516 21635 nccl_context.cc:189] init nccl context nranks: 4 local rank: 0 gpu id: 0 ring id: 0", ["faq", "d21"], "environment"),
 ("GLOG_v=3 打开以后日志刷屏 要看哪几行", ["faq"], "detail"),
 ("另外 训练完只在 rank 0 上保存模型就行吗", ["d26"], "new_covered"),
], "real t1 (title + OP); t2 is the OP's log from a later comment (pasted, no failure word) -> environment. t3 question about the shown env var -> detail. multi-node hang -> 3. FAQ")

c("zh", "https://github.com/PaddlePaddle/Paddle/issues/12537", "thread", [
 ("Paddle多机分布式训练出错\n按照 cluster_quick_start 文档操作，单机训练可以有结果，多机训练时出错：\nF0720 09:45:08.417428   591 grpc_client.cc:276] Send name:[fc_0.b_0@GRAD.trainer_1], ep:[ps1.paddlepaddle.com:6174] meets grpc error:Deadline Exceeded\n我是在docker里面进行操作的，启用了4个docker实例，模拟4个主机。", ["d21"]),
 ("4个 docker 之间互相 ping 都是通的，6174 端口也开着", ["faq"], "failed_fix"),
 ("还是 Deadline Exceeded", [], "failed_fix"),
 ("k8s 上部署 paddle 多机训练有 operator 吗", [], "new_uncovered"),
], "real t1 (title + body + error). multi-machine connection timeout -> 2.1 (check connectivity). t2 report of checks done, no failure word -> failed_fix; next: 3. FAQ (read the logs). t3 k8s -> new_uncovered",
 "t1 is parameter-server mode (grpc), documents describe collective; 2.1 still the nearest. t2 3. FAQ weak")

c("zh", "https://github.com/PaddlePaddle/Paddle/issues/17399", "thread", [
 ("cudnn更新后paddle匹配的问题\n服务器版本的paddle需要小升级cudnn从7.0更新到7.3，cudnn7.3已经配上了，环境变量也进行了修改，但是运行paddle.fluid.install_check.run_check()遇到如下问题：\nW0514 20:15:02.786365  6891 device_context.cc:261] Please NOTE: device: 0, CUDA Capability: 35, Driver API Version: 9.0, Runtime API Version: 9.0\nW0514 20:15:02.798928  6891 device_context.cc:269] device: 0, cuDNN Version: 7.0.\npaddle.fluid.core.EnforceNotMet: Invoke operator fill_constant error.", ["cudnn6", "cudaver"]),
 ("还是不行", [], "failed_fix"),
 ("换个问题 机器4张卡 我只想用2号3号训练 怎么指定", ["selgpu"], "new_covered"),
], "real t1 (title + body + log). cuda/cudnn version support -> 000 cuDNN6 section (supported combos, build from source) or 001 CUDA version section. t2 'still X after Y' -> failed_fix, both excluded -> []. t3 new covered question -> 指定对应的GPU设备",
 "t1 neither section is about a cuDNN upgrade exactly")

c("zh", "https://github.com/PaddlePaddle/Paddle/issues/42566", "thread", [
 ("paddle whl安装成功，运行测试程序报错\nW0507 15:06:34.751360 39714 device_context.h:397] WARNING: device: 0. The installed Paddle is compiled with CUDNN 7.6, but CUDNN version in your machine is 7.5, which may cause serious incompatible bug. Please recompile or reinstall Paddle with compatible CUDNN version.", ["cudnn6", "cudaver"]),
 ("我没有更换 cudnn 的权限，之前是可以正常使用的，突然出现这个问题的", [], "failed_fix"),
 ("那用 docker 镜像跑是不是就不受宿主机 cudnn 影响了", [], "new_uncovered"),
], "real t1 (title + warning line). version mismatch -> cuDNN6 section (recompile) / 001 CUDA version. t2 is the OP's later comment: can't do the fix -> failed_fix []. t3 docker -> not covered -> new_uncovered",
 "t3 could be read as detail on the same problem; no section answers docker")

c("zh", "https://github.com/PaddlePaddle/PaddleSeg/issues/3494", "thread", [
 ("单机多卡训练时报错\n环境：ubuntu20.04 cuda：11.7 6卡 4090 paddleseg 2.8.0 paddlepaddle 2.5.1 python 3.8\nexport CUDA_VISIBLE_DEVICES=0,1,2,3,4,5\npython -m paddle.distributed.launch tools/train.py --config configs/quick_start/pp_liteseg_optic_disc_512x512_1k.yml --do_eval --use_vdl\n训练时报错：Call paddle.distributed.init_parallel_env first to initialize the distributed environment.\nLAUNCH ERROR 2023-09-11 14:55:20,499 Container failed !!!\nContainer rank 1 status failed ... code 1 log log/workerlog.1", ["d23"]),
 ("workerlog.1 里面是 OSError: (External) NCCL error(2), unhandled system error.", ["nccl", "faq"], "environment"),
 ("nccl-tests 的 all_reduce_perf 也挂了，重装了 nccl 2.12 还是一样", [], "failed_fix"),
 ("没用", [], "failed_fix"),
], "real t1 (title + env + command + error lines). error names init_parallel_env -> 2.3. t2 per-card log pasted, no failure word -> environment; the log shows NCCL -> Nccl error / 3. FAQ. t3 'still' after NCCL Tests + reinstall (the Nccl error fix) -> failed_fix; Nccl error and 3. FAQ excluded -> []",
 "t1: Out of all 4 Trainers also fits (a rank failed, see its log)")

c("zh", "https://github.com/PaddlePaddle/Paddle/issues/29160", "thread", [
 ("多卡训练的时候报错\n单卡训练的时候可以，我一旦使用多卡训练就会报错，我的使用方式是这样的。\n# 第2处改动，初始化并行环境\ndist.init_parallel_env()\n# 第3处改动，增加paddle.DataParallel封装\nnet = paddle.DataParallel(net)\n具体的报错我没截图下来，好像是说dist的初始化那里出错了", ["d23", "d25"]),
 ("启动命令就是 python train.py，多卡是不是要用 launch 启动", ["d25"], "detail"),
 ("另外 只想训练 head，backbone 的权重不动，怎么设置", ["freeze"], "new_covered"),
], "real t1 (title + body). init error -> 2.3; the usual cause is the launch command -> 2.5. t2 (the maintainer's question answered by the user, written) asks about launching -> detail 2.5. t3 new covered question -> 不训练某层的权重")

c("zh", "https://github.com/PaddlePaddle/PaddleOCR/issues/9514", "thread", [
 ("关于AttributeError: module 'paddle.distributed' has no attribute 'init_parallel_env'错误\nAiStudio里面运行的 请问一下这个错误怎么解决", ["d23", "d22"]),
 ("AI Studio 上 paddle.__version__ 是 1.8.4", ["d23", "d22"], "environment"),
 ("AI Studio 的免费 GPU 算力卡怎么领，一天能用几个小时", [], "new_uncovered"),
], "real t1 (title + body). names init_parallel_env -> 2.3 (and 2.2 import). t2 version for the same problem -> environment. t3 product question (AI Studio quota) -> new_uncovered",
 "t1: the real cause is an old Paddle version; no section says so")

c("zh", "https://github.com/PaddlePaddle/Paddle/issues/28418", "thread", [
 ("paddle2.0rc动态图多卡训练问题\n单机4卡环境，paddle1.8版本能够多卡训练，换成2.0rc后，模仿动态图的paddleseg改写部分代码，训练自己的模型时，发现不能使用多卡。\nnranks = paddle.distributed.ParallelEnv().nranks\nlocal_rank = paddle.distributed.ParallelEnv().local_rank\n结果为1，0", ["d25", "d23"]),
 ("没用", [], "failed_fix"),
 ("换个问题，静态图里想看某个中间变量的梯度值，怎么 fetch 出来", ["vgrad"], "new_covered"),
], "real t1 (title + body). only one card used -> 2.5 (launch) / 2.3 (init). t2 'still' after launch -> failed_fix, both excluded -> []. t3 new covered question -> variable的梯度",
 "t2: 2.4 (DataParallel wrap) could be argued")

c("zh", "https://github.com/PaddlePaddle/PaddleSlim/issues/473", "thread", [
 ("预训练模型的量化压缩\n目前想要把PaddleClas中ResNet50_vd_ssld的预训练模型进行量化并评估，请问大致的方法思路是怎么样的呢？谢谢！", ["big"]),
 ("PaddleSlim 量化完模型体积大概能小多少，4 倍？", ["big"], "detail"),
 ("量化后的模型怎么用 Paddle Lite 部署到安卓上", [], "new_uncovered"),
], "real t1 (title + body). compress a model -> 训练后的模型很大 (PaddleSlim). t2 about the tool shown -> detail. t3 Paddle Lite deployment -> new_uncovered")

c("zh", "https://github.com/PaddlePaddle/PaddleNLP/issues/5243", "thread", [
 ("[Question]: 已经训练完成的模型如何压缩？\n已经使用UIE小样本训练完成了模型训练，且可以正常预测，现在想压缩模型，有没有单独的压缩办法，我看在训练时加上 --do_compress可以压缩，但是我不想重复一遍训练过程。", ["big"]),
 ("不想重新训一遍，PaddleSlim 有没有不用训练的办法", [], "failed_fix"),
 ("压缩后 CPU 上推理能快多少，怎么看每个算子的耗时", ["prof"], "new_covered"),
 ("enable_profile 开了 没看到任何输出", [], "failed_fix"),
], "real t1 (title + body, trimmed). t2 'can't do X, any other way?' -> failed_fix; 训练后的模型很大 excluded -> []. t3 complete question on per-op timing that shares words -> new_covered 打印模型中每一步的耗时",
 "t2 could be read as detail (asks about PaddleSlim, the tool shown); [] either way if retry")

c("en", "https://github.com/PaddlePaddle/Paddle/issues/2379", "thread", [
 ("Threaded MKL for paddle\nI read the cblas.cmake in the paddle and found that paddle make use of libmkl_sequential.so which means that all the matrix operation on CPU are done by one core (in one trainer). I am currently using the CPU of Intel Phi which contains 256 cores. The 128G memory cannot hold 256 trainers if I want make use of all computing resources.", ["cpu"]),
 ("and the DataLoader part, how many num_workers would you use for 256 cores?", ["cpu"], "detail"),
 ("also on our gpu box GPU util sits at 30% during training, how to raise it", ["util", "util0"], "new_covered"),
], "real t1 (title + body, trimmed). CPU multi-core -> 利用多处理器进行加速. t2 about DataLoader in the shown answer -> detail. t3 new covered question -> 提升模型训练时的GPU利用率 (or GPU的利用率几乎为0)")

c("zh", "https://github.com/PaddlePaddle/Paddle/issues/72102", "thread", [
 ("mac 上训练模型\n在mac studio上训练模型，只利用到了一个cpu核心\npaddle.utils.run_check()验证只检测到一个核心\nPaddlePaddle works well on 1 CPU.\n3.0.0最新版，mac studio 是96G 12核cpu", ["cpu"]),
 ("mac 上有 MKL 版的 paddle 包吗 我是直接 pip install paddlepaddle 的", ["cpu"], "detail"),
 ("那 M2 的 GPU（mps）paddle 能用吗", [], "new_uncovered"),
], "real t1 (title + body + later comments). one CPU core used -> 利用多处理器进行加速. t2 about the MKL package in the answer -> detail. t3 Apple GPU not covered -> new_uncovered")

c("en", "https://github.com/PaddlePaddle/Paddle/issues/16279", "thread", [
 ("Total CPU Cores are 50% only utilized\nEnvironment : PaddlePaddle Docker Image, Python 2.7, Intel(R) Xeon(R) CPU E5-2630 v4, 40 logical cores\nwith_mkl: ON, with_mkldnn: ON\nProblem: We are able to use only 50% of total logical cpu cores. The logic to set number of threads in paddle/v2/__init__.py set_env_vars(trainer_count) returns only 50% of the total logical cores.", ["cpu"]),
 ("no change", [], "failed_fix"),
 ("ok thx, will try ParallelExecutor", [], "thanks"),
], "real t1 (title + env + problem, trimmed). t2 'still X after Y' -> failed_fix []. t3 thanks")

c("en", "https://github.com/tensorflow/tensorflow/issues/19368", "thread", [
 ("tf.control_dependencies fails to update the dependent op.\nTF r1.8, P5000\n```\na = tf.constant([1.], tf.float32)\nmean_a, mean_a_uop = tf.metrics.mean(a)\nwith tf.control_dependencies([mean_a_uop]):\n  mean_a = tf.identity(mean_a)\n```\nTwo snippets believed to be equivalent output totally different results.", ["tfdep"]),
 ("why does it need tf.identity there? in your example the ops are tf.constant created inside the block", ["tfdep"], "detail"),
 ("btw I run 2 scripts on the same P5000 and the second one crashes with CUDA_ERROR_OUT_OF_MEMORY", ["tfram"], "new_covered"),
], "real t1 (title + env + code, trimmed). t2 about the example in the shown section -> detail. t3 new covered problem (two processes on one card) -> 管理GPU RAM")

c("en", "https://github.com/tensorflow/tensorflow/issues/38556", "thread", [
 ("Can not create control inputs with tf.control_dependencies\n```\na = tf.get_variable('a', shape = [2, 3])\nb = tf.get_variable('b', shape = [2, 3])\nc = tf.scalar_mul(2, a)\nd = tf.scalar_mul(3, b)\nwith tf.control_dependencies([d, c]):\n  f = d-c\nprint (f.op.control_inputs)\n```\nIt returned `[]`. So does tf.control_dependencies() create control dependencies?", ["tfdep"]),
 ("still []", [], "failed_fix"),
 ("另外 tf serving 部署的时候 warmup 文件怎么配", [], "new_uncovered"),
], "real t1 (title + code). t2 bare 'still X' -> failed_fix []. t3 serving -> new_uncovered")

c("en", "https://github.com/tensorflow/tensorflow/issues/16766", "thread", [
 ("with tf.control_dependencies fails on return\nfails\n  with tf.control_dependencies([check_num_pnt]):\n      out_feat = seg_sum\n  return out_feat\nworks\n  with tf.control_dependencies([check_num_pnt]):\n      out_feat = seg_sum * 1.0\n  return out_feat\nIt runs through but does not do the check.", ["tfdep"]),
 ("so tf.identity(seg_sum) inside the block is the proper way?", ["tfdep"], "detail"),
 ("how can I see which device each op actually got placed on? cpu or gpu", ["tfdev"], "new_covered"),
], "real t1 (title + OP + follow-up line). t2 about the shown mechanism -> detail. t3 new covered question -> 放置node (log_device_placement)")

# ---------------- written (engineer chat style) ----------------
c("zh", "", "written", [
 ("训练到第3个epoch显存爆了 Out of memory error on GPU 0, batch 32", ["oom"]),
 ("still oom after batch 8", [], "failed_fix"),
 ("还是不行", [], "failed_fix"),
 ("|   0  Tesla T4   Off  | 00000000:00:04.0 Off |    0 |\n| N/A   62C    P0    70W /  70W |  15079MiB / 15109MiB |    100%      Default |", ["oom"], "environment"),
], "OOM -> 显存不足. t2/t3 failures of its steps -> failed_fix []. t4 nvidia-smi line, no failure word -> environment (same problem, 显存不足)",
 "t4: environment after two failures; expect keeps 显存不足 since it is not a retry turn")

c("mixed", "", "written", [
 ("nccl timeout help, 单机 8卡 A100, 跑到 step 2000 左右卡住然后 NCCL timeout 退出", ["nccl", "faq"]),
 ("NCCL_DEBUG=INFO 打开了，没看到 WARN，就是卡住", [], "failed_fix"),
 ("tried that, same error", [], "failed_fix"),
 ("有没有人工可以帮看下", [], "person"),
], "NCCL timeout/hang -> Nccl error or 3. FAQ. t2 report that the FAQ step gave nothing -> failed_fix []. t3 bare retry. t4 person")

c("en", "", "written", [
 ("libnccl.so: cannot open shared object file when starting fluid ParallelExecutor on 2 gpus", ["nccl_so"]),
 ("find / -name libnccl.so* returns nothing", ["nccl"], "failed_fix"),
 ("installed nccl 2.4 from nvidia, which path goes into LD_LIBRARY_PATH, the lib dir?", ["nccl_so"], "detail"),
], "t1 -> 000 使用多卡训练报错. t2 report of the shown step with no result -> failed_fix; next: Nccl error (install NCCL from NVIDIA). t3 asks about LD_LIBRARY_PATH from the first answer -> detail",
 "t3 detail about the first answer rather than the retry's answer")

c("zh", "", "written", [
 ("loss 跑着跑着就 nan 了，lr 0.01 adam", ["nan"]),
 ("grad_clip 设多少合适 1.0 还是 5.0", ["clip"], "new_covered"),
 ("加了 ClipGradByGlobalNorm(1.0) 还是 nan", ["conv"], "failed_fix"),
 ("还是不行", [], "failed_fix"),
], "NaN -> Loss为NaN. t2 complete question on clipping, another section -> new_covered 梯度裁剪. t3 'still X after Y' -> failed_fix; NaN and clipping excluded -> 不收敛 (lr, gradients)",
 "t2 could be read as detail on the NaN problem; the section shown does not mention clipping")

c("mixed", "", "written", [
 ("paddle 怎么只用 2号卡 训练, 机器上4张 V100", ["selgpu"]),
 ("那 windows 呢", ["selgpu"], "detail"),
 ("tf 里同样的需求，只让进程看到一张卡怎么写", ["tfram"], "new_covered"),
 ("k8s 的 pod 里 nvidia.com/gpu: 1 要怎么写", [], "new_uncovered"),
], "t1 -> 指定对应的GPU设备. t2 elliptical 'that on windows?' about the shown answer -> detail. t3 complete TF question sharing words -> new_covered 管理GPU RAM (CUDA_VISIBLE_DEVICES)",
 "t3: 放置node (tf.device) also plausible")

c("zh", "", "written", [
 ("GPU 利用率一直 0%，显存倒是占了 3G，fluid 1.x", ["util0", "util"]),
 ("数据是从 hdfs 读的 会不会是这个原因", ["util0", "util"], "detail"),
 ("没用", [], "failed_fix"),
], "low util -> GPU的利用率几乎为0 / 提升GPU利用率. t2 question about the cause in the answer -> detail. t3 'still X after Y' -> failed_fix; both excluded -> []")

c("en", "", "written", [
 ("how do i freeze the backbone in paddle 2.x, only train the fc head", ["freeze"]),
 ("if I set stop_gradient=True on the backbone output, does that stop all the layers before it too?", ["stopgrad"], "new_covered"),
 ("and inplace ops like relu_ in between, do they break the gradient?", ["inplace"], "new_covered"),
], "t1 -> 不训练某层的权重. t2/t3 complete questions answered by other 002 sections, sharing words -> new_covered",
 "t2 close to detail (same goal of freezing)")

c("zh", "", "written", [
 ("paddle.matmul 和 paddle.multiply 啥区别", ["matmul"]),
 ("那 * 号呢 a*b 算哪个", ["matmul"], "detail"),
 ("另外 inplace 的 op 会不会把梯度断掉", ["inplace"], "new_covered"),
 ("thx", [], "thanks"),
], "t1 -> matmul vs multiply. t2 elliptical question about the answer -> detail. t3 thanks")

c("mixed", "", "written", [
 ("ABORT!!! Out of all 8 trainers, the trainer process with rank=[5] was aborted. Please check its log.", ["trainers", "d25"]),
 ("log 在哪看 没设 log_dir", ["d25", "trainers"], "detail"),
 ("workerlog.5:\nResourceExhaustedError: Out of memory error on GPU 5. Cannot allocate 1.200000GB memory on GPU 5", ["oom"], "environment"),
 ("另外 单卡跑的时候 GPU 利用率只有 20% 怎么提上去", ["util", "util0"], "new_covered"),
], "t1 -> Out of all 4 Trainers / 2.5 (logs). t2 asks where the logs are -> detail (2.5: ./log/workerlog.N). t3 per-card log pasted, no failure word -> environment; the log reveals OOM -> 显存不足 (holdout12 h12c-047 convention)")

c("en", "", "written", [
 ("two machines 2x4 gpus, python -m paddle.distributed.launch --ips=10.0.0.1,10.0.0.2 hangs forever at init nccl context", ["faq", "d21"]),
 ("firewall off on both, ping ok, 0.1ms", ["nccl"], "failed_fix"),
 ("different q: after training which rank should save the inference model, all of them?", ["d26"], "new_covered"),
], "multi-node hang -> 3. FAQ / 2.1. t2 report of checks, no failure word -> failed_fix; next Nccl error (NCCL Tests). t3 new covered question -> 2.6 开发模型推理程序",
 "t2: Nccl error is a guess; [] defensible")

c("zh", "", "written", [
 ("静态图怎么拿某个 variable 的梯度", ["vgrad"]),
 ("fetch_list 里写了 fc_0.w_0@GRAD 报错说找不到这个变量", [], "failed_fix"),
 ("还是找不到", [], "failed_fix"),
 ("另外 load_inference_model 加载的模型能不能接 py_reader 喂数据", ["pyreader"], "new_covered"),
], "t1 -> variable的梯度. t2 the shown method fails -> failed_fix []. t3 new covered question -> py_reader")

c("zh", "", "written", [
 ("预测时想看每个 op 的耗时 有办法吗", ["prof"]),
 ("enable_profile 打开了 输出在哪看", ["prof"], "detail"),
 ("paddle 模型怎么转 onnx 给 tensorrt 用", [], "new_uncovered"),
], "t1 -> 打印模型中每一步的耗时. t2 about the shown API -> detail. t3 ONNX/TensorRT conversion not covered -> new_uncovered")

c("en", "", "written", [
 ("training doesn't converge, val acc stuck at 10% on cifar10, paddle 2.4", ["conv"]),
 ("lr 0.1 sgd, batch 16", ["conv"], "environment"),
 ("no luck", [], "failed_fix"),
], "t1 -> 不收敛. t2 config for the same problem, no failure word -> environment. t3 'still X after Y' -> failed_fix []",
 "t2 could be read as detail; t3 Loss为NaN mentions label mismatch but does not fit a non-NaN loss")

c("zh", "", "written", [
 ("embedding 变长 id 内存占用特别大 怎么办", ["varlen"]),
 ("对 index 排序 具体是啥意思", ["varlen"], "detail"),
 ("另外多卡训练报 Nccl error 怎么处理", ["nccl"], "new_covered"),
 ("paddle serving 部署以后内存也很大 这个怎么排查", [], "new_uncovered"),
], "t1 -> 变长ID. t2 about a step of the answer -> detail. t3 new covered question -> Nccl error")

c("en", "", "written", [
 ("cudnn 6 works with fluid 1.2?", ["cudnn6"]),
 ("how to compile from source then, ubuntu 16.04", ["cudnn6"], "detail"),
 ("what about cuda 10.2 + cudnn 7.6, prebuilt wheel exists?", ["cudnn6"], "detail"),
 ("另外 训练好的模型 100 多 M 太大了 有啥办法压缩", ["big"], "new_covered"),
], "t1 -> 支持使用cuDNN6. t2 follow-up on the build step -> detail. t3 elliptical 'what about X' for the covered framework -> detail",
 "t3: 001 使用GPU训练时候报错 (CUDA version support) also fits")

c("zh", "", "written", [
 ("paddle v2 能不能有的 layer 在 cpu 跑 有的在 gpu 跑", ["cpugpu"]),
 ("fluid 里自动切的话 怎么知道哪个 op 被放到 cpu 上了", ["cpugpu"], "detail"),
 ("tf 里怎么手动把变量固定在 cpu 上", ["tfdev"], "new_covered"),
 ("mindspore 里有类似的自动切换吗", [], "new_uncovered"),
], "t1 -> 同时运行在GPU和CPU. t2 about the fluid behaviour in the answer -> detail. t3 complete TF question sharing words -> new_covered 放置node")

c("mixed", "", "written", [
 ("多卡 eval 结果和单卡不一样, save_params 存的 load_params 读的, 后半个 batch 分数全不对", ["evalmc"]),
 ("还是对不上", [], "failed_fix"),
 ("行吧 谢了", [], "thanks"),
], "t1 -> 000 GPU多卡情况下加载模型评估结果有误. t2 'still X after Y' -> failed_fix []. t3 thanks")

c("en", "", "written", [
 ("TF1.15 grabs 10.9GB of 11GB at tf.Session() even for a tiny model, is that normal?", ["tfram"]),
 ("where do I put gpu_options.allow_growth when using keras model.fit?", ["tfram"], "detail"),
 ("另外 paddle 的 FLAGS_fraction_of_gpu_memory_to_use 是一个意思吗", ["oom"], "new_covered"),
], "t1 -> 管理GPU RAM. t2 about applying the shown option -> detail. t3 question about the Paddle flag, answered by 显存不足 -> new_covered",
 "t3 could be read as an elliptical detail across frameworks")

c("zh", "", "written", [
 ("Nccl error 多卡训练 paddle 2.3", ["nccl"]),
 ("nccl-tests 怎么编译 要不要 MPI=1", ["nccl"], "detail"),
 ("编译完 all_reduce_perf 带宽只有 3GB/s，A100 nvlink 这正常吗", [], "new_uncovered"),
], "t1 -> Nccl error. t2 about the NCCL Tests step -> detail. t3 NVLink bandwidth expectations not covered -> new_uncovered",
 "t3 could be detail (same NCCL Tests); no section answers it")

c("en", "", "written", [
 ("TF 1.x: how can I see which device each op runs on?", ["tfdev"]),
 ("log_device_placement=True prints nothing in jupyter", [], "failed_fix"),
 ("ok found it in the terminal. what about pytorch, is there an equivalent?", [], "new_uncovered"),
], "t1 -> 放置node. t2 the shown option shows nothing -> failed_fix []. t3 'what about pytorch?' -> new_uncovered")

c("zh", "", "written", [
 ("Out of all 4 Trainers 报错 咋整", ["trainers"]),
 ("--log_dir 设了，目录是空的", ["d25"], "failed_fix"),
 ("找到了 log/workerlog.1 里面是 NCCL error(5), invalid usage", ["nccl", "faq"], "environment"),
 ("NCCL_DEBUG=INFO 开了 还是看不出哪里 invalid", [], "failed_fix"),
], "t1 -> Out of all 4 Trainers. t2 the shown step gave nothing -> failed_fix; next 2.5 (default ./log/workerlog.N). t3 log pasted, no failure word -> environment; log shows NCCL -> Nccl error / 3. FAQ")

c("zh", "", "written", [
 ("多机多卡 paddle 要准备什么环境", ["d21", "d2"]),
 ("ping 不通怎么办", ["d21"], "detail"),
 ("另外 多机训练完 推理用的模型存哪张卡上的", ["d26"], "new_covered"),
 ("阿里云 ECS 的安全组要开哪些端口", [], "new_uncovered"),
 ("谢谢", [], "thanks"),
], "t1 -> 2.1 准备多机多卡环境. t2 about the ping check in the answer -> detail. t3 cloud console setting -> new_uncovered. t4 thanks")

c("en", "", "written", [
 ("trainable=False in ParamAttr vs learning_rate=0, any diff for freezing a layer?", ["freeze"]),
 ("does weight decay still change the weights when lr=0?", ["freeze"], "detail"),
 ("btw after unfreezing everything at epoch 5 the loss goes nan, why", ["nan"], "new_covered"),
 ("can i talk to a human pls", [], "person"),
], "t1 -> 不训练某层的权重. t2 about the two options shown -> detail. t3 person")

c("mixed", "", "written", [
 ("训练 loss 一直不降 0.69 左右 二分类", ["conv"]),
 ("你说的检查梯度计算是否正确 具体怎么看梯度", ["vgrad"], "new_covered"),
 ("paddle.static.Print 打出来梯度全是 0", ["stopgrad"], "failed_fix"),
 ("没用", [], "failed_fix"),
], "t1 -> 不收敛. t2 how to inspect gradients -> answered by variable的梯度 -> new_covered (shares words with the answer's step 7). t3 the shown method reveals zero gradients -> failed_fix; next stop_gradient=True的影响范围 (gradients cut upstream)",
 "t2 refers to the answer shown ('你说的'): detail is also a reading; t3 could be environment (a finding, not a failed fix)")

c("zh", "", "written", [
 ("训练的时候 GPU-Util 忽高忽低 0 和 100 来回跳，batch 64，图片在线做增强", ["util", "util0"]),
 ("另外 显存只用了一半 能不能把 batch 加大", ["util"], "detail"),
 ("batch 加到 128 了，还是一样跳", [], "failed_fix"),
 ("cpu 是 8 核的 top 看 python 进程 800%", [], "environment"),
], "t1 -> 提升GPU利用率 / GPU的利用率几乎为0. t2 about the batch_size advice in the answer -> detail. t3 'still X after Y' -> failed_fix []. t4 resource info, no failure word -> environment; after the retry nothing else applies -> []",
 "t4 expect [] because both util sections were already shown and failed")

c("en", "", "written", [
 ("paddle 0.9 on a KVM ubuntu vm, cuda 8.0, paddle_trainer --use_gpu=1 just dies right after start", ["cudaver"]),
 ("so cuda 7.5 is the one to use? the driver is 375", ["cudaver"], "detail"),
 ("also how do I pin it to gpu 1 only with trainer_count=1", ["selgpu"], "new_covered"),
], "t1 -> 001 使用GPU训练时候报错 (CUDA version). t2 about the version advice -> detail. t3 new covered question -> 指定对应的GPU设备")

c("zh", "", "written", [
 ("两台机器 launch 起来之后 第二台一直 server not ready, wait 3 sec to retry", ["d21", "faq"]),
 ("两台都能 ping 通 端口 6070 telnet 也通", ["nccl"], "failed_fix"),
 ("same", [], "failed_fix"),
 ("那 tensorflow 的多机 MultiWorkerMirroredStrategy 呢 也要这么配吗", [], "new_uncovered"),
], "t1 -> 2.1 (connectivity) / 3. FAQ. t2 report of checks with no failure word -> failed_fix; next Nccl error (environment check). t3 TF multi-worker distribution is not in the documents -> new_uncovered",
 "t3 TF is a covered framework but no section covers TF multi-worker; t2 Nccl error is a guess")

# ---------------- followup-only conversations ----------------
c("en", "https://github.com/tensorflow/models/issues/3366", "thread", [
 ("GPU is detected but training starts on the CPU\nI have installed tensorflow-gpu 1.8, validated installation and uses gpu, but the python code, it says using tensorflow as backend, but still CPU memory is 100% and not using GPU.", ["tfgpu"]),
 ("from tensorflow.python.client import device_lib\nprint(device_lib.list_local_devices())\n-> only /device:CPU:0", ["tfgpu"], "environment"),
 ("pip list shows tensorflow 1.8.0 and tensorflow-gpu 1.8.0 both, is that the problem?", ["tfgpu"], "detail"),
 ("ok that was it, thx", [], "thanks"),
], "real t1 (a participant's comment in the thread, as written). t2 device list for the same problem -> environment. t3 question about the install step shown -> detail. t4 thanks")

c("en", "https://github.com/tensorflow/tensorflow/issues/2062", "thread", [
 ("tf.cond not working with depedencies\ntf.cond seems to have a bug if one of the condition have a dependency. (Dependencies are run, whatever tf.cond arg is True or False).\n```\na = tf.Variable(0)\nincr = a.count_up_to(1)\ndef todo_if_true():\n  with tf.control_dependencies([incr]):\n    return tf.identity(a)\n```\nOutput: 1 #But should be 0", ["tfdep"]),
 ("so count_up_to has to be created inside todo_if_true for the dependency to be conditional?", ["tfdep"], "detail"),
], "real t1 (title + body + code, trimmed). t2 about the shown mechanism -> detail")

c("zh", "", "written", [
 ("多卡训练 只想在 0 号卡上保存模型 怎么判断当前是不是第一张卡", ["d26"]),
 ("get_rank() 单卡直接 python train.py 跑的时候返回啥", ["d26"], "detail"),
 ("paddle 2.1.2，4 张 3090，launch 启动的", ["d26"], "environment"),
], "t1 -> 2.6 开发模型推理程序 (save on rank 0). t2 about the API in the answer -> detail. t3 versions, no failure word -> environment")

c("en", "", "written", [
 ("NCCL error on 4 gpus, how do I get more info out of it", ["faq", "nccl"]),
 ("node1:1234:1240 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\nnode1:1234:1240 [0] NCCL WARN Call to connect returned Connection refused", ["faq", "nccl"], "environment"),
 ("the 'NCCL WARN' lines you mean, only the ones tagged WARN?", ["faq"], "detail"),
], "t1 -> 3. FAQ (NCCL_DEBUG) / Nccl error. t2 the NCCL_DEBUG output pasted, no failure word -> environment. t3 about the shown advice -> detail")

c("mixed", "", "written", [
 ("多卡训练 hang 住了 不报错也不动 怎么定位卡在哪", ["faq"]),
 ("GLOG_v=3 和 FLAGS_benchmark=1 是在 launch 前面 export 吗", ["faq"], "detail"),
 ("最后几行:\nI0612 10:02:11.118 12345 operator.cc:180] CUDAPlace(2) Op(c_allreduce_sum), inputs:{X[fc_0.w_0@GRAD:float[1024, 1000]]}", ["faq"], "environment"),
], "t1 -> 3. FAQ (hang). t2 about the env vars shown -> detail. t3 the GLOG output pasted -> environment")

c("zh", "", "written", [
 ("paddle 2.x 显存不够 batch 都已经是 1 了", ["oom"]),
 ("FLAGS_eager_delete_tensor_gb=0.0 这几个 在代码里 os.environ 设置可以吗", ["oom"], "detail"),
 ("好的 谢谢", [], "thanks"),
], "t1 -> 显存不足. t2 how to set the flags shown -> detail. t3 thanks",
 "t1: batch already 1, but the flags in the section still apply")

c("en", "", "written", [
 ("static graph: if I set stop_gradient=True on one layer, what happens to the layers before it", ["stopgrad"]),
 ("and in dygraph, same?", ["stopgrad"], "detail"),
], "t1 -> stop_gradient=True的影响范围. t2 elliptical question about the answer for the other mode -> detail")

c("zh", "https://github.com/PaddlePaddle/Paddle/issues/17217", "thread", [
 ("执行paddle.fluid.install_check.run_check()出错\n用pip install paddlepaddle-gpu装的，ubuntu下python2.7  cuda 9.0 cudnn 7.0", ["cudaver", "cudnn6"]),
 ("W0515 14:12:12.377182  6682 device_context.cc:261] Please NOTE: device: 0, CUDA Capability: 75, Driver API Version: 10.0, Runtime API Version: 9.0", ["cudaver", "cudnn6"], "environment"),
], "real t1 (title + the OP's env comment); t2 a log line from a later comment in the thread, no failure word -> environment. install check failing with CUDA/cuDNN versions -> 001 CUDA version section / 000 cuDNN version support",
 "t1 neither section names run_check")
