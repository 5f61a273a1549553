"""The order xdist's workers take the modules in (tests/fixtures/schedule.py): dearest first, a module's tests kept
together and in their own order, a module not measured yet counted at the median seconds per test of its run."""

from __future__ import annotations

import json

from fixtures.schedule import SECONDS, module_seconds, order


class _Item:
    def __init__(self, nodeid: str, unit: bool = False) -> None:
        self.nodeid = nodeid
        self.unit = unit

    def get_closest_marker(self, name: str):
        return object() if name == "unit" and self.unit else None


def test_the_dearest_module_goes_first_and_a_modules_tests_keep_their_order():
    items = [_Item("a.py::one"), _Item("b.py::one"), _Item("a.py::two"), _Item("c.py::one"), _Item("b.py::two")]
    order(items, {"dearer": {"a.py": 1.0, "b.py": 30.0, "c.py": 5.0}})
    assert [i.nodeid for i in items] == ["b.py::one", "b.py::two", "c.py::one", "a.py::one", "a.py::two"]


def test_a_new_module_counts_its_tests_at_the_median_and_each_run_reads_its_own_seconds():
    # Per test: a 10, b 2, c 1 -> median 2; new.py's three tests count 6, between a and c.
    seconds = {"dearer": {"a.py": 10.0, "b.py": 4.0, "c.py": 1.0}, "unit": {"new.py": 100.0, "u.py": 1.0}}
    items = [_Item("c.py::x"), _Item("b.py::x"), _Item("b.py::y"), _Item("a.py::x")]
    items += [_Item(f"new.py::{n}") for n in range(3)]
    order(items, seconds)
    assert [i.nodeid.split("::")[0] for i in items] == ["a.py", "new.py", "new.py", "new.py", "b.py", "b.py", "c.py"]
    units = [_Item("u.py::x", unit=True), _Item("new.py::x", unit=True)]
    order(units, seconds)  # new.py is dear in the unit run only
    assert [i.nodeid for i in units] == ["new.py::x", "u.py::x"]


def test_the_seconds_are_read_from_a_cputime_file_and_the_committed_file_has_both_runs(tmp_path):
    tsv = tmp_path / "cpu.tsv"
    tsv.write_text("a.py::x\tsetup\t0.5\t1.5\t3.0\na.py::x\tcall\t1.0\t2.0\t3.0\nb.py::y\tcall\t0.1\t0.5\t3.0\n")
    assert module_seconds(tsv) == {"a.py": 3.5, "b.py": 0.5}
    committed = json.loads(SECONDS.read_text(encoding="utf-8"))
    assert set(committed) == {"unit", "dearer"} and all(committed.values())
