import HealthModel

extension HealthSample {
    /// A reading at one instant (a heart rate, a weighing, a speed) as the device and track
    /// importers keep it: `value` in `unit`, from `source`.
    static func reading(_ type: String, _ value: Double, unit: String, at time: HealthTimestamp, source: HealthSource) -> HealthSample {
        HealthSample(type: type, source: source, start: time, end: time, value: .quantity(DecimalValue(double: value), unit: unit))
    }
}
