# ruff: noqa -- a gatherer's one-off script that wrote the batch, kept as it ran
# Builds questions.jsonl, questions_unlabelled.jsonl and labels20.jsonl for kb10 (RVC WebUI Chinese FAQ).
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
F = "kb10/rvc_faq_cn.md"


def e(sec):
    return {"source": F, "section": sec}


OOM = e("Cuda error/Cuda out of memory")
FF = e("ffmpeg error/utf8 error")
EXP = e("Expecting value: line 1 column 1")
IDX = e("一键训练结束没有索引")
VOICE = e("训练结束推理没看到训练集的音色")
CONN = e("Connection Error")
CLI = e("不用WebUI如何通过命令训练推理")
EPOCH = e("total_epoch调多少比较好")
DUR = e("需要多少训练集时长")
IRATE = e("index rate干嘛用的")
GPU = e("推理怎么选gpu")
RESUME = e("如何中断和继续训练")
E17280 = e("The expanded size of the tensor (17280)")
T24 = e("The size of tensor a (24)")
R = "https://github.com/RVC-Project/Retrieval-based-Voice-Conversion-WebUI/issues/"


def q(n, query, kind, exp, lang, note, doubt=None):
    d = {
        "query": query,
        "kind": kind,
        "expect": exp,
        "url": R + str(n),
        "source_kind": "thread",
        "lang": lang,
        "note": note,
    }
    if doubt:
        d["doubt"] = doubt
    return d


