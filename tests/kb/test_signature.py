from bot.kb.signature import clean_line, extract_signature, looks_like_log
from conftest import SEEDS
from fixtures.logs import NCCL_LOG


def seed_block(name: str, marker: str) -> str:
    text = (SEEDS / name).read_text(encoding="utf-8")
    return text.split(marker, 1)[1].split("```", 1)[0]


def test_paddle_call_stack_gives_the_enforce_line_without_noise():
    log = seed_block("000_786bff9181b08d52.txt", "+ 报错输出：\n\n```\n")
    assert looks_like_log(log)
    sig = extract_signature(log)
    assert sig.headline.startswith("EnforceNotMet: Failed to find dynamic library: libnccl.so")
    assert "0x7f19" not in " ".join(sig.lines) and "/paddle/paddle" not in " ".join(sig.lines)
    assert "libnccl.so" in sig.libraries


def test_python_traceback_keeps_the_final_exception():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 42, in <module>\n'
        "    sess.run(i.initializer)\n"
        "tensorflow.python.framework.errors.InvalidArgumentError: Cannot assign a device to node 'Variable'\n"
    )
    sig = extract_signature(log)
    assert (
        sig.headline
        == "tensorflow.python.framework.errors.InvalidArgumentError: Cannot assign a device to node 'Variable'"
    )


def test_noise_is_removed_from_lines():
    line = "E1104 17:59:19.018365 43338 device_context.cc:342] cudaErrorMemoryAllocation at 0x7ffd12345678 pid 4242 in /usr/lib/x.so"
    cleaned = clean_line(line)
    assert cleaned.startswith("cudaErrorMemoryAllocation")
    for noise in ("17:59", "43338", "0x7ffd", "4242", "/usr/lib"):
        assert noise not in cleaned


def test_codes_and_flags_are_collected():
    log = "E [...]/cuda_driver.cc:965] failed to allocate 3.66G from device: CUDA_ERROR_OUT_OF_MEMORY\nexport FLAGS_fraction_of_gpu_memory_to_use=0"
    sig = extract_signature(log)
    assert "CUDA_ERROR_OUT_OF_MEMORY" in sig.codes
    assert "FLAGS_fraction_of_gpu_memory_to_use" in sig.flags
    assert sig.headline.startswith("failed to allocate")


def test_questions_are_not_logs_but_raw_error_lines_are():
    assert not looks_like_log("Nccl error when training on multiple NVIDIA cards")
    assert not looks_like_log("训练时显存不足怎么办")
    assert not looks_like_log("How do I make a pizza dough?")
    assert looks_like_log("libnccl.so: cannot open shared object file: No such file or directory")
    assert looks_like_log("Error: Out of all 4 Trainers")


def _bench():
    import importlib.util

    from conftest import REPO

    spec = importlib.util.spec_from_file_location("bench_signature", REPO / "scripts" / "bench_signature.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- linear time (issues 11 and 19)
# No absolute timings: each check is a ratio between runs measured side by side (interleaved rounds, best of
# each; see bench_signature.best_seconds), with a wide margin on both sides. Figures: scripts/bench_signature.py.
SIZE = 200_000  # catastrophic backtracking on any of these shapes would cost minutes already at this size


def test_worst_case_pastes_cost_what_a_benign_paste_does():
    # Worst cases for backtracking: long runs of path characters, colons, 'Error' prefixes, no newlines, and
    # "a-a-a-…" lines, which made the old `\b[\w-]+\.dll\b` restart at every "-" (quadratic per line).
    bench = _bench()
    pastes = {
        "path run": "a/" * (SIZE // 2),
        "Error run": "Error" * (SIZE // 5),
        "long lines": ("x" * 999 + "\n") * (SIZE // 1000),
        "open File": 'File "' + "/a" * (SIZE // 2),
        "hex run": "0x" + "f" * SIZE,
        "glog lines": ("I0221 18:48:34.436648 29562 Util.cpp:155] " + "-" * 60 + "\n") * (SIZE // 103),
        "a-a-a lines": bench.adversarial(SIZE),
    }
    runs = {name: (bench._extract, text) for name, text in pastes.items()}
    best = bench.best_seconds({"benign": (bench._extract, bench.benign(SIZE)), **runs}, repeat=3)
    slow = {name: round(best[name] / best["benign"], 1) for name in pastes if best[name] > 5 * best["benign"]}
    assert not slow, f"times a benign paste of {SIZE:,} characters: {slow} (all about 1 or less)"


def test_the_benign_baseline_would_have_caught_the_old_library_pattern():
    # The check above can fail: the old pattern alone, on a tenth of the adversarial text, costs as much as the
    # whole extraction of the benign paste (about 10x per character; asserted with a 2x margin).
    bench = _bench()
    result = bench.measure(SIZE, old_size=SIZE // 10, repeat=2)
    assert 10 * result["old_pattern_s"] > 5 * result["benign_s"], result


def test_library_scan_grows_linearly_with_the_line():
    # Lines are cut at MAX_LINE, but the scan itself must be linear too (the cut is a second bound, not the fix).
    # A line 8x longer costs about 8x when linear and 64x when quadratic; 24x sits between with a margin of 3.
    bench = _bench()
    assert bench.library_growth(100_000, factor=8, repeat=9) < 24
    # ... and the measure tells them apart: the old pattern (kept in the bench) is quadratic on the same shape.
    assert bench.library_growth(1_000, factor=8, repeat=2, scan=bench.OLD_LIBRARY.findall) > 24


def test_library_names_as_before():
    sig = extract_signature(
        "OSError: x-libnccl.so.2: cannot open shared object file\n"
        "could not load cudnn64_7.dll or c++libcudart.so.10.0 or -libcuda.dylib"
    )
    assert sig.libraries == ("libnccl.so.2", "cudnn64_7.dll", "libcudart.so.10.0", "libcuda.dylib")


# ---------------------------------------------------------------- issue 35: the last error and its causes


def test_a_multi_node_nccl_log_is_read_by_its_last_error_and_its_refused_connection():
    sig = extract_signature(NCCL_LOG)
    assert sig.headline == "OSError: (External) NCCL error(2), unhandled system error."
    assert "Connection refused" in sig.lines[1] and sig.cause == "connection"
    assert not any("libnccl" in x for x in (*sig.libraries, *sig.lines))  # named by trace and hint lines only
    assert "libnccl" not in sig.search_text() and "两台机器" in sig.search_text()


def test_the_last_of_several_errors_leads():
    log = "RuntimeError: first failure\nsomething else\nValueError: the error the program stopped on"
    assert extract_signature(log).headline == "ValueError: the error the program stopped on"
