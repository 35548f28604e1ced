import Foundation

/// One line of a daily or hourly data file (docs/bundle-format.md, "Data files"): a metric's
/// figure for a period, or a figure the vault derives (`ring:move`, `goal:move`, `sleep:deep`,
/// `workout:HKWorkoutActivityTypeRunning`).
public struct AggregateLine: Equatable, Sendable {
    public var category: String
    public var metric: String
    /// `2024-01-05` (daily) or `2024-01-05T08` (hourly).
    public var period: String
    /// Null in the file only for a figure that was not finite.
    public var value: Double?
    public var unit: String
    public var min: Double?
    public var max: Double?
    public var samples: Int

    public init(category: String, metric: String, period: String, value: Double?, unit: String, min: Double? = nil, max: Double? = nil, samples: Int) {
        self.category = category
        self.metric = metric
        self.period = period
        self.value = value
        self.unit = unit
        self.min = min
        self.max = max
        self.samples = samples
    }
}

/// What `bundle open` wrote into a directory, read back: who sent it, and its daily lines.
public struct OpenedBundleDirectory: Sendable {
    /// The sender's fingerprint, as the manifest gives it.
    public var sender: String
    public var createdAt: String
    /// Every line of the daily NDJSON files the manifest lists, in file order.
    public var dailyLines: [AggregateLine]

    /// Reads `directory`; names the file and line of anything that is not a daily line.
    public init(path directory: String) throws {
        let manifestPath = directory + "/" + BundleFormat.manifestName
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw BundleError.refused(path: directory, reason: "holds no \(BundleFormat.manifestName) (a directory `vaultctl bundle open` wrote)")
        }
        let manifest: BundleManifest
        do { manifest = try JSONDecoder().decode(BundleManifest.self, from: data) } catch {
            throw BundleError.refused(path: manifestPath, reason: "is not a bundle manifest")
        }
        var lines: [AggregateLine] = []
        let reader = BundleLineReader()
        for file in manifest.files where file.granularity == "daily" && file.format == "ndjson" {
            // The manifest's paths were checked when the bundle was opened; checked again here
            // because the directory may have been edited since.
            guard BundleReader.isSafe(file.path) else {
                throw BundleError.refused(path: manifestPath, reason: "names a file outside data/")
            }
            let path = directory + "/" + file.path
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw BundleError.refused(path: path, reason: "is missing")
            }
            var number = 0
            for line in contents.split(separator: 0x0A, omittingEmptySubsequences: false) {
                number += 1
                if line.isEmpty { continue }
                let read = Result { try Array(line).withUnsafeBufferPointer { try reader.read($0) } }
                guard case .success(.figure(let figure)) = read else {
                    throw BundleError.refused(path: path, reason: "line \(number) is not a daily line")
                }
                lines.append(figure)
            }
        }
        sender = manifest.sender.fingerprint ?? ""
        createdAt = manifest.createdAt
        dailyLines = lines
    }
}