Q = [
    q(
        654,
        "torch.cuda.OutOfMemoryError: CUDA out of memory.\nI'm always getting this error even I downed my settings to the bottom: [screenshot] Here is my settings: [screenshot]",
        "trace",
        [OOM],
        "en",
        "training OOM with lowest settings -> Q8 (lower batch size, <4G VRAM hopeless)",
    ),
    q(
        740,
        "torch.cuda.OutOfMemoryError: CUDA out of memory\n显卡为RTX3060，12GB显存，batch_size设置为默认的6，爆显存了。之后把batch_size调为1依然不行，报错类似。\n(rvc) F:\\AI\\rvc\\Retrieval-based-Voice-Conversion-WebUI>python infer-web.py\n...\n['extract_feature_print.py', 'cuda:0', '1', '0', '0', 'F:\\\\AI\\\\rvc\\\\Retrieval-based-Voice-Conversion-WebUI/logs/ganyu', 'v1']\nload model(s) from hubert_base.pt ...",
        "trace",
        [OOM],
        "zh",
        "爆显存 during training even at batch 1 -> Q8",
        "12GB card: the FAQ's batch-size advice may not be the real fix",
    ),
    q(
        687,
        "Voice changing issue (CUDA out of memory)\nHi I am new to RVC ... when it comes to changing voice, I getting these error: [image] I assume that because my gpu ran out of memory. ... Can I solve the out of memory issue? Was it related to the config.py? Because I did read the faq and I think I need to change some set...",
        "en",
        [OOM],
        "en",
        "inference OOM, asks about config.py -> Q8 (reduce x_pad/x_query/x_center/x_max in config.py)",
    ),
    q(
        494,
        "CUDA out of memory\nI'm having trouble training my model. I always have the same error saying that Cuda used all my GPU's memory. ... my gpu has 4 go of dedicated memory and it has 7.7 go of shared memory; when full, why can't RVC use this shared memory to keep running?",
        "en",
        [OOM],
        "en",
        "4GB GPU training OOM -> Q8 (4G cards: lower batch size)",
    ),
    q(
        945,
        'RuntimeError: CUDA error: out of memory after crash\nI was working to train a new voice model, but something caused my system to completely crash at the 149th epoch, and ever since, when I start it up, I can\'t train any models because I get a "RuntimeError: CUDA error: out of memory" at the start when I try. I\'ve tried setting my batch count to 1 ... updated my Nvidia driver, and restarted my computer\nFile ".../train_nsf_sim_cache_sid_load_pretrain.py", line 228, in run\n    train_and_evaluate(',
        "trace",
        [OOM],
        "en",
        "CUDA error: out of memory in training -> Q8 (Cuda error/Cuda out of memory)",
        "after a crash; resuming from a checkpoint may be the real cause",
    ),
    q(
        766,
        "train help\nim trying to get train to work\nstart preprocess\n['trainset_preprocess_pipeline_print.py', 'C:\\\\Users\\\\44794\\\\Desktop', '40000', '4', 'C:\\\\TCHT\\\\Retrieval-based-Voice-Conversion-WebUI/logs/mi-test', 'False']\nC:\\Users\\44794\\Desktop/error.txt->Traceback (most recent call last):\n  File \"C:\\TCHT\\Retrieval-based-Voice-Conversion-WebUI\\my_utils.py\", line 14, in load_audio\nffmpeg._run.Error: ffmpeg error (see stderr output for detail)\nRuntimeError: Failed to load audio: ffmpeg error (see stderr output for detail)\nC:\\Users\\44794\\Desktop/Retrieval-based Voice Conversion WebUI.lnk->Traceback ...",
        "trace",
        [FF],
        "en",
        "ffmpeg error while preprocessing a folder (the Desktop, with a .lnk and spaces) -> Q1 (audio path problem)",
    ),
    q(
        1320,
        'Problems loading voice file for training\nWhen processing the file this error appears:\nstart preprocess\n/content/drive/MyDrive/dataset/OLAF2.zip->Traceback (most recent call last):\n  File "/content/Retrieval-based-Voice-Conversion-WebUI/my_utils.py", line 134, in load_audio\nffmpeg._run.Error: ffmpeg error (see stderr output for detail)\nRuntimeError: Failed to load audio: ffmpeg error (see stderr output for detail)\nend preprocess\nI need help I\'m blocked!!! please.',
        "trace",
        [FF],
        "en",
        "ffmpeg error on a dataset path (a zip) -> Q1",
    ),
    q(
        388,
        '[help wanted]ffmpeg._run.Error: ffmpeg error (see stderr output for detail)\nTraceback (most recent call last):\n  File "V:\\AI\\Retrieval-based-Voice-Conversion-WebUI\\my_utils.py", line 14, in load_audio\n    ffmpeg.input(file, threads=0)\nffmpeg._run.Error: ffmpeg error (see stderr output for detail)\n  File "V:\\AI\\Retrieval-based-Voice-Conversion-WebUI\\infer-web.py", line 178, in vc_single\n    audio = load_audio(input_audio_path, 16000)\nRuntimeError: Failed to load audio: ffmpeg error (see stderr output for detail)',
        "trace",
        [FF],
        "en",
        "ffmpeg error at inference load_audio -> Q1 (path)",
        "first message not seen in full; text from the thread's log",
    ),
    q(
        1329,
        "Getting failed to load audio error\nI am storing the voice like this: /content/Retrieval-based-Voice-Conversion-WebUI/dataset/alia.wav\nsudo python3 infer-web.py --colab --pycmd python3\nI think it's taking the location fine as it can read up the wav file inside the dataset folder but still getting the error:\nstart preprocess\ndataset/alia.wav->Traceback (most recent call last):\nffmpeg._run.Error: ffmpeg error (see stderr output for detail)",
        "trace",
        [FF],
        "en",
        "ffmpeg error reading the training audio (relative path) -> Q1",
    ),
    q(
        1402,
        "web报错：Expecting value: line 1 column 1 (char 0)\n打开web页面点任意按钮就会报错显示：Expecting value: line 1 column 1 (char 0)\n求助",
        "zh",
        [EXP],
        "zh",
        "exact Q6 symptom (proxy)",
    ),
    q(
        245,
        "分离人声的时候，web右上角报错Expecting value: line 1 column 1 (char 0)",
        "zh",
        [EXP],
        "zh",
        "Q6 symptom; title only (body not in the index)",
    ),
    q(
        938,
        "No .index file added after training\nAs my problem today, my finished model didn't add an .index file. I'm training my Flame Princess Model for almost half an hour in 200 epochs, but my index file is missing. I tried to lower my total_epoch and batch size but still doesn't work, even I pressed the \"Train Feature Index\" for several times...",
        "en",
        [IDX],
        "en",
        "no added index after one-click training -> Q2",
    ),
    q(
        2087,
        "训练完成没有索引问题什么时候能解决\n每次训练完成就这个提示，有模型文件没有索引，点训练索引又提示training，到底什么问题\nkey事件是我在UserWarning: resource_tracker: There appear to be 20 leaked semaphore objects to clean up at shutdown 这个提示之后等了半小时没动静按下的ctrl+c强制结束",
        "mixed",
        [IDX],
        "zh",
        "训练完没有索引 -> Q2 (large training set stalls the add-index step; click 训练索引 again)",
    ),
    q(
        166,
        "训练完没有added_IVF677_Flat_nprobe_7.index和total_fea.npy文件",
        "zh",
        [IDX],
        "zh",
        "title only (body is a screenshot) -> Q2",
    ),
    q(
        2353,
        ".index files not generated.\nI am using the code on a Mac. When i train the model a index file is not generated. Please help guide me if im doing something wrong please guide me.",
        "en",
        [IDX],
        "en",
        "no index file -> Q2",
        "thread's fix was a gradio pin / faiss from conda, not in the FAQ",
    ),
    q(
        859,
        "training stopped mid way by pc turning off how to countinue?\nmy pc turned off in the middle of training and i was on epoch 180 of 250, how can i make rvc train my model from 180?",
        "en",
        [RESUME],
        "en",
        "resume training -> Q13 (same parameters, train again continues from checkpoint)",
    ),
    q(2776, "训练一半中断，下次重新运行，他是重头开始还是接着之前的训练", "zh", [RESUME], "zh", "-> Q13"),
    q(
        1900,
        "双显卡rvc怎么选择用哪个显卡？\n我的电脑有两个显卡1和2，我怎么设置rvc在显卡2上运行？",
        "zh",
        [GPU],
        "zh",
        "choose GPU -> Q11 推理怎么选gpu (config.py device cuda:N)",
    ),
    q(470, "How to change the GPU used by RVC", "en", [GPU], "en", "title only -> Q11 推理怎么选gpu"),
    q(
        112,
        "灵活选择gpu\n在infer阶段，如果有两个以上的gpu，程序会默认选择所有gpu进行推理。这时如果有gpu已经被占用，就会发生内存不足的错误。希望在infer阶段加入选择gpu的选项。",
        "zh",
        [GPU],
        "zh",
        "pick the inference GPU -> Q11 (config.py device)",
        "phrased as a feature request",
    ),
    q(
        2379,
        "“connection errored out”，在推理阶段遇到的，这是什么原因呢？",
        "zh",
        [CONN],
        "zh",
        "Connection errored out -> Q5 (console window closed?)",
        "title only",
    ),
    q(
        2505,
        "Error : Connection Errored Out For Every Operations\nWhile using the WebUI, I find that every buttons on the interface would lead to a connection errored out problem like I never turn on the backend.",
        "en",
        [CONN],
        "en",
        "Q5 symptom",
        "user's own fix was switching browser",
    ),
    q(
        103,
        "有通过命令行实现的模型训练和推理的操作步骤吗？",
        "zh",
        [CLI],
        "zh",
        "-> Q7 不用WebUI如何通过命令训练推理",
        "title only",
    ),
    q(
        1516,
        "能否不使用webui进行推理？(不是训练，就是单纯的改变音色)我想用python代码来自动跑\n如题",
        "zh",
        [CLI],
        "zh",
        "-> Q7 (myinfer.py); a later comment quotes Q7",
    ),
    q(
        264,
        "[bug]找不到推理音色\n重新安装了RVC-beta程序，然后把训练好的模型复制到logs文件夹下，web页面推理音色没有任何模型",
        "zh",
        [VOICE],
        "zh",
        "推理音色为空 -> Q3 (刷新音色)",
        "real cause: model belongs in weights/, not logs/ (Q4 also mentions weights)",
    ),
    q(
        611,
        'cant find inferencing voice\ni put all the settings and used one-click training and i got: "added_IVF985_Flat_nprobe_1_IbrahemHefny_v2.index All processes have been completed!" but i couldnt find the model from the "Inferencing voice" slider even though i found the voice model in the log file\nplease help',
        "en",
        [VOICE],
        "en",
        "-> Q3",
    ),
    q(
        2667,
        "训练结束后, 推理界面没看到训练集的音色文件\n主要是这些文件还都存在, 这些问题都一一已解决了\n但是 web推理界面, 怎么刷新也无济于事\n这就是输出信息:\n(1000, 768),25\ntraining\nadding\n成功构建索引，added_IVF25_Flat_nprobe_1_Mackenzie_v2.index",
        "mixed",
        [VOICE],
        "zh",
        "title is Q3 almost verbatim",
        "user already refreshed",
    ),
    q(
        2186,
        'RuntimeError: The expanded size of the tensor (17280) must match the existing size (16080) at non-singleton dimension 1.\n训练过程报错并中断：\n  File "E:\\BaiduNetdiskDownload\\RVC0813Nvidia\\train_nsf_sim_cache_sid_load_pretrain.py", line 430, in train_and_evaluate\n    wave = commons.slice_segments(\n  File "...\\lib\\infer_pack\\commons.py", line 49, in slice_segments\n    ret[i] = x[i, :, idx_str:idx_end]\nRuntimeError: The expanded size of the tensor (17280) must match the existing size (16080) at non-singleton dimension 1.  Target sizes: [1, 17280].  Tensor sizes: [16080]',
        "trace",
        [E17280],
        "zh",
        "same slice_segments error as Q17 (too-short audio in wavs16k)",
        "existing size 16080 not 0",
    ),
    q(
        2725,
        "Help! <RuntimeError: The size of tensor a (192) must match the size of tensor b (80) at non-singleton dimension 2> What's going on?\nWhen I tried to train again using the completed training file, an error occurred. Could you please tell me, experts, how can I solve this problem? ... I myself can't read code.",
        "trace",
        [T24],
        "en",
        "tensor-size mismatch when training again on a finished experiment -> Q18 (don't change settings mid-way; new experiment name)",
        "numbers differ from the FAQ's 24/16; cause may be v1/v2 rather than sample rate",
    ),
    q(
        396,
        "Default index ratio increased again in latest release - negatively impacting performance for little to no gain?\nI noticed that the default value seems to have changed again. ... 0.75 is probably a good default to stick with, or maybe even revert to 0.6, considering how much the nearly maxed out index seems to cause raspy sounds.",
        "en",
        [IRATE],
        "en",
        "what index rate to use -> Q11 index rate",
    ),
    # near-domain (GPU/training problems the FAQ does not answer)
    q(
        1816,
        "训练模型时GPU不工作(占用为0)|GPU not working during model training\n设备:NVIDIA Geforce RTX 4060 Laptop GPU\n运行RVC WebUI的一键训练,发现CPU占用很高而GPU占用为0,我已反复确认我使用的显卡绑定正确",
        "mixed",
        [],
        "zh",
        "GPU unused during training (torch/CUDA install) - not in FAQ",
    ),
    q(
        1670,
        "我是用RX 7800xt显卡在ubuntu系统下部署了rvc，但是我在训练一个语音模型的时候遇到一个问题。\n当我进行到“训练模型”这一步的时候，出现了[图]，在几秒钟过后，它跑完了一个模型。但是我发现weights文件夹里面没有我训练的模型文件，请问这个是什么问题？",
        "zh",
        [],
        "zh",
        "AMD/ROCm training ends abnormally - not in FAQ",
    ),
    q(
        1249,
        "AMD GPU, AMD Dependancies downloaded | no gpu detected: falling back to cpu\nI am running an Rx6650M on an Omen 16 Laptop. I have downloaded the dml version of RVC ... Whenever I try to train a model, it immediately falls back to CPU.\nruntime\\python.exe infer-web.py --pycmd runtime\\python.exe --port 7897 --dml\nNo supported Nvidia GPU found\nuse DirectML instead\nNO GPU DETECTED: falling back to CPU - this may take a while",
        "trace",
        [],
        "en",
        "DirectML training not supported - not in FAQ",
    ),
    q(
        2569,
        'In AMD graphics card environment, normal model inference cannot be performed（Amd显卡环境下，无法正常模型推理）\n[W:onnxruntime:, session_state.cc:1169 onnxruntime::VerifyEachNodeIsAssignedToAnEp] Some nodes were not assigned to the preferred execution providers ...\n第一次运行出现CPU未被指定问题，而后程序关闭\n在infer/lib/rmvpe.py中第509行添加CPUExecutionProvider: providers=["DmlExecutionProvider","CPUExecutionProvider"]',
        "trace",
        [],
        "mixed",
        "AMD DirectML inference crash - not in FAQ",
    ),
    q(
        1066,
        "Train in directml or just inference ?\nI'm currently upgrading my 3050 8gb and I've a pretty decent deal on an AMD card, Now after supporting directml, Does it used in training also or just inference ?",
        "en",
        [],
        "en",
        "AMD training support - not in FAQ",
    ),
    q(
        1792,
        "low cpu&gpu load also long epoch times\nMy configuration: Intel i9 12900, NVIDIA GeForce GTX 2080 super 8GB, 128.0 GB RAM, cuda 12.1, Windows 10 Pro 22H2, Python 3.8.18, Pytorch 2.1.2\nWhen I start training, each epoch takes about 750~800secs, and also the CPU and CPU loading is just really low.., but the GPU memory is almost used.",
        "en",
        [],
        "en",
        "slow epochs / low utilisation (shared-memory spill) - not in FAQ",
    ),
    q(
        1278,
        "Suddenly-long Epoch Training generation (not from the get-go) (0 NVIDIA GeForce GTX 1050 Ti)\n... during model training, the intervals where the targeted epochs were generating was slowing down majorly. Like even when the computer is on for a whole day the epochs would still be at like the 7 or 8th mark while the target epochs for a model was about 10, 20 or 50 epochs.",
        "en",
        [],
        "en",
        "slow training - not in FAQ",
        "4GB card: could be near-OOM spill, but no OOM error shown",
    ),
    q(
        2061,
        'Long slow epochs loading\nI\'m generally not good at computers. Sorry. please explain the solution in detail how to make the loading faster. I know that it should have been on the order of 20 seconds and 200 epochs should load in 1.5 hours I have already read posts with the same problem and tried to replace "fp16_run": false with true, but it did not give any results.',
        "en",
        [],
        "en",
        "slow epochs (fp16/CPU) - not in FAQ",
    ),
    q(
        1540,
        "Increasing the time it takes to learn the model in one epoch\nThe environment I'm using is CPU : 8core, ram : 40G, GPU : A40, VRAM : 16GB. I'm using RVC on a docker ... it took about 20 seconds per fork ... but yesterday ... it took at least 50 seconds per fork ... it takes 35 seconds per epoch on the 3070 at home but it takes a higher learning time on a better graphics card.",
        "en",
        [],
        "en",
        "epoch time regression on A40 - not in FAQ",
    ),
    q(
        770,
        "how long does trining take\nhow long does training take ? its been 2 hours so far and the dos cursor is just blinky blinky  If is a lot longer no problem ill leave it overnight",
        "en",
        [],
        "en",
        "training duration - FAQ has epochs/data length advice, not time",
        "Q9 total_epoch is adjacent but does not answer how long",
    ),
]

