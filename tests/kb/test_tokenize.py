from bot.kb.tokenize import detect_language, tokenize


def test_code_identifiers_stay_whole_and_index_their_parts():
    tokens = tokenize("libnccl.so CUDA_VISIBLE_DEVICES FLAGS_fraction_of_gpu_memory_to_use ncclSystemError CUDA_ERROR_OUT_OF_MEMORY")
    for whole in ("libnccl.so", "cuda_visible_devices", "flags_fraction_of_gpu_memory_to_use",
                  "ncclsystemerror", "cuda_error_out_of_memory"):
        assert whole in tokens
    for part in ("libnccl", "visible", "fraction", "nccl", "system", "memory"):
        assert part in tokens


def test_chinese_is_segmented_and_stopwords_dropped():
    tokens = tokenize("训练时报错提示显存不足，如何解决？")
    assert "显存" in tokens and "训练" in tokens
    assert "如何" not in tokens and "，" not in tokens


def test_mixed_text_keeps_both_scripts():
    tokens = tokenize("多卡训练报错 Nccl error")
    assert {"nccl", "error", "训练"} <= set(tokens)


def test_empty_and_punctuation_only():
    assert tokenize("") == []
    assert tokenize("!!! ？？ ...") == []


def test_detect_language():
    assert detect_language("显存不足怎么办") == "zh"
    assert detect_language("CUDA_VISIBLE_DEVICES=2,3 怎么用") == "zh"
    assert detect_language("out of memory on GPU") == "en"
    assert detect_language("EnforceNotMet: Failed to find dynamic library: libnccl.so") == "en"
