#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what it needs, then lints and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f tests/apt-packages.txt ] && command -v apt-get >/dev/null; then
  # install only when some listed package is not installed yet
  wanted=$(grep -c . tests/apt-packages.txt)
  have=$(xargs -a tests/apt-packages.txt dpkg-query -W -f='${Status}\n' 2>/dev/null \
         | grep -c "install ok installed" || true)
  if [ "$have" != "$wanted" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive xargs -a tests/apt-packages.txt \
      apt-get install -y -qq --no-install-recommends >/dev/null
  fi
fi
python3 -m pip install -q -e ".[test]"
python3 -m ruff check .
python3 -m pytest "$@"
