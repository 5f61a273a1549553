from bot.kb.tokenize import detect_language, tokenize


def test_code_identifiers_stay_whole_and_index_their_parts():
    tokens = tokenize(
        "libnccl.so CUDA_VISIBLE_DEVICES FLAGS_fraction_of_gpu_memory_to_use ncclSystemError CUDA_ERROR_OUT_OF_MEMORY"
    )
    for whole in (
        "libnccl.so",
        "cuda_visible_devices",
        "flags_fraction_of_gpu_memory_to_use",
        "ncclsystemerror",
        "cuda_error_out_of_memory",
    ):
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


def _fresh_jieba(monkeypatch, cache_dir):
    """jieba's default tokenizer replaced by a new one (no dictionary loaded) whose cache lives in cache_dir."""
    import jieba

    import bot.kb.tokenize as tok

    fresh = jieba.Tokenizer()
    fresh.tmp_dir = str(cache_dir)
    monkeypatch.setattr(jieba, "dt", fresh)
    monkeypatch.setattr(tok, "_tokenizer", None)
    return fresh


def test_concurrent_first_questions_read_the_dictionary_once_and_cut_alike(tmp_path, monkeypatch):
    # The dictionary loads on the first Chinese text; requests arriving together must neither load it twice
    # nor cut with a half-loaded one. A tiny dictionary in jieba's cache format shows which one was used.
    import marshal
    import threading

    import bot.kb.tokenize as tok

    words = {"显存": 50, "不足": 50, "多卡": 50, "训练": 50}
    freq = {**{ch: 1 for word in words for ch in word}, **words}
    (tmp_path / "jieba.cache").write_bytes(marshal.dumps((freq, sum(freq.values()))))
    fresh = _fresh_jieba(monkeypatch, tmp_path)
    reads: list[str] = []
    real_read = tok._read_jieba_cache

    def counted(path):
        reads.append(str(path))
        return real_read(path)

    monkeypatch.setattr(tok, "_read_jieba_cache", counted)
    start = threading.Barrier(8)
    results: list[list[str]] = []

    def first_question():
        start.wait()
        results.append(tokenize("多卡训练显存不足"))

    threads = [threading.Thread(target=first_question) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [["多卡", "训练", "显存", "不足"]] * 8
    assert reads == [str(tmp_path / "jieba.cache")]
    assert fresh.initialized and fresh.FREQ == freq


def test_a_damaged_dictionary_cache_is_rebuilt_by_jieba(tmp_path, monkeypatch):
    from bot.kb.tokenize import _read_jieba_cache

    (tmp_path / "jieba.cache").write_bytes(b"not marshal data")
    _fresh_jieba(monkeypatch, tmp_path)
    assert tokenize("显存不足怎么办") == ["显存", "不足", "怎么办"]  # jieba's own dictionary, built from dict.txt
    rebuilt = _read_jieba_cache(tmp_path / "jieba.cache")
    assert rebuilt is not None and rebuilt[0]["显存"] > 0  # and cached again for the next start
