import EventLog
import Foundation
import HealthModel
import Importers
import VaultEvents

/// One `import` command: a single log transaction for all its files, so that a failure leaves
/// the vault as it was, and the identities of every data event already in the vault, so that
/// importing the same data again adds nothing.
///
/// Identities are 64-bit hashes of each event's identifying prefix. An event's identity can only
/// match one of its own category and month (the label that picks its key), so the identities of
/// a category-month are read from its frames the first time the import meets it
/// (`loadIdentities`): an import costs the months it touches. They live in an in-memory table (`IdentitySet`) up to `memoryBudgetSlots`
/// slots (8 MiB by default, about 730,000 events); past that the session moves them to an
/// `ExternalDeduplicator`, which sets events aside in sealed scratch files and decides at the end
/// of each file, in bounded memory.
///
/// The state every sample touches is marked `@exclusivity(unchecked)`: a session is one thread's,
/// its accesses are straight-line (what calls back into it, `KeyScopedTables.encoder(for:visiting:)`
/// and `PendingAdmits.withContents`, touches other properties than the one held), and the checks
/// at run time took 8 % of a FIT folder's session thread (`swift_beginAccess`, docs/benchmarks.md).
final class ImportSession: ImportSink {
    let log: EventLog
    let tables: KeyScopedTables
    let scratchDirectory: String
    let memoryBudgetSlots: Int
    @exclusivity(unchecked) private var identities: IdentitySet
    /// How identities are hashed, in memory and outside it alike.
    private let hasher = IdentityHasher()
    @exclusivity(unchecked) private var external: ExternalDeduplicator?
    @exclusivity(unchecked) private var transaction: LogTransaction
    /// The current file's report.
    var file: FileImportReport {
        var report = counts
        report.warnings = warnings
        return report
    }
    /// The report's counts, bumped for every event; the warnings are kept apart, so that no
    /// access to the counts spans an array's growth (such accesses are checked at run time).
    @exclusivity(unchecked) private var counts = FileImportReport(path: "", format: "")
    private var warnings: [String] = []
    /// Files ended whose records wait outside memory to be decided with a later file's.
    private var waiting: [(report: FileImportReport, displayName: String)] = []
    /// Samples of types kept under `other`, by type, for the file's warning.
    private var otherTypes: [String: Int] = [:]
    /// Each sample type's category, by the type string's identity (`StringMemo`).
    private let categories = StringMemo<HealthCategory>()
    /// The data key of each category and month met so far.
    private var keyIDs: [DataLabel: UInt32] = [:]
    /// Per category (by `ordinal`), the last sample's local day and what its category-month
    /// decided. Exports interleave types, and so categories, nearly record by record, but each
    /// category's samples come in runs of nearby days: most samples skip the calendar, the erased
    /// set and two lookups, each hashing a label or key.
    @exclusivity(unchecked) private var recentMonths = [RecentMonth?](repeating: nil, count: HealthCategory.allCases.count)
    /// Categories and months whose keys were destroyed: their data is refused (counted as
    /// erased) unless `allowErased`, so that importing an old export again does not bring it back.
    var erasedLabels: Set<DataLabel> = [] { didSet { forgetRecentMonths() } }
    var allowErased = false { didSet { forgetRecentMonths() } }
    /// Whether the current file is the session's last: what it adds is not looked for by a later file.
    private var fileIsLast = false
    /// Keys first met in the session's last file that held no event before: nothing in them can
    /// match a record but what the file itself adds (see `add(sample:nested:)`).
    private var freshKeys: Set<UInt32> = []
    /// Whether a correlation can hold a sample of a type, by the type string's identity.
    private let correlationMembers = StringMemo<Bool>()
    /// Types of which the current file added samples without keeping their identities.
    private var unrememberedTypes: Set<String> = []
    private var unrememberedMemo = StringMemo<Bool>()
    /// Whether the vault holds events identified by the legacy scheme (written before identities
    /// covered every field): new records are then matched against those too.
    @exclusivity(unchecked) private var hasLegacyIdentities = false
    /// Whether the current file's quantity samples follow the upsert rule (companion JSON and
    /// posts) instead of the multiset rule of exports.
    var revisable = false
    private var revisions = RevisionTable()
    /// The bytes of the sample encoded last (`add(sample:nested:)`).
    @exclusivity(unchecked) private var encoded: [UInt8] = []
    /// Samples whose identity's slot was asked for, decided a few samples later, in order
    /// (`decidePending`, before anything else reads or changes the identities or appends).
    @exclusivity(unchecked) private var pending = PendingAdmits()
    /// Identities of events the vault holds, read from a month's frames, whose slots were asked
    /// for and which wait to be inserted (`addExisting`); none once the month is read.
    @exclusivity(unchecked) private var waitingExisting: [UInt64] = []
    /// Where the read models' inputs of the events appended go, when the import feeds them
    /// (`Vault.importFiles`); nil: the read models catch up from the log after the commit.
    @exclusivity(unchecked) var readModelFeed: ImportReadModelFeed?
    /// Committed samples the upsert rule remembers before it forgets and reads again (tests lower it).
    var revisionBudget: Int {
        get { revisions.committedBudget }
        set { revisions.committedBudget = newValue }
    }

