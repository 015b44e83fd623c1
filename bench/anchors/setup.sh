#!/usr/bin/env bash
# Create the anchors' virtual environments (not project dependencies; gitignored):
#   bench/anchors/venv-smartnoise  smartnoise-sql (+ pandas) for bench/anchors_smartnoise.py
#   bench/anchors/venv-tumult      tmlt.analytics (brings its own PySpark) for bench/anchors_tumult.py
# Both need Python 3.11 (`python3.11` or $PYTHON); Tumult also needs Java 8/11/17 for Spark.
# Usage: bash bench/anchors/setup.sh [smartnoise|tumult]   (default: both)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-python3.11}"
want="${1:-both}"

make_env() {  # make_env <dir> <packages...>
  local dir="$1"; shift
  if [ ! -x "$dir/bin/python" ]; then
    "$py" -m venv "$dir"
  fi
  "$dir/bin/python" -m pip install --quiet --upgrade pip
  "$dir/bin/python" -m pip install --quiet "$@"
  "$dir/bin/python" -m pip freeze > "$dir/freeze.txt"
  echo "ready: $dir ($(wc -l < "$dir/freeze.txt") packages, see $dir/freeze.txt)"
}

if [ "$want" = both ] || [ "$want" = smartnoise ]; then
  make_env "$here/venv-smartnoise" smartnoise-sql pandas
fi
if [ "$want" = both ] || [ "$want" = tumult ]; then
  make_env "$here/venv-tumult" tmlt.analytics
fi
