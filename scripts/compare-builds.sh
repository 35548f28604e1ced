#!/bin/bash
# Two builds of vaultctl, interleaved on one ten-year generated export: the whole `vaultctl
# import` (three passes, each beside `unzip -p` of the zip), `rebuild` (beside `verify`), the
# export of one granted category (body, then heart, raw), and `serve` (vaultbench serve).
# Usage: OLD=/path/to/old/vaultctl scripts/compare-builds.sh, after `make bench` built this one
# and generated the export (.build/bench).
set -u
OLD=${OLD:?set OLD to the earlier build\'s vaultctl}
NEW=${NEW:-.build/release/vaultctl}
ZIP=${ZIP:-.build/bench/export-3650d-seed1-bundle.zip}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "bench passphrase" > "$W/pass"
echo "machine: $(date -u +%FT%TZ), $(nproc) cores; old = $OLD, new = $NEW ($(git log --oneline -1 | cut -c1-7))"
t() { /usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -1; }
binary() { if [ "$1" = old ]; then echo "$OLD"; else echo "$NEW"; fi; }
for pass in 1 2 3; do
  echo "unzip -p: $( { /usr/bin/time -f '%e %M' sh -c "unzip -p '$ZIP' > /dev/null"; } 2>&1 | tail -1)"
  for which in old new; do
    B=$(binary $which); V=$W/vault-$which-$pass
    "$B" init --vault "$V" --passphrase-file "$W/pass" --kdf interactive > /dev/null
    echo "$which import: $(t "$B" import "$ZIP" --vault "$V" --passphrase-file "$W/pass")"
  done
done
for which in old new; do
  B=$(binary $which); V=$W/vault-$which-1
  "$B" keygen --out "$W/lab-$which" > /dev/null
  "$B" recipient add lab --key "$W/lab-$which.pub" --vault "$V" --passphrase-file "$W/pass" > /dev/null
done
for pass in 1 2 3; do
  for which in old new; do
    B=$(binary $which); V=$W/vault-$which-1
    echo "$which verify (anchor): $(t "$B" verify --vault "$V" --passphrase-file "$W/pass")"
    echo "$which rebuild: $(t "$B" rebuild --vault "$V" --passphrase-file "$W/pass")"
  done
done
for category in body heart; do
  for which in old new; do
    B=$(binary $which); V=$W/vault-$which-1
    "$B" revoke lab --vault "$V" --passphrase-file "$W/pass" > /dev/null 2>&1
    "$B" grant lab --categories $category --granularity raw --vault "$V" --passphrase-file "$W/pass" > /dev/null
  done
  for pass in 1 2 3; do
    for which in old new; do
      B=$(binary $which); V=$W/vault-$which-1; rm -f "$W/out-$which.bundle"
      echo "$which export $category raw: $(t "$B" export lab --out "$W/out-$which.bundle" --vault "$V" --passphrase-file "$W/pass") $(stat -c %s "$W/out-$which.bundle" 2>/dev/null) bytes"
    done
  done
done
rm -rf "$W"/vault-*
echo "=== serve new"; .build/release/vaultbench serve --vaultctl "$NEW" 2>&1 | grep -v '^$'
echo "=== serve old"; .build/release/vaultbench serve --vaultctl "$OLD" 2>&1 | grep -v '^$'
