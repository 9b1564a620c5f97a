# Shared settings for the .ci scripts (sourced, not run).
# Downloads are cached under the user's home, never in the repo.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${TXCOMMIT_CACHE:-$HOME/.cache/txcommit}"
# One cache location for every side: the Python code (`txcommit jars`, the benchmark) reads
# TXCOMMIT_CACHE, build.sbt the same, and sbt's JVM and Maven are told the shell's home (Java
# takes user.home from the password database, not from $HOME).
export TXCOMMIT_CACHE="$CACHE"
# pip's and uv's caches there too.
export PIP_CACHE_DIR="$CACHE/pip" UV_CACHE_DIR="$CACHE/uv" PIP_DISABLE_PIP_VERSION_CHECK=1
# pyspark's wheels, built once from the index's source distributions (setup builds 4.3's,
# .ci/lines the other lines'), for uv to install from.
WHEELHOUSE="$CACHE/lines/wheels"
SBT_VERSION="1.11.7"
PYTHON="${PYTHON:-python3}"
M2_REPO="$CACHE/m2"
SBT_LAUNCHER="$M2_REPO/org/scala-sbt/sbt-launch/$SBT_VERSION/sbt-launch-$SBT_VERSION.jar"
# Azurite (Azure Blob emulator, npm) for the conformance kit; installed under the cache.
AZURITE_VERSION="3.37.0"
NPM_PREFIX="$CACHE/npm"

log() { printf '\033[1m[txcommit]\033[0m %s\n' "$*" >&2; }
die() { printf '[txcommit] ERROR: %s\n' "$*" >&2; exit 1; }

# The sbt id of a store module's 4.3 project: adapter<Name> for adapters/txcommit_store_<name>
# (another line's adds its id: adapterS340), as StoreModule.projectId names it.
adapter_project() {
  local part name="" parts
  IFS=- read -r -a parts <<<"$1"
  for part in "${parts[@]}"; do name+="${part^}"; done
  printf 'adapter%s\n' "$name"
}

spark_jars() { "$ROOT/.venv/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))'; }

# Runs sbt through the launcher fetched from Maven Central, with Maven Central as its only
# repository; sbt's boot files and every cache stay under $CACHE. Its JVM runs C1 only with the
# serial collector: compiling every Spark line's main and test sources then costs 18% less CPU
# (367 s against 446 s on 2 cores) for 6% more wall clock on an idle machine, and CI keeps both
# cores busy. TXCOMMIT_SBT_JAVA_OPTS replaces these (empty: the JVM's defaults).
# C1 alone reserves 48 MB for compiled code, and a JVM whose code cache fills stops compiling
# for good: CI's one sbt filled it half way and compiled the older lines' tests interpreted
# (10 test sources: 290 s against 37 s). It gets the tiered compilers' 240 MB.
sbt() {
  # shellcheck disable=SC2086 # the JVM options are words: split on purpose
  COURSIER_CACHE="$CACHE/coursier" TXCOMMIT_SPARK_JARS="$(spark_jars)" \
    java -Xmx2g -Xss4m -XX:ReservedCodeCacheSize=240m \
    ${TXCOMMIT_SBT_JAVA_OPTS--XX:+UseSerialGC -XX:TieredStopAtLevel=1} -Duser.home="$HOME" \
    -Dsbt.boot.directory="$CACHE/sbt/boot" \
    -Dsbt.global.base="$CACHE/sbt/global" \
    -Dsbt.ivy.home="$CACHE/sbt/ivy" \
    -Dsbt.repository.config="$ROOT/.ci/sbt.repositories" \
    -Dsbt.override.build.repos=true \
    -Dsbt.server.forcestart=false -Dsbt.supershell=false -Dsbt.color=false -Dsbt.log.noformat=true \
    -jar "$SBT_LAUNCHER" "$@" </dev/null
}

# Puts a wheel of pyspark $1 in $WHEELHOUSE, built once: the index has only the source
# distribution of most releases (a 400 MB build). Stored, not deflated: pyspark is mostly jars,
# already compressed; deflating them again costs 12 of a build's 30 CPU-seconds to save 9% of
# its size (4.0.5's sdist, measured here). Needs .venv (its pip builds it).
pyspark_wheel() {
  ls "$WHEELHOUSE"/pyspark-"$1"-*.whl >/dev/null 2>&1 && return 0
  log "building a wheel of pyspark $1 once (cached in $WHEELHOUSE)"
  "$ROOT/.venv/bin/pip" wheel -q --no-deps -w "$WHEELHOUSE" \
    --config-settings=--build-option=--compression=stored "pyspark==$1"
}

# Phases: `phase NAME CMD...` runs CMD and records how long it took, keeping a copy of its
# output; `print_phases` (on exit) prints the end of every failed phase's output, then every
# recorded phase with its time, so the end of a CI log says what failed and where time went.
PHASE_LOG="${PHASE_LOG:-${TMPDIR:-/tmp}/txcommit-phases.$$}"
# CPU seconds (user + system) of this shell's finished children and theirs: what a phase
# cost the machine, beside its wall time (the streams share two cores).
# `times` runs in this shell (a subshell's children are its own), so it sets CHILDREN_CPU.
children_cpu() {
  local f="${TMPDIR:-/tmp}/txcommit-times.$BASHPID"
  times >"$f"
  CHILDREN_CPU=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } printf "%d", s }' "$f")
  rm -f "$f"
}
phase() {
  local name=$1 start=$SECONDS rc=0 out cpu
  shift
  children_cpu
  cpu=$CHILDREN_CPU
  out="$(mktemp "${TMPDIR:-/tmp}/txcommit-phase.XXXXXX")"
  log "phase: $name"
  "$@" 2>&1 | tee "$out" || rc=$?
  children_cpu
  cpu=$((CHILDREN_CPU - cpu))
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$((SECONDS - start))" "$([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" "$out" \
    "$cpu" >>"$PHASE_LOG"
  return "$rc"
}
print_phases() {
  [ -s "$PHASE_LOG" ] || return 0
  local name _seconds result out _cpu
  while IFS=$'\t' read -r name _seconds result out _cpu; do
    if [ "$result" != ok ] && [ -s "$out" ]; then
      printf '\n[txcommit] %s %s; the last 60 lines of its output:\n' "$name" "$result" >&2
      tail -n 60 "$out" >&2
    fi
    rm -f "$out"
  done <"$PHASE_LOG"
  printf '\n[txcommit] phase times\n' >&2
  # Phases may overlap (side-by-side streams): the wall clock is the run's real length.
  # CPU: the phase's processes, user + system (two cores: up to twice the wall time).
  children_cpu
  awk -F'\t' -v wall="$SECONDS" -v cpu="$CHILDREN_CPU" '
    BEGIN { printf "  %-38s %7s  %7s\n", "", "wall", "CPU" }
    { printf "  %-38s %4d:%02d  %4d:%02d  %s\n", $1, $2 / 60, $2 % 60, $5 / 60, $5 % 60, $3 }
    END { printf "  %-38s %4d:%02d  %4d:%02d\n", "wall clock, all CPU", wall / 60, wall % 60, cpu / 60, cpu % 60 }' "$PHASE_LOG" >&2
  rm -f "$PHASE_LOG"
}
