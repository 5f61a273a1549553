"""The one progress bar of ``python -m bot calibrate`` and ``tune`` (tqdm on stderr), or silence."""

from __future__ import annotations


class Progress:
    """One progress bar over the whole fit (tqdm, on stderr), counted in labelled messages read; silent when off."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="tune", unit="msg", dynamic_ncols=True)

    def __call__(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def stage(self, name: str, more: int = 0) -> None:
        if self.bar is not None:
            self.bar.set_description(f"tune: {name}")
            if more:
                self.bar.total += more
                self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