L = [
    q(
        1016,
        'CUDA memory error, not using maximum limit\nProcess Process-1:\nTraceback (most recent call last):\n  File "/home/myst1ck/RVC/Retrieval-based-Voice-Conversion-WebUI/train_nsf_sim_cache_sid_load_pretrain.py", line 456, in train_and_evaluate\n    scaler.scale(loss_gen_all).backward()\nRuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
        "trace",
        [OOM],
        "en",
        "-> Q8",
    ),
    q(
        705,
        'OutOfMemoryError\nWhen I try training it on a 1050, I get the following error, before it fails:\n  File "C:\\TCHT\\Retrieval-based-Voice-Conversion-WebUI\\train_nsf_sim_cache_sid_load_pretrain.py", line 430, in train_and_evaluate\n    y_d_hat_r, y_d_hat_g, _, _ = net_d(wave, y_hat.detach())\n  File "...\\torch\\nn\\parallel\\distributed.py", line 1156, in forward',
        "trace",
        [OOM],
        "en",
        "1050 training OOM -> Q8 (<4G hopeless)",
    ),
    q(
        312,
        "torch.cuda.OutOfMemoryError: CUDA out of memory. help dunno how to fix this\nwhile trying to train a voice it always sends me this message",
        "en",
        [OOM],
        "en",
        "-> Q8",
    ),
    q(
        1106,
        "CUDA out of memory\nWhen I try to train, I get OOM error. Even when I decrease the batch size to 1, I receive this:\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 2.33 GiB already allocated; 1.89 MiB free; 2.35 GiB reserved in total by PyTorch)\nI have a GeForce GTX 1650 GPU with 4MB RAM. Isn't this just enough to make it work?",
        "trace",
        [OOM],
        "en",
        "-> Q8",
    ),
    q(
        893,
        'Failed to load audio\nwas trying to train, got this error. Got any idea ?\nstart preprocess\nC:\\Users\\mypc\\IACHANT\\RVC\\training/faischier.wav->Traceback (most recent call last):\n  File "C:\\Users\\mypc\\iachant\\rvc\\lib\\audio.py", line 14, in load_audio\n    ffmpeg.input(file, threads=0)\nFileNotFoundError: [WinError 2] Le fichier spécifié est introuvable\nRuntimeError: Failed to load audio',
        "trace",
        [FF],
        "en",
        "Failed to load audio in preprocessing -> Q1",
        "WinError 2 usually means ffmpeg.exe is missing, which Q1 does not say",
    ),
    q(
        98,
        "步骤0加载不到音频提示File Not Found\nstart preprocess\n['trainset_preprocess_pipeline_print.py', 'E:\\\\BaiduYunDownload\\\\ayakaVoice', '40000', '12', 'E:\\\\PycharmProjects\\\\Retrieval-based-Voice-Conversion-WebUI/logs/test', 'False']\nE:\\BaiduYunDownload\\ayakaVoice/1.wav->Traceback (most recent call last):\n  File \"...\\my_utils.py\", line 14, in load_audio\n    ffmpeg.input(file, threads=0)\nFileNotFoundError: [WinError 2] 系统找不到指定的文件。",
        "trace",
        [FF],
        "zh",
        "-> Q1 (ffmpeg load_audio)",
        "WinError 2 = ffmpeg missing",
    ),
    q(
        854,
        "Output error for voice training?\nStep 1: Processing data\nC:\\Python310\\python.exe trainset_preprocess_pipeline_print.py C:\\TCHT\\Retrieval-based-Voice-Conversion-WebUI\\opt\\my vocals 40000 6 C:\\TCHT\\Retrieval-based-Voice-Conversion-WebUI/logs/SEn test False\nstep2a:正在提取音高\nStep 2b: Extracting features\nStep 3a: Model training started\nWhat do I need to fix this?",
        "trace",
        [FF],
        "en",
        "dataset path and experiment name contain spaces -> Q1 (paths with spaces)",
        "no ffmpeg error in the first message; later log shows ValueError from the split path",
    ),
    q(
        395,
        'Cannot find .index file even after separate Index training\nI first used the one-click training and it was missing the .index file, so I followed the instructions on other Issues tabs and the wiki. But after training feature index saparately, this happens.\nTraceback (most recent call last):\n  File "...\\gradio\\routes.py", line 321, in run_predict',
        "trace",
        [IDX],
        "en",
        "-> Q2",
    ),
    q(
        2784,
        "cant have feature index file\nim new to this RVC ... i think because of index file because i never have it after i finished the training.... i pressed only one click training ... when i try press train feature index nothing happened or started to process...how can i solve this problem??",
        "en",
        [IDX],
        "en",
        "-> Q2",
    ),
    q(
        1428,
        "train index doesnt do anything\n i click and nothing happens, and I don't have errors in the output. What can I do?",
        "en",
        [IDX],
        "en",
        "-> Q2 (train index step)",
        "Q2 suggests clicking 训练索引 again, which the user did",
    ),
    q(
        712,
        "Can RVC, like training in other fields, support the feature of resuming training from the interrupted position? If it doesn't currently support it, will it be added in future versions?",
        "en",
        [RESUME],
        "en",
        "-> Q13",
    ),
    q(
        837,
        "Resume interrupted training work\nHello. Please tell me how can I resume training if I have a saved epoch file? I'm using free google colab and want to make sure I don't have enough 12 hour free session limit or another reasons",
        "en",
        [RESUME],
        "en",
        "-> Q13",
    ),
    q(
        2734,
        "how to choosing GPU?\nHi, I have two GPUs, but I don't know how to choose which one to use for rendering in this RVC. Does anyone know how to choose which GPU to use for rendering?",
        "en",
        [GPU],
        "en",
        "-> Q11 推理怎么选gpu",
    ),
    q(
        2500,
        "请问实时变声有办法指定显卡吗\nrvc和游戏同时运行时，由于游戏会无上限地使用gpu资源，会导致rvc卡顿，导致只能把游戏锁帧运行。有没有办法能指定推理用的显卡呢，我想这样可以rvc跑在集成显卡上",
        "zh",
        [GPU],
        "zh",
        "-> Q11 推理怎么选gpu",
        "real-time GUI, integrated GPU: config device may not be enough",
    ),
    q(
        1543,
        "请问为什么我在模型推理的时候一直遇到connection errored out\n模型推理的时候一直遇到connection errored out, 命令行窗口没有关，一直开着的。命令行窗口里显示的是pause\n我是直接下载的安装包，跑bat，前面训练是显示成功的。",
        "zh",
        [CONN],
        "zh",
        "-> Q5",
        "console shows pause = the process crashed; Q5's 'closed the console' reading is close",
    ),
    q(
        155,
        '关于不用WebUI的问题\n在Windows上和Linux上运行都是各种各样的报错，以下为linux报错。大佬，能不能给个不用webui的推理代码和训练代码？\nTraceback (most recent call last):\n  File ".../multiprocessing/queues.py", line 239, in _feed\n    obj = _ForkingPickler.dumps(obj)',
        "trace",
        [CLI],
        "zh",
        "-> Q7",
    ),
    q(
        808,
        "No data found in dropdown ( Model, Inferencing voice etc ) Screenshot attached",
        "en",
        [VOICE],
        "en",
        "-> Q3",
    ),
    q(
        773,
        "inferance voice blank\ni have done the one click training (all processes complete) and also the separation (all processes complete) but when i press the refresh voice list button the Inferencing voice: drop down stays blank.",
        "en",
        [VOICE],
        "en",
        "-> Q3",
        "already refreshed",
    ),
    q(
        838,
        'help me\n  File "/content/Retrieval-based-Voice-Conversion-WebUI/train_nsf_sim_cache_sid_load_pretrain.py", line 425, in train_and_evaluate\n    wave = commons.slice_segments(\n  File "/content/Retrieval-based-Voice-Conversion-WebUI/lib/infer_pack/commons.py", line 49, in slice_segments\n    ret[i] = x[i, :, idx_str:idx_end]\nRuntimeError: The expanded size of the tensor (11520) must match the existing size (10560) at non-singleton dimension 1.  Target sizes: [1, 11520].  Tensor sizes: [10560]\nIt doesn\'t work here',
        "trace",
        [E17280],
        "en",
        "slice_segments expanded-size error -> Q17",
        "sizes differ from the FAQ",
    ),
    q(
        2332,
        "i want to train an audio for 1000-1200 epoch. how much should be lenght of input audio?\nhi, for training a clone voice with rvc with 1000-1200 epoch how should be input voice? how long should it be? 10 minutes or 1 hour?",
        "en",
        [DUR, EPOCH],
        "en",
        "dataset length and epochs -> Q10 (and Q9)",
    ),
]


def dump(fn, rows, prefix):
    with open(os.path.join(HERE, fn), "w", encoding="utf-8") as f:
        for i, d in enumerate(rows, 1):
            d = {"id": f"kb10-{prefix}{i:02d}", **d}
            f.write(json.dumps(d, ensure_ascii=False) + "\n")


dump("questions.jsonl", Q, "q")
dump("labels20.jsonl", L, "l")
with open(os.path.join(HERE, "questions_unlabelled.jsonl"), "w", encoding="utf-8") as f:
    for i, d in enumerate(Q, 1):
        f.write(
            json.dumps(
                {
                    "id": f"kb10-q{i:02d}",
                    "query": d["query"],
                    "kind": d["kind"],
                    "url": d["url"],
                    "source_kind": d["source_kind"],
                    "lang": d["lang"],
                },
                ensure_ascii=False,
            )
            + "\n"
        )
