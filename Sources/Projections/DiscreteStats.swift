/// Count, exact sum (in millionths of the unit, saturating), min and max of discrete samples:
/// what a day of the read models and an hour of an hourly export keep.
struct DiscreteStats {
    var samples: Int64 = 0
    var microSum: Int64 = 0
    var min: Double = .infinity
    var max: Double = -.infinity

    /// Adds one sample.
    mutating func add(_ sample: DiscreteSample) {
        let micro = (sample.value * 1_000_000).rounded()
        let microValue = abs(micro) < 9.2e18 ? Int64(micro) : (micro < 0 ? Int64.min : Int64.max)
        add(microSum: microValue, samples: 1, min: sample.value, max: sample.value)
    }

    /// Merges stats kept elsewhere (a stored day) into these.
    mutating func add(microSum s: Int64, samples n: Int64, min lo: Double, max hi: Double) {
        let (sum, overflow) = microSum.addingReportingOverflow(s)
        microSum = overflow ? (s < 0 ? .min : .max) : sum
        samples += n
        min = Swift.min(min, lo)
        max = Swift.max(max, hi)
    }

    /// The average.
    var average: Double { Double(microSum) / 1e6 / Double(samples) }
}
