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
