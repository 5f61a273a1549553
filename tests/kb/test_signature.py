import time

from bot.kb.signature import clean_line, extract_signature, looks_like_log

from conftest import SEEDS


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
    assert sig.headline == "tensorflow.python.framework.errors.InvalidArgumentError: Cannot assign a device to node 'Variable'"


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


def test_one_megabyte_pastes_finish_quickly():
    # Worst cases for backtracking: long runs of path characters, colons, 'Error' prefixes, no newlines.
    pastes = [
        "a/" * 500_000,
        "Error" * 200_000,
        ("x" * 999 + "\n") * 1_000,
        "File \"" + "/a" * 400_000,
        "0x" + "f" * 1_000_000,
        ("I0221 18:48:34.436648 29562 Util.cpp:155] " + "-" * 60 + "\n") * 10_000,
    ]
    for paste in pastes:
        started = time.perf_counter()
        looks_like_log(paste)
        extract_signature(paste)
        # A hang guard, not a performance target: catastrophic backtracking would take minutes.
        assert time.perf_counter() - started < 20


# ---------------------------------------------------------------- linear time (issue 11)

def _bench():
    import importlib.util

    from conftest import REPO

    spec = importlib.util.spec_from_file_location("bench_signature", REPO / "scripts" / "bench_signature.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_megabyte_adversarial_paste_costs_what_a_benign_one_does():
    # "a-a-a-…" lines made the old `\b[\w-]+\.dll\b` restart at every "-" and rescan the line: quadratic per
    # line, 6.6 s for 1 MB alone (and once more per history turn). The baseline is a benign paste of the same
    # size and line lengths measured here, so the assertion does not depend on the machine's speed.
    bench = _bench()
    result = bench.measure(1_050_000, old_size=100_000)
    assert result["chars"] >= 1_000_000
    # The old pattern on a tenth of the size already costs as much as the whole new extraction of the benign MB.
    assert result["old_pattern_s"] > 0.5 * result["benign_s"], result
    assert result["adversarial_s"] < 4 * result["benign_s"], result


def test_library_scan_doubles_when_the_line_doubles():
    # Lines are cut at MAX_LINE, but the scan itself must be linear too (the cut is a second bound, not the fix).
    from bot.kb.signature import _libraries

    def seconds(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            _libraries(text)
            best = min(best, time.perf_counter() - started)
        return best

    one, two = seconds("a-" * 250_000), seconds("a-" * 500_000)
    assert two < 3 * one, (one, two)


def test_library_names_as_before():
    sig = extract_signature("OSError: x-libnccl.so.2: cannot open shared object file\n"
                            "could not load cudnn64_7.dll or c++libcudart.so.10.0 or -libcuda.dylib")
    assert sig.libraries == ("libnccl.so.2", "cudnn64_7.dll", "libcudart.so.10.0", "libcuda.dylib")
