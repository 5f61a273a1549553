#!/usr/bin/env bash
# Installs everything the tests need (Python packages, Debian's Chromium and CJK fonts
# for the browser tests), checks the code with ruff (lint, then format; settings in
# pyproject.toml) and runs the whole suite. Extra arguments go to pytest.
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
exec python -m pytest "$@"