    init(log: EventLog, tables: KeyScopedTables, expected: Int, scratchDirectory: String, memoryBudgetSlots: Int) throws {
        self.log = log
        self.tables = tables
        self.scratchDirectory = scratchDirectory
        self.memoryBudgetSlots = memoryBudgetSlots
        self.identities = IdentitySet(expected: expected, maximumSlots: memoryBudgetSlots)
        self.transaction = try log.beginTransaction()
    }

    /// Whether identities have moved out of memory.
    var isExternal: Bool { external != nil }

    /// Records the identity of an event already in the vault (one copy); `string` resolves its ids.
    /// Its slot is asked for from memory and the copy inserted a few events later
    /// (`insertWaitingExisting`), as `PendingAdmits` does for records: a re-import reads millions.
    private func addExisting(event bytes: UnsafeRawBufferPointer, string: (UInt64) -> String?) throws {
        guard let span = EventIdentity.span(of: bytes) else { return }
        let identity = UnsafeRawBufferPointer(rebasing: bytes.prefix(span.length))
        let hash: UInt64
        if span.legacy {
            hasLegacyIdentities = true
            hash = legacyHash(bytes, string: string) ?? hasher.legacyHash(kind: EventIdentity.legacyKind(of: bytes), prefix: identity)
        } else {
            hash = Self.identityHash(identity, hasher)
        }
        if external == nil, !identities.wouldGrow(beyond: memoryBudgetSlots, adding: waitingExisting.count + 1) {
            identities.prefetch(hash)
            waitingExisting.append(hash)
            if waitingExisting.count >= PendingAdmits.capacity { insertWaitingExisting() }
            return
        }
        insertWaitingExisting()
        if let external {
            try external.addExisting(hash: hash)
            return
        }
        if identities.wouldGrow(beyond: memoryBudgetSlots) { try moveIdentitiesOutOfMemory() }
        if let external { try external.addExisting(hash: hash) } else { identities.addExisting(hash: hash) }
    }

    /// Inserts the copies `addExisting` left waiting, in the order they came.
    private func insertWaitingExisting() {
        for hash in waitingExisting { identities.addExisting(hash: hash) }
        waitingExisting.removeAll(keepingCapacity: true)
    }

    private func moveIdentitiesOutOfMemory() throws {
        external = try ExternalDeduplicator(directory: scratchDirectory, existing: identities.sortedHashes(), inUse: identities.copiesInUse())
        identities.releaseStorage()
    }

    /// Begins a file; `isLast` when no file follows it in this session.
    func startFile(path: String, format: String, isLast: Bool = false) {
        fileIsLast = isLast
        unrememberedTypes = []
        unrememberedMemo = StringMemo<Bool>()
        counts = FileImportReport(path: path, format: format)
        warnings = []
        otherTypes = [:]
    }

