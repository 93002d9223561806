#!/usr/bin/env bash
# Runs Tessel's libFuzzer targets (docs/fuzzing.md), each for a given time.
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [--no-build] [TARGET ...]
#
# TARGET is ir, npy, layout or cache (default: all four, one after another).
# Each runs N seconds (default 60) with J parallel workers (default 1) on the
# instrumented build in build-sanitize/ (built if needed, shared with
# scripts/test.sh --sanitize), starting from seeds made by fuzz/make_seeds.py
# and the corpus it grew before (build-sanitize/fuzz/corpus/TARGET). Inputs
# that crash, leak or time out land in build-sanitize/fuzz/findings/TARGET/;
# the script exits 1 if any target found one. --no-build runs the targets
# as they are built (campaigns of two targets at once, or while the tree has
# changes the fuzzed build should not pick up). Check a finding in with its
# fix under fuzz/corpus/TARGET/ so the test suite replays it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=60
jobs=1
build_first=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --no-build) build_first=0; shift ;;
    ir|npy|layout|cache) targets+=("$1"); shift ;;
    *) echo "usage: scripts/fuzz.sh [--seconds N] [--jobs J] [--no-build] [ir|npy|layout|cache ...]" >&2
       exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(ir npy layout cache)

export TESSEL_SANITIZE=1
build="${TESSEL_BUILD_DIR:-$root/build-sanitize}"
export TESSEL_BUILD_DIR="$build"
[ "$build_first" = 1 ] && bash "$root/scripts/build.sh"

work="$build/fuzz"
mkdir -p "$work"
# The Python package loads the instrumented libTesselC.so, whose sanitizer
# runtime must come first in a python3 process.
# LLVM's allocator poisons slabs only in instrumented code, but libMLIR.so
# allocates from the same slabs uninstrumented: manual poisoning off, or
# every MLIR context reports a false use-after-poison (docs/fuzzing.md).
export ASAN_OPTIONS="allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
asan_runtime="$(clang-22 -print-file-name=libclang_rt.asan-x86_64.so)"
for target in "${targets[@]}"; do
  if [ ! -d "$work/seeds/$target" ]; then
    LD_PRELOAD="$asan_runtime" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
      /usr/bin/python3 "$root/test/sanitizer/python.py" "$root/fuzz/make_seeds.py" "$work/seeds" \
      --source "$root" --only "$target" \
      --library "$build/lib/libTesselC.so" --tessel-gen "$build/bin/tessel-gen"
  fi
done

# Limits per input: a compile that takes longer than this or grows past this
# much memory is a finding (an unbounded compile is a bug, not a slow input).
declare -A timeout=([ir]=60 [npy]=5 [layout]=20 [cache]=10)
status=0
for target in "${targets[@]}"; do
  corpus="$work/corpus/$target"
  findings="$work/findings/$target"
  mkdir -p "$corpus" "$findings"
  echo "fuzz.sh: $target for ${seconds}s ($jobs job(s))"
  log="$work/$target.log"
  parallel=()
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  set +e
  (cd "$work" && "$build/bin/tessel-fuzz-$target" "$corpus" "$work/seeds/$target" \
    -dict="$root/fuzz/dicts/$target.dict" \
    -max_total_time="$seconds" -timeout="${timeout[$target]}" \
    -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    "${parallel[@]}" -artifact_prefix="$findings/") >"$log" 2>&1
  code=$?
  set -e
  # With -jobs each worker logs to fuzz-<n>.log in the working directory.
  grep -h "stat::number_of_executed_units\|stat::new_units_added" "$log" "$work"/fuzz-*.log 2>/dev/null || true
  rm -f "$work"/fuzz-*.log
  # libFuzzer also saves inputs slower than 10 s (slow-unit-*): reported,
  # not findings; the per-input timeout above is what makes a hang one.
  found=$(find "$findings" -type f ! -name 'slow-unit-*' | wc -l)
  slow=$(find "$findings" -type f -name 'slow-unit-*' | wc -l)
  echo "fuzz.sh: $target exit $code, $found finding(s), $slow slow input(s), corpus $(find "$corpus" -type f | wc -l) inputs"
  if [ "$code" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    tail -n 40 "$log"
  fi
done
exit "$status"
