import HealthModel

/// One line of a bundle's data file (docs/bundle-format.md, "Data files"): the one type the
/// vault's export produces, each format's encoder writes (`BundleLineWriter` for NDJSON and
/// CSV, the vault's FHIR and Open mHealth encoders) and the researcher's side reads back
/// (`BundleLineReader`).
public enum BundleLine: Equatable, Sendable {
    /// A metric's figure for a day or an hour (daily and hourly grants).
    case figure(AggregateLine)
    /// One sample or record as recorded, or its part inside the data period (raw grants).
    case record(RecordLine)

    /// The category the line belongs to.
    public var category: String {
        switch self {
        case .figure(let line): line.category
        case .record(let line): line.category
        }
    }
}

/// A raw line: one sample or record as recorded, or its part inside the data period
/// (`clipped`). A record without a quantity of its own (a route point, a `Me` characteristic, a
/// clinical record, a correlation) carries what it holds in `fields`, after the common members;
/// undated records have no `start` and `end`.
public struct RecordLine: Equatable, Sendable {
    /// The line's `value`.
    public enum Value: Equatable, Sendable {
        /// A quantity, written as its exact decimal (`12.50` stays `12.50`) or, when it is not
        /// exact, as the shortest form of its double.
        case decimal(DecimalValue)
        /// A category value (`HKCategoryValueSleepAnalysisAsleepCore`), a characteristic.
        case text(String)
        case none
    }

    /// What a member after the common ones holds (NDJSON only; CSV keeps the common columns).
    public enum FieldValue: Equatable, Sendable {
        case number(Double)
        case text(String)
        /// Keys and values as the record holds them (attributes, metadata), as a JSON object.
        case object([MetadataEntry])
        /// Exact thousandths, written as an array of decimals (an ECG's voltages).
        case thousandths([Int64])
    }

    /// A member after the common ones.
    public struct Field: Equatable, Sendable {
        public var name: String
        public var value: FieldValue

        public init(_ name: String, _ value: FieldValue) {
            self.name = name
            self.value = value
        }
    }

    public var category: String
    /// The sample's or record's type (`HKQuantityTypeIdentifierStepCount`, `route`, a tracker).
    public var type: String
    public var start: HealthTimestamp?
    public var end: HealthTimestamp?
    public var value: Value
    public var unit: String?
    /// Whether the line is the part of a longer span inside the data period.
    public var clipped: Bool
    public var fields: [Field]

    public init(category: String, type: String, start: HealthTimestamp?, end: HealthTimestamp?, value: Value, unit: String?,
                clipped: Bool = false, fields: [Field] = []) {
        self.category = category
        self.type = type
        self.start = start
        self.end = end
        self.value = value
        self.unit = unit
        self.clipped = clipped
        self.fields = fields
    }
}
