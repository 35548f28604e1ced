#!/bin/bash
# make test from a fresh clone of this repository at each commit given, one after the other, the
# build and the tests timed apart (docs/benchmarks.md, "`make test` from a fresh clone"):
#   scripts/compare-make-test.sh 3cd72c0 HEAD
export PATH="/opt/swift/usr/bin:$PATH"
REPO=$(cd "$(dirname "$0")/.." && pwd)
for rev in "$@"; do
  dir=/tmp/mt-$rev
  rm -rf $dir && git clone -q "$REPO" $dir && cd $dir && git checkout -q $rev
  s=$(date +%s.%N)
  swift build --build-tests > /tmp/mt-$rev.build.log 2>&1; brc=$?
  m=$(date +%s.%N)
  CI=true swift test --skip-build > /tmp/mt-$rev.test.log 2>&1; trc=$?
  e=$(date +%s.%N)
  echo "$rev build $(echo "$m - $s" | bc) s rc=$brc; tests $(echo "$e - $m" | bc) s rc=$trc; $(grep -E 'Test run with' /tmp/mt-$rev.test.log | tail -1)"
  cd /tmp && rm -rf $dir/.build
done
