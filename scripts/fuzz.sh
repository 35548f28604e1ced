#!/usr/bin/env bash
# Runs libFuzzer over the parsers of untrusted bytes (Sources/FuzzTargets).
#
#   scripts/fuzz.sh [TARGET...]        all targets when none is named
#   FUZZ_SECONDS=600 scripts/fuzz.sh apple-xml
#
# Each target starts from Fuzz/corpus/TARGET (kept in the repository) and grows a working corpus
# in .build/fuzz-corpus/TARGET. An input that breaks a promise (crash, broken invariant, timeout,
# allocation over the limit, leak) is written to Fuzz/regressions/TARGET/, where `make test`
# replays it from then on: fix the code, keep the file. Fold a run's new coverage into the kept
# corpus with FUZZ_MERGE=1 (libFuzzer's -merge keeps only inputs that add coverage; the kept
# corpus takes those under FUZZ_KEEP_KB, default 16, so the repository stays small).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
SECONDS_EACH=${FUZZ_SECONDS:-60}
ALL=(log keyslot keys read-models frame-index apple-xml apple-zip json csv fit bundle bundle-contents)
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    TARGETS=("${ALL[@]}")
fi
for target in "${TARGETS[@]}"; do
    if [[ " ${ALL[*]} " != *" $target "* ]]; then
        echo "fuzz.sh: unknown target '$target' (targets: ${ALL[*]})" >&2
        exit 2
    fi
done

# SwiftPM names every executable's entry point and links it with --defsym main=...; gold then
# fails on libFuzzer's own main, lld does not.
"$SWIFT" build -c release --build-path .build/fuzz --product healthvault-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DLIBFUZZER \
    -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld >&2
FUZZER=.build/fuzz/release/healthvault-fuzz
export LSAN_OPTIONS=suppressions=$PWD/Fuzz/lsan.supp
# -malloc_limit_mb: one allocation above it is a finding (no input may make us allocate without bound).
LIMITS=(-timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=65536)

workspace=""
trap 'if [ -n "$workspace" ]; then rm -rf "$workspace"; fi' EXIT INT TERM

summary=()
status=0
for target in "${TARGETS[@]}"; do
    work=.build/fuzz-corpus/$target
    mkdir -p "$work" "Fuzz/regressions/$target"
    # tmpfs when there is one: the harnesses write and sync a vault per input.
    workspace=$(mktemp -d -p "$( [ -d /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")")
    log=.build/fuzz-corpus/$target.log
    before=$(ls "Fuzz/regressions/$target" | wc -l)
    echo "fuzzing $target for ${SECONDS_EACH}s" >&2
    set +e
    HEALTHVAULT_FUZZ_TARGET=$target HEALTHVAULT_FUZZ_WORKSPACE=$workspace \
        "$FUZZER" "$work" "Fuzz/corpus/$target" "${LIMITS[@]}" \
        -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
        -artifact_prefix="Fuzz/regressions/$target/" >"$log" 2>&1
    rc=$?
    set -e
    if [ "${FUZZ_MERGE:-0}" = 1 ] && [ $rc -eq 0 ]; then
        HEALTHVAULT_FUZZ_TARGET=$target HEALTHVAULT_FUZZ_WORKSPACE=$workspace \
            "$FUZZER" -merge=1 "${LIMITS[@]}" "Fuzz/corpus/$target" "$work" >>"$log" 2>&1 \
            || echo "fuzz.sh: merging $target's corpus failed, see $log" >&2
        # The repository keeps the small inputs (and the named seeds); big ones stay in $work.
        find "Fuzz/corpus/$target" -type f -size +"${FUZZ_KEEP_KB:-16}"k -regextype posix-extended \
            -regex '.*/[0-9a-f]{40}' -delete
    fi
    rm -rf "$workspace"
    workspace=""
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
    saved=$(( $(ls "Fuzz/regressions/$target" | wc -l) - before ))
    if [ $rc -eq 2 ]; then
        status=1
        summary+=("$target: the harness could not be set up, see $log")
    elif [ $rc -ne 0 ]; then
        status=1
        summary+=("$target: FINDING after ${runs} inputs, see $log and Fuzz/regressions/$target/")
    elif [ "$saved" -gt 0 ]; then
        summary+=("$target: ${runs} inputs in ${SECONDS_EACH}s, ${coverage} edges covered, $saved slow input(s) saved to Fuzz/regressions/$target/")
    else
        summary+=("$target: ${runs} inputs in ${SECONDS_EACH}s, ${coverage} edges covered, no finding")
    fi
done
printf '%s\n' "${summary[@]}"
exit $status