    /// Adds an event unless the vault already has it. Records nested in a correlation that are
    /// already present (as they are: the export repeats them at top level) are not counted.
    func add(_ event: VaultEvent, nested: Bool = false) throws {
        if case .sample(let sample) = event { return try add(sample: sample, nested: nested) }
        try decidePending()
        let month: RecentMonth
        if let label = DataLabel.of(event) {
            month = try decide(label, day: nil)
        } else {
            month = RecentMonth(day: nil, key: (EventLog.auditKeyID, try tables.encoder(for: EventLog.auditKeyID)))
        }
        guard let (keyID, encoder) = month.key else {
            if !nested { counts.erased += 1 }
            return
        }
        let (bytes, identityLength) = encoder.encode(event)
        try flushDefinitions(encoder, keyID: keyID)
        guard try admit(bytes, identityLength: identityLength, keyID: keyID, encoder: encoder, nested: nested, identified: !event.isAudit) else { return }
        readModelFeed?.appended(event)
    }

    /// Adds a sample, nearly every event, unless the vault already has it: `add(_:nested:)` for
    /// a sample the parser hands over on its own, never wrapped in an event and copied out again
    /// (a copy of an event moves its ~150 bytes and retains each of its strings).
    func add(sample: consuming HealthSample, nested: Bool = false) throws {
        let category = categories.value(for: sample.type, HealthCategory.of(type:))
        if category == .other { otherTypes[sample.type, default: 0] += 1 }
        let day = LocalDay.floorDivide(sample.start.seconds + Int64(sample.start.utcOffset), 86_400)
        let slot = category.ordinal
        let month: RecentMonth
        if let recent = recentMonths[slot], recent.day == day {
            month = recent
        } else {
            month = try decide(DataLabel(category: category, month: LocalMonth(LocalDay(dayNumber: day))), day: day)
            recentMonths[slot] = month
        }
        guard let (keyID, encoder) = month.key else {
            if !nested { counts.erased += 1 }
            return
        }
        // Into the same memory for every sample (a buffer allocated and freed per sample cost
        // ~350 instructions, measured); what keeps the bytes (the upsert rule, identities set
        // aside outside memory) keeps a copy, made when the buffer is next reused.
        encoder.encode(sample: sample, into: &encoded)
        let bytes = encoded
        // Definitions go out before the event that needs them, and whatever happens to it:
        // the encoder has assigned their ids.
        try flushDefinitions(encoder, keyID: keyID)
        if revisable, !nested, case .quantity = sample.value {
            // Appended at the commit, when the upsert rule has decided.
            readModelFeed?.missedAnEvent()
            switch try revisions.offer(bytes, keyID: keyID, readKey: tables.forEachEvent(of:_:)) {
            case .added: counts.added += 1
            case .replaced: counts.replaced += 1
            case .duplicate: counts.duplicates += 1
            }
            return
        }
        if month.fresh, try addUnremembered(bytes, type: sample.type, keyID: keyID, nested: nested) {
            if !nested { readModelFeed?.appended(sample: sample) }
            return
        }
        let (hash, legacy) = identityHashes(bytes, identityLength: bytes.count, encoder: encoder)
        if external == nil, !identities.wouldGrow(beyond: memoryBudgetSlots, adding: pending.count + 1) {
            identities.prefetch(hash)
            pending.add(bytes, hash: hash, legacy: legacy, keyID: keyID, nested: nested, sample: consume sample)
            if pending.isFull { try decidePending() }
            return
        }
        try decidePending()
        guard try admit(bytes, hash: hash, legacy: legacy, keyID: keyID, nested: nested) else { return }
        readModelFeed?.appended(sample: sample)
    }

    /// Decides the samples waiting in `pending`, in the order they came, as `admit` would have
    /// when each came.
    private func decidePending() throws {
        guard !pending.isEmpty else { return }
        defer { pending.removeAll() }
        try pending.withContents { entries, bytes, samples in
            for entry in entries {
                let sample = samples.takeNext()
                guard decideInMemory(entry.hash, legacy: entry.legacy, nested: entry.nested) else { continue }
                try log.append(UnsafeRawBufferPointer(rebasing: bytes[entry.range]), keyID: entry.keyID, to: &transaction)
                readModelFeed?.appended(sample: sample)
            }
        }
    }

