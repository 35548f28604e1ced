/// Heart rate a chest strap stored while the watch could not hear it (under water: HRM-Swim,
/// HRM-Tri, HRM-Pro) and handed over when the swim ended, in `hr` messages (132). An anchor
/// message ties the strap's clock (`event_timestamp`, in 1/1024 s) to the file's time
/// (`timestamp` and `fractional_timestamp`); the messages after it carry eight beats' times each,
/// 12 bits apiece and accumulated (`event_timestamp_12`), with their filtered rates
/// (`filtered_bpm`). The watch's records of the swim hold no heart rate of their own.
///
/// They become the records' heart rate the way Garmin's FIT SDK merges them (`merge_heart_rates`),
/// so that the vault holds the figures the format owner's decoder gives: a reading is carried
/// forward in quarter seconds across a gap of up to five seconds, and each record takes the
/// rounded mean of the readings after the record before it, up to its own time.
enum FITStoredHeartRate {
    struct Reading: Equatable {
        /// Seconds since the FIT epoch, with their fraction.
        var time: Double
        var bpm: Int64
    }

    static let global: UInt16 = 132
    /// `event_timestamp` counts 1/1024 s in 32 bits: it wraps after this many seconds.
    private static let wrap = Double(1 << 22)

    /// The readings of a file's hr messages, in order; nil when they cannot be placed in time (no
    /// anchor before them, an anchor of more than one beat, rates and times that do not pair up,
    /// or a beat before its anchor), the SDK's errors.
    static func readings(_ messages: [FITMessage]) -> [Reading]? {
        var readings: [Reading] = []
        var anchor: (time: Double, event: Double)?
        var accumulated: UInt64?
        var last: UInt64 = 0
        for message in messages where message.global == global {
            var events: [Double] = []
            // Whole times set the accumulator; 12-bit ones add to it, modulo 4096.
            for raw in message.integers(9) {
                accumulated = UInt64(raw)
                last = UInt64(raw)
                events.append(Double(raw) / 1024)
            }
            if case .bytes(let packed)? = message.fields[10] {
                for value in twelveBitValues(packed) {
                    guard var total = accumulated else { return nil }
                    total &+= (value &- last) & 0xFFF
                    accumulated = total
                    last = value
                    events.append(Double(total) / 1024)
                }
            }
            let rates = message.integers(6)
            if let timestamp = message.timestamp {
                guard events.count == 1 else { return nil }
                let fraction = message.value(0, scale: 32_768) ?? message.value(1, scale: 256) ?? 0
                anchor = (Double(timestamp) + fraction, events[0])
            }
            guard let anchor, events.count == rates.count else { return nil }
            for (event, bpm) in zip(events, rates) {
                var event = event
                if event < anchor.event {
                    guard anchor.event - event > wrap else { return nil }
                    event += wrap
                }
                let time = anchor.time + (event - anchor.event)
                if let previous = readings.last {
                    var gap = abs(time - previous.time) * 1000
                    var step = 1
                    while gap > 250, step <= 20 {
                        readings.append(Reading(time: previous.time + 0.25 * Double(step), bpm: previous.bpm))
                        gap -= 250
                        step += 1
                    }
                }
                readings.append(Reading(time: time, bpm: bpm))
            }
        }
        return readings
    }

    /// The 12-bit values packed in `bytes`, least significant bits first.
    static func twelveBitValues(_ bytes: [UInt8]) -> [UInt64] {
        var values: [UInt64] = []
        var bits: UInt64 = 0
        var held = 0
        for byte in bytes {
            bits |= UInt64(byte) << UInt64(held)
            held += 8
            if held >= 12 {
                values.append(bits & 0xFFF)
                bits >>= 12
                held -= 12
            }
        }
        return values
    }

    /// Sets each record's heart rate (field 3) to the rounded mean of the readings after the
    /// record before it and up to its own time; a record with none keeps what it had.
    static func merge(_ readings: [Reading], into records: inout [FITMessage]) {
        guard !readings.isEmpty else { return }
        var index = 0
        var rangeStart: Double?
        for r in records.indices {
            guard let stamp = records[r].timestamp else { continue }
            let end = Double(stamp)
            var start = rangeStart ?? end
            if start == end {
                start -= 1
                index = max(index - 1, 0)
            }
            rangeStart = start
            var sum: Int64 = 0
            var count = 0
            while index < readings.count {
                let reading = readings[index]
                if reading.time > start, reading.time <= end {
                    sum += reading.bpm
                    count += 1
                } else if reading.time > end {
                    if count > 0 {
                        let mean = (Double(sum) / Double(count) + 0.5).rounded(.down)
                        records[r].fields[3] = .unsigned(UInt64(mean))
                    }
                    rangeStart = end
                    break
                }
                index += 1
            }
        }
    }
}
