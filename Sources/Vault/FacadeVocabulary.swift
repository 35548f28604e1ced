// The names a client of the facade uses (vaultctl, the benchmarks, a researcher's script), so
// that it imports `Vault` and `HealthModel` and nothing below. Each is the declaration of the
// module that owns it, re-exported one by one: nothing else of those modules leaks through.

// The persisted vocabulary (VaultEvents).
@_exported import enum VaultEvents.VaultEvent
@_exported import enum VaultEvents.Granularity
@_exported import struct VaultEvents.ConsentGrant
@_exported import struct VaultEvents.ConsentRevocation
@_exported import struct VaultEvents.RecipientRecord
@_exported import struct VaultEvents.ExportRecord
@_exported import struct VaultEvents.ImportRecord
@_exported import struct VaultEvents.IdentityRecord
@_exported import struct VaultEvents.GoalSetting
@_exported import struct VaultEvents.UndecodableEvent
@_exported import struct VaultEvents.ErasureRecord
@_exported import struct VaultEvents.CompanionPairing
@_exported import struct VaultEvents.CompanionRevocation
@_exported import struct VaultEvents.TrackerDefinition
@_exported import struct VaultEvents.TrackerLevel
@_exported import struct VaultEvents.TrackerEntry
@_exported import struct VaultEvents.ExerciseDefinition
@_exported import struct VaultEvents.PracticeEntry

// What an import reports (Importers).
@_exported import struct Importers.ImportReport
@_exported import struct Importers.FileImportReport
@_exported import enum Importers.ImportError
@_exported import struct Importers.SourceLocation
@_exported import struct Importers.CompanionJSONImporter
@_exported import enum Importers.LocalTime

// The researcher's side of a bundle is not re-exported: a client that opens bundles imports
// `ResearchBundle`, which needs neither the vault nor the log.

// Secrets as the command line reads them (SecureMemory).
@_exported import struct SecureMemory.Passphrase
@_exported import func SecureMemory.secureZero

// The log's outcomes a command reports (EventLog).
@_exported import enum EventLog.EventLogError
@_exported import struct EventLog.VerificationReport
@_exported import struct EventLog.LogPosition

// What the read models answer (Projections).
@_exported import struct Projections.RingDay
@_exported import struct Projections.AppleRings
@_exported import enum Projections.SummaryPeriod
@_exported import struct Projections.SummaryRow
@_exported import struct Projections.HeldTypeRow
@_exported import struct Projections.WorkoutRow
@_exported import struct Projections.SleepNight
@_exported import struct Projections.TrainingPeriod
@_exported import struct Projections.TrainingItem
@_exported import enum Projections.TrainingTally
@_exported import enum Projections.TrainingShareWeight
@_exported import struct Projections.Streak
@_exported import struct Projections.Streaks
@_exported import struct Projections.GoalChange
@_exported import struct Projections.SourceRow
@_exported import struct Projections.SQLResult
@_exported import enum SQLiteStore.SQLValue
@_exported import struct SQLiteStore.SQLiteError
@_exported import protocol SQLiteStore.StoredDataError
@_exported import enum Projections.ProjectionError