    /// Decides, without its identity, a sample of a key that held nothing before the session's
    /// last file, when nothing can match it: no copy in the vault, no later file to look for it,
    /// and (its type no correlation holds) no correlation's member that repeats it. Records alike
    /// in every field are distinct samples within a file, so it is added, and its identity is
    /// not kept: a first import holds no more identities than its correlations' members (a
    /// ten-year export's went out of memory, and were decided from scratch files at its end).
    /// False when the sample needs its identity (`admit`).
    private func addUnremembered(_ bytes: [UInt8], type: String, keyID: UInt32, nested: Bool) throws -> Bool {
        guard !correlationMembers.value(for: type, Correlation.mayHold(memberType:)) else { return false }
        if nested {
            // Outside HealthKit's rules (no correlation holds this type), but the export repeats
            // members at top level: one whose top-level copies were added unremembered is one
            // of them, counted as a repeat like any member met after its copy.
            guard unrememberedTypes.contains(type) else { return false }
            counts.repeats += 1
            return true
        }
        _ = unrememberedMemo.value(for: type) { unrememberedTypes.insert($0).inserted }
        try decidePending()
        counts.added += 1
        try bytes.withUnsafeBytes { try log.append($0, keyID: keyID, to: &transaction) }
        return true
    }

    /// Decides an encoded event by its identity (when `identified`: audit events have none) and
    /// appends it to the log; false when it is not appended now (a duplicate, a copy, or set
    /// aside for the file's end).
    private func admit(_ bytes: [UInt8], identityLength: Int, keyID: UInt32, encoder: EventEncoder, nested: Bool, identified: Bool) throws -> Bool {
        try decidePending()
        if identified {
            let (hash, legacy) = identityHashes(bytes, identityLength: identityLength, encoder: encoder)
            return try admit(bytes, hash: hash, legacy: legacy, keyID: keyID, nested: nested)
        }
        try bytes.withUnsafeBytes { try log.append($0, keyID: keyID, to: &transaction) }
        return true
    }

    /// `admit` of an identified event whose hashes are known, nothing pending before it.
    private func admit(_ bytes: [UInt8], hash: UInt64, legacy: UInt64?, keyID: UInt32, nested: Bool) throws -> Bool {
        if external == nil && identities.wouldGrow(beyond: memoryBudgetSlots) { try moveIdentitiesOutOfMemory() }
        if let external {
            // Decided when the file ends, from bytes set aside (the read models take it then).
            try external.add(hash: hash, legacyHash: legacy, nested: nested, keyID: keyID, bytes: bytes)
            return false
        }
        guard decideInMemory(hash, legacy: legacy, nested: nested) else { return false }
        try bytes.withUnsafeBytes { try log.append($0, keyID: keyID, to: &transaction) }
        return true
    }

    /// Matches an identity in the in-memory table and counts the outcome; true when it is new.
    private func decideInMemory(_ hash: UInt64, legacy: UInt64?, nested: Bool) -> Bool {
        switch nested ? identities.matchNested(hash, legacy: legacy) : identities.matchTopLevel(hash, legacy: legacy) {
        case .added:
            counts.added += 1
            return true
        case .duplicate:
            counts.duplicates += 1
            return false
        case .copy:
            counts.repeats += 1
            return false
        }
    }

    /// An encoded event's identity hash, and its legacy-scheme hash when the vault holds such.
    private func identityHashes(_ bytes: [UInt8], identityLength: Int, encoder: EventEncoder) -> (UInt64, UInt64?) {
        bytes.withUnsafeBytes { raw in
            (Self.identityHash(UnsafeRawBufferPointer(rebasing: raw.prefix(identityLength)), hasher),
             hasLegacyIdentities ? legacyHash(raw) { encoder.string(id: $0) } : nil)
        }
    }

