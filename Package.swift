// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "healthvault",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "vaultctl", targets: ["vaultctl"]),
        .library(name: "Vault", targets: ["Vault"]),
        .library(name: "EventLog", targets: ["EventLog"]),
        .library(name: "Projections", targets: ["Projections"]),
        .library(name: "HealthModel", targets: ["HealthModel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", exact: "0.9.20"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Bytes, frames and keys. Knows nothing of health.
        .target(name: "EventLog", dependencies: ["CSodium"]),
        // The health model: types and their categories, units, timestamps, local days, rings,
        // sources. Imports nothing.
        .target(name: "HealthModel"),
        // SQLite read models. Takes its own small input types, never Vault's.
        .target(name: "Projections", dependencies: ["CSQLite", "HealthModel"]),
        // The facade: samples, consent, importers, bundles.
        // Public-key envelopes for bundles: signing, sealed boxes, chunked stream encryption.
        .target(name: "Envelope", dependencies: ["CSodium", "EventLog"]),
        .target(name: "Vault", dependencies: ["EventLog", "HealthModel", "Projections", "Envelope", "ZIPFoundation"]),
        // Realistic synthetic Apple Health exports for tests, the demo and the benchmarks.
        .target(name: "SyntheticHealth", dependencies: ["HealthModel", "ZIPFoundation"]),
        // Parses arguments and prints; everything else is in Vault.
        .executableTarget(
            name: "vaultctl",
            dependencies: [
                "Vault",
                "HealthModel",
                "Projections",
                "SyntheticHealth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Benchmarks whose output docs/benchmarks.md records.
        .executableTarget(
            name: "vaultbench",
            dependencies: [
                "EventLog",
                "CSodium",
                "Envelope",
                "Vault",
                "HealthModel",
                "SyntheticHealth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Fuzz harnesses for every parser of untrusted bytes; replayed by the tests, driven by
        // libFuzzer through `healthvault-fuzz` (scripts/fuzz.sh).
        .target(name: "FuzzTargets", dependencies: ["EventLog", "Envelope", "Vault", "HealthModel", "Projections", "SyntheticHealth", "ZIPFoundation"]),
        .systemLibrary(name: "CLibFuzzer"),
        .executableTarget(name: "healthvault-fuzz", dependencies: ["FuzzTargets", "CLibFuzzer"]),
        // Shared by the tests: temporary directories and a file system that crashes at a chosen step.
        .target(name: "TestSupport", dependencies: ["EventLog"], path: "Tests/TestSupport"),
        .testTarget(name: "EventLogTests", dependencies: ["EventLog", "TestSupport"]),
        .testTarget(name: "ProjectionTests", dependencies: ["HealthModel", "Projections", "Vault", "EventLog", "TestSupport", "SyntheticHealth"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "HealthModel", "Projections", "EventLog", "Envelope", "TestSupport", "ZIPFoundation", "SyntheticHealth"]),
        .testTarget(name: "FuzzTests", dependencies: ["FuzzTargets"]),
        .testTarget(name: "EnvelopeTests", dependencies: ["Envelope", "EventLog"]),
        .testTarget(name: "HealthModelTests", dependencies: ["HealthModel"]),
        .testTarget(name: "VaultctlTests", dependencies: ["vaultctl", "TestSupport", "SyntheticHealth", "Envelope"]),
    ]
)
