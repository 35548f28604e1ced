#!/usr/bin/env bash
# Installs what building and testing healthvault needs and is missing: libsodium, sqlite3, zlib, libdeflate
# and libqrencode headers, and with --test Chromium (the report's tests) and PostgreSQL (the study tests)
# (and pkg-config, which SwiftPM's system-library targets use to find them).
# As root it uses apt-get; otherwise it names the packages to install and fails.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists libsodium || missing+=(libsodium-dev)
    pkg-config --exists sqlite3 || missing+=(libsqlite3-dev)
    pkg-config --exists zlib || missing+=(zlib1g-dev)
    pkg-config --exists libdeflate || missing+=(libdeflate-dev)
    pkg-config --exists libqrencode || missing+=(libqrencode-dev)
else
    missing+=(libsodium-dev libsqlite3-dev zlib1g-dev libdeflate-dev libqrencode-dev)
fi

# With --test: the report's tests load it in a real headless browser; the study tests load
# bundles into a real PostgreSQL server they start themselves.
if [ "${1:-}" = "--test" ]; then
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
fi

if ! command -v swift >/dev/null 2>&1 && [ ! -x /opt/swift/usr/bin/swift ]; then
    echo "healthvault needs a Swift 6 toolchain (swift not on PATH and not at /opt/swift)." >&2
    exit 1
fi

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
    echo "healthvault needs these packages: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
