// Every suite of this target uses the shared test helpers (CLIRunner, TemporaryDirectory).
@_exported import TestSupport
