"""The Paddle GPU build to install instead, when the finding is a wrong build: the install page's wheel for the
machine's CUDA and the pip command that fetches it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.diagnose.compat_reading import machine_cuda, on_windows
from bot.diagnose.compat_table import CompatTable, Row, Source, major_minor, table_for, vtuple  # noqa: F401  (table_for: doctest)
from bot.records import Environment


@dataclass(frozen=True)
class Install:
    """The GPU build that fits the machine, as the official install page lists it: ``package`` is the pip
    requirement (``paddlepaddle-gpu==2.6.1.post120``), ``option`` where pip finds it (``-f …`` / ``-i …``, or ""),
    ``cuda`` the CUDA it was built for, ``platform`` the page's platform, ``source`` the wheel row."""

    package: str
    option: str
    cuda: str
    platform: str
    source: Source
    replaces: str = ""  # the installed package to uninstall first ("paddlepaddle"), when it is another name
    machine: str = ""  # the machine's CUDA the choice rests on (the toolkit, else the newest the driver runs)
    driver: str = ""


_PADDLE_NAMES = ("paddlepaddle", "paddlepaddle-gpu", "paddle")


def gpu_install(env: Environment, table: CompatTable) -> Install | None:
    """The Paddle GPU build of the installed version that runs on this machine: the install page's wheel of the same
    major.minor whose CUDA has the machine's CUDA major and is not newer than it (the toolkit shown, else the newest
    CUDA the driver runs), the newest such; the pip option from the page's ``[[install]]`` row for a ``postNNN``
    build, the row's own index for a 3.x build. None when a value is missing or the table has no such wheel.

    >>> from bot.diagnose.environment import read_environment
    >>> env = read_environment("Driver Version: 535.104.05   CUDA Version: 12.2\\npaddlepaddle 2.6.1\\nUbuntu 22.04")
    >>> found = gpu_install(env, table_for(None))
    >>> found.package, found.option, found.replaces
    ('paddlepaddle-gpu==2.6.1.post120', '-f https://www.paddlepaddle.org.cn/whl/linux/mkl/avx/stable.html', 'paddlepaddle')
    """
    pkgs = [p for p in env.packages if p.name in _PADDLE_NAMES]
    versions = {re.sub(r"\.post\d{2,3}$", "", p.version.split("+")[0]) for p in pkgs}
    if len(versions) != 1:
        return None
    version = versions.pop()
    machine = machine_cuda(env)
    have = major_minor(machine[0]) if len(machine) == 1 else major_minor(env.cuda_driver_api or "")
    if len(have) < 2 or len(vtuple(version)) < 2:
        return None
    platform = "windows" if on_windows(env) else "linux"
    best: Row | None = None
    for row in table.of("wheel"):
        cuda = major_minor(row.get("cuda"))
        if (
            row.get("package") != "paddlepaddle-gpu"
            or vtuple(row.get("version"))[:2] != vtuple(version)[:2]
            or platform not in row.get("platform")
            or len(cuda) < 2
            or cuda[0] != have[0]
            or cuda > have
        ):
            continue
        if best is None or cuda > major_minor(best.get("cuda")):
            best = row
    if best is None:
        return None
    variant = best.get("variant")
    replaces = next((p.name for p in pkgs if p.name == "paddlepaddle"), "")
    if variant.startswith("post"):
        option = next(
            (r.get("option") for r in table.of("install") if r.get("platform") == platform and _covers(r, version)),
            None,
        )
        if option is None:
            return None
        package = f"paddlepaddle-gpu=={version}.{variant}"
    else:
        index = best.get("index_url")
        package, option = f"paddlepaddle-gpu=={version}", f"-i {index}" if index else ""
    shown = machine[0] if len(machine) == 1 else env.cuda_driver_api or ""
    return Install(package, option, best.get("cuda"), platform, best.source, replaces, shown, env.driver or "")


def _covers(row: Row, version: str) -> bool:
    """An ``[[install]]`` row's ``versions`` ("2.0-2.6") holds the version's major.minor."""
    lo, _, hi = row.get("versions").partition("-")
    return vtuple(lo)[:2] <= vtuple(version)[:2] <= vtuple(hi or lo)[:2]
