#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what it needs, then lints and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f tests/apt-packages.txt ] && command -v apt-get >/dev/null; then
  missing=$(xargs -a tests/apt-packages.txt dpkg-query -W -f='${Status}\n' 2>/dev/null | grep -vc "install ok installed" || true)
  if [ "$(xargs -a tests/apt-packages.txt | wc -w)" != "$(xargs -a tests/apt-packages.txt dpkg-query -W 2>/dev/null | wc -l)" ] || [ "$missing" != 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive xargs -a tests/apt-packages.txt apt-get install -y -qq --no-install-recommends >/dev/null
  fi
fi
python3 -m pip install -q -e ".[test]"
python3 -m ruff check .
python3 -m pytest "$@"
