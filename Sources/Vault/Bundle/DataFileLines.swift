import Foundation
import HealthModel
import ResearchBundle

/// One category's data file as the bundle's formats write it, line by line: the chosen format
/// (NDJSON, FHIR or Open mHealth) and, with `--csv`, CSV beside it. Every line passes once
/// through each encoder; nothing is parsed back.
struct DataFileLines {
    /// The chosen format's encoder: NDJSON's, or FHIR's and Open mHealth's.
    private var ndjson: BundleLineWriter?
    private var standard: StandardLineEncoder?
    private var csv: BundleLineWriter?
    private(set) var count = 0

    /// `figures`: a daily or hourly file (CSV's header names a figure's columns).
    init(format: StandardFormat, csv: Bool, figures: Bool, granularity: Granularity, createdAt: Date, salt: [UInt8]) {
        if format == .ndjson {
            ndjson = BundleLineWriter(format: .ndjson, figures: figures)
        } else {
            standard = StandardLineEncoder(format: format, granularity: granularity.rawValue, createdAt: createdAt, salt: salt)
        }
        self.csv = csv ? BundleLineWriter(format: .csv, figures: figures) : nil
    }

    mutating func append(_ line: BundleLine) throws {
        ndjson?.append(line)
        try standard?.append(line)
        csv?.append(line)
        count += 1
    }

    /// The chosen format's bytes.
    var bytes: [UInt8] { ndjson?.bytes ?? standard?.bytes ?? [] }

    /// The CSV file's bytes, when asked for.
    var csvBytes: [UInt8]? { csv?.bytes }
}

extension AggregateLine {
    /// Fewer readings than this in a period and a discrete metric's line carries no `min` and
    /// `max`: with one or two readings they are the readings themselves, and with three the
    /// average gives the third (3 × average − min − max). With four, two stay unknown.
    static let minimumReadingsForRange = 4

    /// A figure as an export writes it: to a millionth of its unit (no float noise from summing
    /// in the last bits), `min` and `max` only over enough readings, a value that is not finite
    /// as null.
    static func exported(category: String, metric: String, period: String, value: Double, unit: String, min: Double?, max: Double?,
                         samples: Int) -> AggregateLine {
        let range = samples >= minimumReadingsForRange
        let value = micro(value)
        return AggregateLine(category: category, metric: metric, period: period, value: value.isFinite ? value : nil, unit: unit,
                             min: range ? min.map(micro) : nil, max: range ? max.map(micro) : nil, samples: samples)
    }

    /// `value` to a millionth.
    static func micro(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 }
}
