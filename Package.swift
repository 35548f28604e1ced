// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "healthvault",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "vaultctl", targets: ["vaultctl"]),
        .executable(name: "healthvault-demo", targets: ["healthvault-demo"]),
        .library(name: "Vault", targets: ["Vault"]),
        .library(name: "EventLog", targets: ["EventLog"]),
        .library(name: "Projections", targets: ["Projections"]),
        .library(name: "HealthModel", targets: ["HealthModel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", exact: "0.9.20"),
        // `vaultctl serve`: HTTP on SwiftNIO, TLS through swift-nio-ssl, the vault-made certificate
        // through swift-certificates (already a dependency of swift-nio-ssl).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // `vaultctl study load --into postgres://...`: the researcher's PostgreSQL.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // zlib: the export XML inflated as it streams from the zip (ZipEntryStream).
        .systemLibrary(
            name: "CZlibSystem",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // libdeflate: CRC-32 of zip entries and the log frames' compression and inflation (whole
        // buffers; a zip's streamed inflation is zlib's).
        .systemLibrary(
            name: "CLibDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        // QR codes for `companion pair` (Debian's libqrencode).
        .systemLibrary(
            name: "CQREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Keys, secret bytes and passphrases in sodium_malloc'd memory; libsodium's initialisation
        // and return codes in one place.
        .target(name: "SecureMemory", dependencies: ["CSodium"]),
        // Little-endian integers and LEB128 varints: the one codec every binary format uses; JSON's
        // string escapes, decoded once for both JSON readers.
        .target(name: "BinaryCoding"),
        // Files behind a protocol (POSIX, and the tests' fault-injecting ones): the log, the
        // backups and the researcher's bundles write through it.
        // copy_file_range(2) for Storage's in-kernel copies (glibc declares it only under _GNU_SOURCE).
        .target(name: "CFileCopy"),
        .target(name: "Storage", dependencies: ["CFileCopy"]),
        // The hand-offs between threads: `ChunkPipe` (a consumer pulls), `BatchWorker` (a producer
        // pushes), `GroupWorker` (many producers, one thread taking everything waiting).
        .target(name: "HandOff"),
        // Bytes, frames and keys. Knows nothing of health.
        .target(name: "EventLog", dependencies: ["BinaryCoding", "CLibDeflate", "CSodium", "SecureMemory", "Storage"]),
        // The health model: types and their categories, units, timestamps, local days, rings,
        // sources. Imports nothing.
        .target(name: "HealthModel"),
        // A SQLite VFS that encrypts the read models' files block by block with libsodium
        // (docs/projections.md says why it is ours and not SQLCipher).
        .target(
            name: "CPageCipher",
            dependencies: ["CSQLite", "CSodium"],
            linkerSettings: [.linkedLibrary("sqlite3"), .linkedLibrary("sodium")]
        ),
        // The XML tokenizer's attribute-value scan, sixteen bytes a step (SSE2; docs/benchmarks-history.md).
        .target(name: "CByteScan"),
        // A prefetch hint for the import's identity table (a lookup into it waits for memory).
        .target(name: "CMemoryHints"),
        // SQLite connections and statements, plain or through the page cipher (CPageCipher), and
        // their errors: the read models and the researcher's study database both use them.
        .target(name: "SQLiteStore", dependencies: ["CSQLite", "CPageCipher", "SecureMemory"]),
        // SQLite read models, on disk through CPageCipher. Takes its own small input types, never Vault's.
        .target(name: "Projections", dependencies: ["BinaryCoding", "CSQLite", "CPageCipher", "HealthModel", "SecureMemory", "SQLiteStore"]),
        // Public-key envelopes for bundles: signing, sealed boxes, chunked stream encryption.
        .target(name: "Envelope", dependencies: ["BinaryCoding", "CSodium", "SecureMemory"]),
        // The persisted vocabulary: every event the log holds and its binary codec, names spelled
        // out (PersistedNames), never taken from another module's enum.
        .target(name: "VaultEvents", dependencies: ["BinaryCoding", "HealthModel"]),
        // Parsers over byte streams (Apple Health zip and XML, companion JSON, CSV): a file, a zip
        // entry and a request's body go through the same code, into an `ImportSink`.
        .target(name: "Importers", dependencies: ["BinaryCoding", "CByteScan", "CLibDeflate", "CZlibSystem", "HandOff", "HealthModel", "VaultEvents", "ZIPFoundation"]),
        // The bundle a researcher receives: format, writer, streaming reader, key files. Usable
        // without the vault.
        .target(name: "ResearchBundle", dependencies: ["BinaryCoding", "Envelope", "HealthModel", "SecureMemory", "Storage"]),
        // The facade: lifecycle, import sessions, consent, exports, projection orchestration.
        .target(name: "Vault", dependencies: [
            "BinaryCoding", "CMemoryHints", "EventLog", "SecureMemory", "HealthModel", "VaultEvents", "Importers", "ResearchBundle",
            "Projections", "Envelope", "HandOff",
        ]),
        // `vaultctl serve`: the companion endpoint over HTTPS (Hummingbird on SwiftNIO), the vault-made
        // certificate, tokens, limits, and the group commit that writes posts to the vault.
        .target(name: "CompanionServer", dependencies: [
            "Vault", "HealthModel", "SecureMemory", "HandOff",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `vaultctl report`: one self-contained HTML file drawn from the read models (swift-mustache,
        // inline SVG).
        .target(name: "Report", dependencies: ["Projections", "ResearchBundle", "HealthModel", .product(name: "Mustache", package: "swift-mustache")]),
        // A client of the companion endpoint (NIOHTTP1 over NIOSSL, certificate pinned), for the
        // server's tests and its load benchmark.
        .target(name: "CompanionClient", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The researcher's study database: bundles of many participants loaded into SQLite (embedded)
        // or PostgreSQL (PostgresNIO), all or nothing, withdrawals honoured (docs/study-schema.md).
        .target(name: "StudyStore", dependencies: [
            "BinaryCoding", "ResearchBundle", "SQLiteStore", "CSQLite", "Envelope", "SecureMemory", "HandOff",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: [.linkedLibrary("sqlite3")]),
        // Realistic synthetic Apple Health exports for tests, the demo and the benchmarks.
        .target(name: "SyntheticHealth", dependencies: ["BinaryCoding", "HealthModel", "ZIPFoundation"]),
        // A generated study (participants' vaults, consents of four kinds, their bundles, a roster)
        // for the tests, the demo and `vaultbench study`.
        .target(name: "SyntheticStudy", dependencies: ["Vault", "ResearchBundle", "SyntheticHealth", "HealthModel", "EventLog"]),
        // Parses arguments and prints; everything else is in Vault.
        .executableTarget(
            name: "vaultctl",
            dependencies: [
                "Vault",
                "ResearchBundle",
                "HealthModel",
                "CompanionServer",
                "CompanionClient",
                "CQREncode",
                "Report",
                "StudyStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The demo's generated inputs (an export, a FIT file, a study), run by `vaultctl demo` from
        // beside it, so that the installed vaultctl links no generator.
        .executableTarget(
            name: "healthvault-demo",
            dependencies: ["SyntheticHealth", "SyntheticStudy", "SecureMemory", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Benchmarks whose output docs/benchmarks-history.md records.
        .executableTarget(
            name: "vaultbench",
            dependencies: [
                "BinaryCoding",
                "EventLog",
                "SecureMemory",
                "CSodium",
                "CSQLite",
                "CPageCipher",
                "Envelope",
                "Vault",
                "ResearchBundle",
                "Projections",
                "HealthModel",
                "SyntheticHealth",
                "SyntheticStudy",
                "CompanionClient",
                "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Fuzz harnesses for every parser of untrusted bytes; replayed by the tests, driven by
        // libFuzzer through `healthvault-fuzz` (scripts/fuzz.sh).
        .target(name: "FuzzTargets", dependencies: [
            "EventLog", "SecureMemory", "Envelope", "VaultEvents", "Importers", "ResearchBundle", "Vault", "HealthModel", "Projections",
            "SyntheticHealth", "ZIPFoundation",
        ]),
        .systemLibrary(name: "CLibFuzzer"),
        .executableTarget(name: "healthvault-fuzz", dependencies: ["FuzzTargets", "CLibFuzzer"]),
        // Test doubles and helpers the tests and the benchmarks share (a library, so that the bench
        // depends on nothing under Tests/): temporary directories, file systems that fail or lose
        // power at a chosen step, a PostgreSQL server in a temporary directory. vaultctl links none of it.
        .target(name: "TestSupport", dependencies: ["BinaryCoding", "EventLog", "SecureMemory"]),
        // The one way test suites make a vault.
        .target(name: "VaultTestSupport", dependencies: ["Vault", "TestSupport"], path: "Tests/VaultTestSupport"),
        .testTarget(name: "EventLogTests", dependencies: ["EventLog", "SecureMemory", "TestSupport"]),
        .testTarget(name: "ProjectionTests", dependencies: [
            "HealthModel", "Projections", "Vault", "VaultEvents", "EventLog", "SecureMemory", "TestSupport", "VaultTestSupport", "SyntheticHealth",
        ]),
        .testTarget(name: "VaultTests", dependencies: [
            "Vault", "VaultEvents", "Importers", "ResearchBundle", "SecureMemory", "HealthModel", "Projections", "EventLog", "Envelope",
            "TestSupport", "VaultTestSupport", "ZIPFoundation", "SyntheticHealth", "CByteScan", "BinaryCoding",
        ]),
        .testTarget(name: "FuzzTests", dependencies: ["FuzzTargets", "Vault", "VaultTestSupport", "TestSupport"]),
        .testTarget(name: "EnvelopeTests", dependencies: ["Envelope", "SecureMemory"]),
        .testTarget(name: "ResearchBundleTests", dependencies: ["ResearchBundle", "HealthModel"]),
        .testTarget(name: "HandOffTests", dependencies: ["HandOff"]),
        .testTarget(name: "BinaryCodingTests", dependencies: ["BinaryCoding"]),
        .testTarget(name: "SecureMemoryTests", dependencies: ["SecureMemory"]),
        .testTarget(name: "SQLiteStoreTests", dependencies: ["SQLiteStore", "SecureMemory", "TestSupport"]),
        .testTarget(name: "VaultEventsTests", dependencies: ["VaultEvents", "HealthModel"]),
        .testTarget(name: "ReportTests", dependencies: ["Report", "Projections", "HealthModel", "ResearchBundle"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "TestSupport"]),
        .testTarget(name: "StudyStoreTests", dependencies: ["StudyStore", "ResearchBundle", "TestSupport", .product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(name: "ImportersTests", dependencies: ["Importers", "HealthModel", "VaultEvents", "CByteScan", "TestSupport", "SyntheticHealth"]),
        .testTarget(name: "HealthModelTests", dependencies: ["HealthModel", "TestSupport"]),
        .testTarget(name: "VaultctlTests", dependencies: ["vaultctl", "healthvault-demo", "ResearchBundle", "TestSupport", "VaultTestSupport", "SyntheticHealth", "Envelope", "SecureMemory", "Projections", "StudyStore"]),
        .testTarget(name: "CompanionServerTests", dependencies: ["vaultctl", "CompanionClient", "TestSupport", "VaultTestSupport", "SyntheticHealth"]),
    ]
)
