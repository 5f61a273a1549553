"""Time to read pastes of growing size, as ratios to the smallest in the same run (linear: ratio ~ size ratio).

python -m bench.environment_growth
"""

from __future__ import annotations

import time

from bot.diagnose.environment import read_environment


def paste(lines: int) -> str:
    smi = "| NVIDIA-SMI 525.60.13   Driver Version: 525.60.13   CUDA Version: 12.0 |\n"
    pip = "\n".join(f"package-{i:05d}            {i % 7}.{i % 13}.{i % 5}" for i in range(lines))
    return smi + pip + "\npaddlepaddle-gpu 2.6.0.post120\n" + ("cuda " * 150 + "\n") * (lines // 100)


def best_of(text: str, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        read_environment(text)
        best = min(best, time.perf_counter() - start)
    return best


if __name__ == "__main__":
    sizes = (500, 1_000, 2_000, 4_000, 5_000)
    base = best_of(paste(sizes[0]))
    for n in sizes:
        t = best_of(paste(n))
        print(f"{n:6d} lines  {t * 1000:8.2f} ms  size x{n / sizes[0]:4.1f}  time x{t / base:5.2f}")
