#!/usr/bin/env bash
# Compares two vaultctl binaries on what a user runs, alternating them round by round on one
# export: `import` into a new vault, `rebuild`, the read models' size; `unzip -p` of the same
# zip is the anchor measured in the same run. Wall seconds and peak RSS from /usr/bin/time.
#
#   scripts/compare-binaries.sh OLD_VAULTCTL NEW_VAULTCTL EXPORT.zip [ROUNDS]
set -euo pipefail
old=$1 new=$2 zip=$3 rounds=${4:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HEALTHVAULT_PASSPHRASE=compare-binaries
measure() { /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }; cat "$work/time"; }
printf '%-8s %-6s %-22s %-22s %s\n' round binary "import s / peak KiB" "rebuild s / peak KiB" "projections.db bytes"
for round in $(seq 1 "$rounds"); do
    printf '%-8s %-6s %s\n' "$round" unzip "$(measure unzip -p "$zip")"
    for which in old new; do
        bin=${!which}
        vault="$work/$which"
        rm -rf "$vault"
        "$bin" init --vault "$vault" --kdf interactive >/dev/null 2>&1
        imported=$(measure "$bin" import --vault "$vault" "$zip")
        rebuilt=$(measure "$bin" rebuild --vault "$vault")
        printf '%-8s %-6s %-22s %-22s %s\n' "$round" "$which" "$imported" "$rebuilt" "$(stat -c %s "$vault/projections.db")"
    done
done
