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
# The dearer tiers in two test processes (pytest-xdist), each test module whole in one of them (--dist loadfile:
# its module-scoped servers start once): they wait on servers and browsers. The unit tier stays in one process: it
# is CPU and collection, and two workers made it slower (docs/testing.md). TEST_WORKERS=0: one process for all.
WORKERS=(-n "${TEST_WORKERS:-2}" --dist loadfile)
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
tier -m unit "$@"
tier "${WORKERS[@]}" -m "not unit" "$@"
