"""bench/linearity.py runs and reports every ratio (on tiny inputs; the ratios themselves are figures, not checks:
timing belongs in bench/, not in tests)."""

from bench.linearity import CHECKS, PASTES, main, measure


def test_every_check_reports_positive_ratios_on_tiny_input():
    result = measure(scale=0.001, repeat=1)
    assert set(result) == set(CHECKS)
    ratios = [
        value
        for check in result.values()
        for value in (
            check.get("ratios", {}) | {k: v for k, v in check.items() if k not in ("factor", "ratios")}
        ).values()
    ]
    assert len(ratios) == 10 + len(PASTES) and all(r > 0 for r in ratios), result


def test_the_command_prints_json(capsys):
    import json

    assert main(["--scale", "0.001", "--repeat", "1", "--only", "environment"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"environment"}
