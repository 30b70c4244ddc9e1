// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "activity-ledger",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "activity-ledger", targets: ["activity-ledger"]),
        .executable(name: "ledger-bench", targets: ["ledger-bench"]),
        .library(name: "Ledger", targets: ["Ledger"]),
        .library(name: "LedgerTesting", targets: ["LedgerTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        // Already resolved through Hummingbird; named because LedgerServer imports them itself.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // The APNs proxy: HTTP/2 both ways (HummingbirdHTTP2 serves, async-http-client sends), TLS.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // The APNs proxy's HTTP/2 server and upstream connections, on NIO's event loops (README "APNs proxy").
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        // The PostgreSQL backend (SPEC §6 "Scale-out").
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        // Hex, UUID and JSON string spellings, below both ActivityModel and LedgerStore (Sources/Formats/Hex.swift).
        .target(name: "Formats"),
        .target(
            name: "LedgerStore",
            dependencies: [
                "CZstd",
                "Formats",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The migrations: symbolic links to Schemas/sql, their one home, compiled in as bytes.
            resources: [
                .embedInCode("Schema/SQL/001_event_log.sql"), .embedInCode("Schema/SQL/002_sealed_segments.sql"),
                .embedInCode("Schema/SQL/003_packed_segments.sql"), .embedInCode("Schema/SQL/004_sealed_id_buckets.sql"),
            ]
        ),
        .target(
            name: "ActivityModel",
            dependencies: [
                "Formats",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "Ledger",
            dependencies: [
                "LedgerStore",
                "LedgerPostgres",
                "ActivityModel",
                "Formats",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The Ledger target's migrations: symbolic links to Schemas/sql/ledger, compiled in as bytes.
            resources: [
                .embedInCode("SQL/101_projections.sql"), .embedInCode("SQL/102_stream_owners.sql"),
                .embedInCode("SQL/103_nightly_facts.sql"), .embedInCode("SQL/104_honoured_ends.sql"),
                .embedInCode("SQL/105_app_namespaces.sql"), .embedInCode("SQL/201_reconcile_runs.sql"),
            ]
        ),
        // The event log on PostgreSQL, beside the SQLite file, behind the same `EventLog` protocol.
        .target(
            name: "LedgerPostgres",
            dependencies: [
                "LedgerStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The migrations: symbolic links to Schemas/sql/postgresql, compiled in as bytes.
            resources: [.embedInCode("SQL/001_event_log.sql"), .embedInCode("SQL/002_ledger.sql")]
        ),
        // The incident view's page, stylesheet and script, embedded (SPEC §7 "Web page").
        .target(name: "LedgerWeb", dependencies: ["Ledger", "ActivityModel"]),
        .target(
            name: "LedgerServer",
            dependencies: [
                "Ledger",
                "LedgerWeb",
                "LedgerStore",
                "ActivityModel",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The APNs proxy and the APNs client reconciliation sends with (README "APNs proxy"). Beside
        // LedgerServer, over the same Ledger API: only this target talks to APNs.
        .target(
            name: "APNsProxy",
            dependencies: [
                "Ledger",
                "ActivityModel",
                "Formats",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "LedgerTesting",
            dependencies: [
                "Ledger", "LedgerStore", "LedgerPostgres", "ActivityModel", "Formats",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "activity-ledger",
            dependencies: [
                "Ledger",
                "LedgerServer",
                "LedgerWeb",
                "APNsProxy",
                "LedgerStore",
                "LedgerPostgres",
                "ActivityModel",
                "Formats",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "ledger-bench",
            dependencies: [
                "LedgerPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "Ledger",
                "LedgerStore",
                "LedgerTesting",
                "ActivityModel",
                "APNsProxy",
                "CZstd",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tools/ledger-bench"
        ),
        .testTarget(
            name: "LedgerStoreTests",
            dependencies: [
                "LedgerStore", "LedgerTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "FormatsTests",
            dependencies: ["Formats"]
        ),
        .testTarget(
            name: "ActivityModelTests",
            dependencies: ["ActivityModel"],
            resources: [.copy("Scenarios")]
        ),
        .testTarget(
            name: "LedgerTests",
            dependencies: [
                "Ledger", "LedgerStore", "LedgerPostgres", "ActivityModel", "LedgerTesting", "Formats",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LedgerPostgresTests",
            dependencies: [
                "Ledger", "LedgerPostgres", "LedgerStore", "LedgerTesting", "ActivityModel",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "APNsProxyTests",
            dependencies: [
                "APNsProxy", "Ledger", "ActivityModel",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "LedgerServerTests",
            dependencies: [
                "LedgerServer", "LedgerWeb", "LedgerTesting", "Ledger", "LedgerStore", "ActivityModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ]
)

// One loop so that every target gets the same strictness (as swift-log does).
for target in package.targets where [.executable, .test, .regular].contains(target.type) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    if target.type == .regular {
        settings.append(.unsafeFlags(["-Xfrontend", "-require-explicit-sendable"]))
    }
    target.swiftSettings = settings
}