    /// The hash of an event's identifying bytes, under the kind they are compared as.
    private static func identityHash(_ identity: UnsafeRawBufferPointer, _ hasher: IdentityHasher) -> UInt64 {
        EventIdentity.withComparedIdentity(identity) { hasher.hash($0) }
    }

    /// The legacy-scheme hash of a sample or correlation (nil for other kinds): a category
    /// sample's by its value's name (`EventIdentity.legacyCategoryIdentity`), so iOS 8's numbered
    /// records stored as quantities match the category samples the same records make now.
    private func legacyHash(_ bytes: UnsafeRawBufferPointer, string: (UInt64) -> String?) -> UInt64? {
        let kind = EventIdentity.legacyKind(of: bytes)
        if let identity = EventIdentity.legacyCategoryIdentity(of: bytes, string: string) {
            return identity.withUnsafeBytes { hasher.legacyHash(kind: kind, prefix: $0) }
        }
        guard let length = EventIdentity.legacyPrefixLength(of: bytes) else { return nil }
        return hasher.legacyHash(kind: kind, prefix: UnsafeRawBufferPointer(rebasing: bytes.prefix(length)))
    }

    /// What a category-month decided: refused (erased), or its key and encoder.
    private struct RecentMonth {
        /// The local day it was decided for (nil: an event without one).
        var day: Int64?
        /// Nil when the month's key was destroyed and its data is refused.
        var key: (keyID: UInt32, encoder: EventEncoder)?
        /// Whether the key is one of `freshKeys`.
        var fresh = false
    }

    private func decide(_ label: DataLabel, day: Int64?) throws -> RecentMonth {
        if !allowErased, erasedLabels.contains(label) { return RecentMonth(day: day, key: nil) }
        let id = try keyID(for: label)
        return RecentMonth(day: day, key: (id, try tables.encoder(for: id)), fresh: freshKeys.contains(id))
    }

    private func forgetRecentMonths() {
        for slot in recentMonths.indices { recentMonths[slot] = nil }
    }

    private func keyID(for label: DataLabel) throws -> UInt32 {
        if let id = keyIDs[label] { return id }
        // What waits is decided before this month's identities join the table, as it came before them.
        try decidePending()
        let id = try log.keyID(forLabel: label.bytes)
        keyIDs[label] = id
        // The first time a category-month comes up, what the vault holds of it is read: its
        // tables, the identities of its events and, under the upsert rule, its live values,
        // in one pass over its frames.
        let learnsRevisions = revisable && revisions.beginLearning(keyID: id)
        var held = 0
        do {
            _ = try tables.encoder(for: id) { index, bytes, string in
                held += 1
                try self.addExisting(event: bytes, string: string)
                if learnsRevisions { self.revisions.learn(keyID: id, index: index, bytes: bytes) }
            }
            insertWaitingExisting()
        } catch {
            insertWaitingExisting()
            if learnsRevisions { revisions.forgetCommitted() }
            throw error
        }
        if fileIsLast, held == 0 { freshKeys.insert(id) }
        return id
    }

    /// Writes the definitions `encoder` made, under the key of the event that needs them.
    private func flushDefinitions(_ encoder: EventEncoder, keyID: UInt32) throws {
        for definition in encoder.takeDefinitions() {
            try definition.withUnsafeBytes { try log.append($0, keyID: keyID, to: &transaction) }
        }
    }

    func reject(_ count: Int) { counts.rejected += count }
    func warn(_ message: String) { warnings.append(message) }

