#!/usr/bin/env bash
# The benchmarks recorded in docs/benchmarks.md: the event log, the projections, and the import of a generated
# one-year export against healthkit-to-sqlite 1.0.1 (installed from PyPI into a virtualenv under
# .build/, so that both run on this machine in the same session).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

venv=.build/anchor-venv
if [ ! -x "$venv/bin/healthkit-to-sqlite" ]; then
    echo "installing healthkit-to-sqlite 1.0.1 into $venv (the import benchmark's anchor)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q healthkit-to-sqlite==1.0.1
fi

# The FIT benchmark's anchor: Garmin's FIT SDK for Python (and python-fitparse, which the oracle
# script uses for compressed timestamps).
fitvenv=.build/fitvenv
if [ ! -x "$fitvenv/bin/python" ] || ! "$fitvenv/bin/python" -c "import garmin_fit_sdk" 2>/dev/null; then
    echo "installing garmin-fit-sdk 21.218.0 into $fitvenv (the FIT benchmark's anchor)" >&2
    python3 -m venv "$fitvenv"
    "$fitvenv/bin/pip" install -q garmin-fit-sdk==21.218.0 fitparse==1.2.0
fi

# A Debian package a benchmark compares against: installed as root, else the benchmark skips it.
install_anchor() {  # command, what it is for, what is skipped without it
    if ! command -v "$1" >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "installing $1 ($2)" >&2
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
        else
            echo "$1 is not installed: $3 (sudo apt-get install $1)" >&2
        fi
    fi
}
install_anchor sqlcipher "the page benchmark's comparison" "vaultbench pages skips its comparison"
install_anchor wrk "the serve benchmark's external load generator" "vaultbench serve skips its external load"


# The binaries a user installs (`make release`): the Swift runtime linked in. The two builds take
# the same flags, so that neither rebuilds the other's modules.
$SWIFT build -c release --static-swift-stdlib --product vaultbench
$SWIFT build -c release --static-swift-stdlib --product vaultctl
.build/release/vaultbench log
echo
.build/release/vaultbench import --anchor "$venv/bin/healthkit-to-sqlite"
echo
.build/release/vaultbench projections
echo
.build/release/vaultbench bundle
echo
.build/release/vaultbench export-scope
echo
.build/release/vaultbench rekey
echo
.build/release/vaultbench erase
echo
.build/release/vaultbench commands --anchor "$venv/bin/healthkit-to-sqlite"
echo
.build/release/vaultbench pages
echo
.build/release/vaultbench serve
echo
.build/release/vaultbench backup
echo
.build/release/vaultbench fit --python "$fitvenv/bin/python"
