#!/usr/bin/env bash
# Installs everything the tests need (Python packages, Debian's Chromium and CJK fonts
# for the browser tests), checks the code with ruff (lint, then format; settings in
# pyproject.toml) and runs the whole suite in two runs: the unit tier first (seconds per
# module, no servers), then the model, server and browser tiers (tests/conftest.py sorts
# the tests into tiers; docs/testing.md has each tier's command and time). Extra
# arguments go to both pytest runs. Exits non-zero when ruff or any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
fc-list 2>/dev/null | grep -qi "Noto Sans CJK" || need_apt+=(fonts-noto-cjk)
# A real PostgreSQL server for the store tests (started by the tests themselves in a temp folder).
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

python -m pip install -q -r requirements-test.txt
# axe-core, the accessibility checker the browser tests inject into the pages (tests/web/test_browser_a11y.py).
AXE=tests/.axe/node_modules/axe-core/axe.min.js
[ -f "$AXE" ] || npm install -q --no-save --no-audit --no-fund --prefix tests/.axe axe-core@4.14.1 >/dev/null
# Lint first: a finding stops here, before minutes of tests. `ruff check --fix` and `ruff format` repair most.
python -m ruff check .
python -m ruff format --check .
# Both runs in two test processes (pytest-xdist), each test module whole in one of them (--dist loadfile: its
# module-scoped servers and fixtures start once). The unit tier is CPU: two workers use both cores, each collecting
# the suite once more (about 10 CPU-seconds with the compiled modules kept, below); the dearer tiers also wait on
# servers and browsers (docs/testing.md, issue 45). xdist sends the modules with most tests first; among modules of
# as many tests, the dearest first (tests/fixtures/schedule.py). Dearest first outright (--no-loadscope-reorder) started
# the bench smoke, the killed builds and the first browser pages together, and two of them failed for the load
# (docs/testing.md). TEST_WORKERS=0: one process for each run.
WORKERS=(-n "${TEST_WORKERS:-2}" --dist loadfile)
# pytest rewrites every test module's asserts at import and caches the result beside the compiled modules; where
# PYTHONDONTWRITEBYTECODE is set (some containers set it) every test process rewrote about 480 modules again, 6 of
# its 16 CPU-seconds of collection. Compiled modules go to a cache folder of their own instead, outside the tree.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/bot-tests/pycache}"
# numpy's BLAS on one thread, as the app serves (app.py): the test processes already fill both cores, and OpenBLAS's
# spare threads only spun beside them (tests/engine/test_learned.py and test_confidence.py: 44 -> 39 CPU-seconds).
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
# pytest exits 5 when a run selects no test (arguments naming only one tier's tests): not a failure.
tier() {
  local status=0
  python -m pytest "$@" || status=$?
  [ "$status" -eq 5 ] && status=0
  return "$status"
}
# A unit failure stops here: it is the cheap one to fix, before the dearer tiers' minutes.
tier "${WORKERS[@]}" -m unit "$@"
tier "${WORKERS[@]}" -m "not unit" "$@"