    /// Ends a file of an import and returns the reports of the files now decided, each recorded
    /// in the audit trail: this one, and those whose records waited outside memory for it. Such
    /// a file waits for the next (one merge decides a device folder of many files), unless it is
    /// the last (`isLast`: no file follows in this session, so what it added need not be
    /// remembered for deduplication) or the vault holds legacy identities.
    func finishFile(displayName: String, isLast: Bool = false) throws -> [FileImportReport] {
        try decidePending()
        warnAboutOtherTypes()
        if let external, !isLast, !hasLegacyIdentities {
            external.endFile()
            waiting.append((file, displayName))
            return []
        }
        var finished = waiting + [(file, displayName)]
        waiting = []
        if let external {
            for (i, decided) in try resolve(external, isLast: isLast).enumerated() { finished[i].report.count(decided) }
        } else if !isLast {
            identities.endFile()
        }
        for (report, name) in finished {
            try add(.importRecorded(at: Date(), ImportRecord(
                file: name, format: report.format, added: report.added, duplicates: report.duplicates, rejected: report.rejected,
                replaced: report.replaced)))
        }
        return finished.map(\.report)
    }

    /// Ends the current post (the server's long-lived session): what waited for its end is
    /// decided, and the copies it used are free for the next one. Its report is `file`.
    func endFile() throws {
        try decidePending()
        if let external {
            for decided in try resolve(external, isLast: false) { counts.count(decided) }
        } else {
            // The copies the post used are free for the next one to match.
            identities.endFile()
        }
        warnAboutOtherTypes()
    }

    /// Decides what waited outside memory, appending what is new, and handing it to the read
    /// models' feed, read with a decoder of its key's tables.
    private func resolve(_ external: ExternalDeduplicator, isLast: Bool) throws -> [ExternalDeduplicator.FileCounts] {
        var decoders: [UInt32: EventDecoder] = [:]
        return try external.resolve(keepingAdded: !isLast) { keyID, bytes in
            try bytes.withUnsafeBytes { try log.append($0, keyID: keyID, to: &transaction) }
            guard let readModelFeed else { return }
            let decoder: EventDecoder
            if let known = decoders[keyID] {
                decoder = known
            } else {
                decoder = try tables.encoder(for: keyID).decoder()
                decoders[keyID] = decoder
            }
            readModelFeed.appended(encoded: bytes, decoder: decoder)
        }
    }

    /// The file's warning of samples kept under `other`, once.
    private func warnAboutOtherTypes() {
        if !otherTypes.isEmpty {
            let listed = otherTypes.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            let names = listed.prefix(20).map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
            warn("kept under other, which only a grant of other shares: \(names)" + (listed.count > 20 ? " and \(listed.count - 20) more types" : ""))
            otherTypes = [:]
        }
    }

    /// Makes everything added durable, the values waiting under the upsert rule first.
    @discardableResult
    func commit() throws -> LogPosition {
        try decidePending()
        for (keyID, event) in try revisions.takePending(fetch: tables.event(keyID:index:)) {
            try event.withUnsafeBytes { try log.append($0, keyID: keyID, to: &transaction) }
        }
        return try log.commit(&transaction)
    }

    func rollback() {
        pending.removeAll()
        waiting = []
        forgetRecentMonths()  // their encoders are forgotten with the tables
        revisions.dropPending()
        try? log.rollback(&transaction)
    }

    /// Starts the next commit of a long-lived session (the server's), after `commit`; the samples
    /// the last commit wrote are learned from its frames, read from `previous` on.
    func beginNextCommit(learningFrom previous: LogPosition) throws {
        var reader = try log.reader(from: previous)
        while let frame = try reader.next() {
            guard revisions.holds(keyID: frame.keyID) else { continue }
            frame.forEachEvent { index, bytes in revisions.learn(keyID: frame.keyID, index: index, bytes: bytes) }
        }
        revisions.endLearning()
        transaction = try log.beginTransaction()
    }

    /// Whether the session keeps more than `slots` identities in memory (a long-lived session
    /// starts afresh past that).
    func exceedsMemory(slots: Int) -> Bool { external != nil || identities.wouldGrow(beyond: slots) }
}

extension FileImportReport {
    /// Adds what the external deduplicator decided of the file's records set aside.
    fileprivate mutating func count(_ decided: ExternalDeduplicator.FileCounts) {
        added += decided.added
        duplicates += decided.duplicates
        repeats += decided.repeats
    }
}
