#!/usr/bin/env bash
# What the live classroom tests need beyond the course environment (tests/test_hub_live.py,
# tests/test_grading.py). Everything lives in $LABUTIL_CLASSROOM_DIR (default /tmp/labutil-classroom).
#
#   bash tests/classroom/setup_classroom.sh [--install]
#
# Without --install it only reports; with --install (CI, a maintainer once) it installs what is missing:
#   chp       configurable-http-proxy, JupyterHub's proxy, from npm into $dir/npm (Node.js >= 20 from
#             the machine; `npm install -g configurable-http-proxy` on a real hub host)
#   sudo      batchspawner's default exec_prefix is `sudo -E -u <user>` (apt-get, root only)
#   learner   the Unix account labutil-learner: the Slurm route runs each hub user's server as a job
#             of that user, so the hub user must exist on the cluster (root only)
#   grading   $dir/venv-graded: a graded class's learner environment, the course's runtime (core +
#             lab extra) and nbgrader (classroom extra), WITHOUT labutil itself: tests/test_grading.py
#             puts the learner build (answers withheld) on PYTHONPATH. nbgrader lives here and not in
#             the test environment because its server and lab extensions would load into every
#             JupyterLab the rest of the suite starts.
# Output: one line per piece ("ok <piece> <path>" / "missing <piece>: <reason>").
# Exit status: 0 everything is there, 77 something is missing and cannot be installed here (the
# reasons are printed; the tests skip with them), 1 an install failed where it should have worked.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${LABUTIL_CLASSROOM_DIR:-/tmp/labutil-classroom}
install=0; [ "${1:-}" = "--install" ] && install=1
learner=labutil-learner
chp_version=5.3.0
py=${PYTHON:-python3}
mkdir -p "$dir"
status=0
missing() { echo "missing $1: $2"; [ $status = 1 ] || status=77; }
failed() { echo "FAILED $1: $2" >&2; status=1; }

retry() {  # retry N CMD...: another apt/npm may hold a lock, a registry may hiccup
  local n=$1 i; shift
  for i in $(seq 1 "$n"); do "$@" && return 0; sleep 10; done
  return 1
}

# -- configurable-http-proxy ---------------------------------------------------------------------
chp=$(command -v configurable-http-proxy || true)
[ -n "$chp" ] || chp="$dir/npm/node_modules/.bin/configurable-http-proxy"
if [ ! -x "$chp" ] && [ $install = 1 ]; then
  if command -v npm >/dev/null; then
    retry 3 npm install --prefix "$dir/npm" --no-audit --no-fund --loglevel=error \
      "configurable-http-proxy@$chp_version" >"$dir/npm.log" 2>&1 \
      || failed chp "npm install configurable-http-proxy failed: $(tail -n 1 "$dir/npm.log")"
  fi
fi
if [ -x "$chp" ]; then echo "ok chp $chp"
elif command -v npm >/dev/null; then missing chp "not installed (bash $0 --install)"
else missing chp "no npm on this machine (Node.js >= 20 with npm is needed for configurable-http-proxy)"; fi

# -- sudo ------------------------------------------------------------------------------------------
if ! command -v sudo >/dev/null && [ $install = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  retry 20 sh -c 'apt-get install -y -q sudo >"$0" 2>&1 || { apt-get update -q >/dev/null 2>&1; apt-get install -y -q sudo >"$0" 2>&1; }' "$dir/apt.log" \
    || failed sudo "apt-get install sudo failed: $(tail -n 1 "$dir/apt.log")"
fi
if command -v sudo >/dev/null; then echo "ok sudo $(command -v sudo)"
else missing sudo "sudo is not installed (root + apt-get needed: bash $0 --install)"; fi

# -- the learner's Unix account --------------------------------------------------------------------
if ! id "$learner" >/dev/null 2>&1 && [ $install = 1 ] && [ "$(id -u)" = 0 ]; then
  useradd --create-home --shell /bin/bash "$learner" || failed learner "useradd $learner failed"
fi
# The learner's job runs the course environment (this checkout's .venv, a symlink to the base
# interpreter) as that user, as a cluster's shared file system would let it: every directory above
# the checkout and the interpreter must be searchable by others (a root home is often 0700).
base=$("$py" -c 'import sys; print(sys.base_prefix)' 2>/dev/null || true)
for target in "$root" ${base:+"$base"}; do
  d=$target
  while [ "$d" != / ]; do
    if [ -d "$d" ] && [ "$(( 0$(stat -c %a "$d") & 01 ))" = 0 ]; then
      if [ $install = 1 ] && [ "$(id -u)" = 0 ]; then chmod o+x "$d" && echo "note: chmod o+x $d (the learner's job reads the course environment below it)"
      else missing learner "$d is not searchable by other users (the learner's job cannot reach $target; bash $0 --install)"; fi
    fi
    d=$(dirname "$d")
  done
done
if id "$learner" >/dev/null 2>&1; then echo "ok learner $(getent passwd "$learner" | cut -d: -f6)"
else missing learner "no Unix account $learner (root needed: bash $0 --install)"; fi

# -- the graded class's learner environment with nbgrader ------------------------------------------
venv="$dir/venv-graded"
if [ ! -x "$venv/bin/nbgrader" ] && [ $install = 1 ]; then
  reqs=$("$py" - "$root/pyproject.toml" <<'EOF'
import sys, tomllib
data = tomllib.load(open(sys.argv[1], "rb"))
extras = data["project"]["optional-dependencies"]
wanted = list(data["project"]["dependencies"]) + extras["lab"] + [r for r in extras["classroom"] if r.startswith("nbgrader")]
print("\n".join(wanted))
EOF
  ) || failed grading "cannot read pyproject.toml with $py (Python >= 3.11 needed)"
  if [ -n "${reqs:-}" ]; then
    rm -rf "$venv"
    printf '%s\n' "$reqs" > "$dir/grading-requirements.txt"
    { "$py" -m venv "$venv" \
      && retry 2 "$venv/bin/python" -m pip install -q -r "$dir/grading-requirements.txt"; } >"$dir/pip.log" 2>&1 \
      || failed grading "pip install of nbgrader + the course runtime failed: $(grep -v 'is ignored' "$dir/pip.log" | tail -n 1)"
    "$venv/bin/python" -m pip check >>"$dir/pip.log" 2>&1 || failed grading "pip check: $(tail -n 3 "$dir/pip.log" | tr '\n' ' ')"
  fi
fi
if [ -x "$venv/bin/nbgrader" ]; then echo "ok grading $venv"
else missing grading "no nbgrader environment at $venv (bash $0 --install)"; fi

exit $status
