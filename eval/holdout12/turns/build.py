# ruff: noqa -- a gatherer's one-off script that wrote the batch, kept as it ran
# builds the holdout12 turn files from the table below
import json

F0 = "000_786bff9181b08d52.txt"
F1 = "001_4aa700db6d0e07e4.txt"
F2 = "002_5c885a5c94776257.txt"
F3 = "003_ba74d700c0e52ec2.txt"
F4 = "004_c9562597aefa3d00.txt"
S = {
    "GPU0": (F0, "GPU的利用率几乎为0"),
    "NCCLSO": (F0, "使用多卡训练报错"),
    "CUDNN6": (F0, "支持使用cuDNN6"),
    "EVAL": (F0, "GPU多卡情况下加载模型评估结果有误"),
    "OLDGPU": (F1, "使用GPU训练时候报错"),
    "SPEC": (F1, "指定对应的GPU设备"),
    "DNN": (F1, "同时运行在GPU和CPU"),
    "STOP": (F2, "stop_gradient=True的影响范围"),
    "MATMUL": (F2, "paddle.matmul和paddle.multiply有什么区别"),
    "INPLACE": (F2, "inplace参数的设置会影响梯度回传吗"),
    "FREEZE": (F2, "不训练某层的权重"),
    "CPU": (F2, "利用多处理器进行加速"),
    "NCCL": (F2, "Nccl error"),
    "TRAINERS": (F2, "Out of all 4 Trainers"),
    "OOM": (F2, "显存不足"),
    "UTIL": (F2, "提升模型训练时的GPU利用率"),
    "VARLEN": (F2, "变长ID"),
    "CONV": (F2, "不收敛"),
    "NAN": (F2, "Loss为NaN"),
    "COMPRESS": (F2, "训练后的模型很大"),
    "PYREADER": (F2, "py_reader"),
    "PROFILE": (F2, "打印模型中每一步的耗时"),
    "CLIP": (F2, "梯度裁剪"),
    "VARGRAD": (F2, "variable的梯度"),
    "MM": (F3, "2. 多机多卡训练功能开发"),
    "ENV": (F3, "2.1 准备多机多卡环境"),
    "INIT": (F3, "2.3 初始化分布式环境"),
    "DP": (F3, "2.4 使用数据并行算子封装模型"),
    "VERIFY": (F3, "2.5 验证多机多卡程序运行正确"),
    "INFER": (F3, "2.6 开发模型推理程序"),
    "FAQ": (F3, "3. FAQ"),
    "ENABLE": (F4, "enable GPU"),
    "RAM": (F4, "管理GPU RAM"),
    "PLACE": (F4, "放置node到特定Device"),
    "CTRL": (F4, "Control Dependencies"),
}
exec(open("/work/holdout12/turns/cases.py", encoding="utf-8").read())


def ex(keys):
    return [{"source": S[k][0], "section": S[k][1]} for k in keys]


conv, acts, convu, actsu = [], [], [], []
for i, c in enumerate(CASES, 1):
    turns = c["t"]
    assert 2 <= len(turns) <= 4, c["url"]
    assert turns[0][2] is None and all(t[2] for t in turns[1:]), c
    ct = [{"query": q, "expect": ex(e)} for q, e, a in turns]
    at = [{"query": turns[0][0], "expect": ex(turns[0][1])}] + [{"query": q, "act": a} for q, e, a in turns[1:]]
    base = {"lang": c["lang"], "url": c["url"], "source_kind": c["sk"]}
    cid = "h12c-%03d" % i
    tid = "h12t-%03d" % i
    d = {"id": cid, "turns": ct, "kind": c["kind"], **base, "note": c["note"]}
    if c.get("doubt"):
        d["doubt"] = c["doubt"]
    conv.append(d)
    a = {"id": tid, "lang": c["lang"], "turns": at, "url": c["url"], "source_kind": c["sk"], "note": c["note"]}
    if c.get("doubt"):
        a["doubt"] = c["doubt"]
    acts.append(a)
    convu.append(
        {
            "id": cid,
            "turns": [{"query": q} for q, e, a2 in turns],
            "lang": c["lang"],
            "url": c["url"],
            "source_kind": c["sk"],
        }
    )
    actsu.append(
        {
            "id": tid,
            "lang": c["lang"],
            "turns": [{"query": q} for q, e, a2 in turns],
            "url": c["url"],
            "source_kind": c["sk"],
        }
    )


def w(n, rows):
    with open("/work/holdout12/turns/" + n, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


w("conversations.jsonl", conv)
w("acts.jsonl", acts)
w("conversations_unlabelled.jsonl", convu)
w("acts_unlabelled.jsonl", actsu)
from collections import Counter

print("convs", len(CASES), "later turns", sum(len(c["t"]) - 1 for c in CASES))
print("kind", Counter(c["kind"] for c in CASES))
print("act", Counter(t[2] for c in CASES for t in c["t"][1:]))
print("source", Counter(c["sk"] for c in CASES))
print("lang", Counter(c["lang"] for c in CASES))
print(
    "first [] ",
    sum(1 for c in CASES if not c["t"][0][1]),
    "later [] ",
    sum(1 for c in CASES for t in c["t"][1:] if not t[1]),
)
print(
    "convs with new_* turn", sum(1 for c in CASES if any(t[2] in ("new_covered", "new_uncovered") for t in c["t"][1:]))
)
urls = [c["url"] for c in CASES if c["url"]]
assert len(urls) == len(set(urls))
for c in CASES:
    assert all(len(t[0]) <= 1500 for t in c["t"])
