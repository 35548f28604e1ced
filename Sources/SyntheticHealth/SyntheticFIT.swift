import BinaryCoding

/// FIT activity files as a watch writes them (docs/fit.md), for fuzz seeds and benchmarks: a
/// file_id, one record a second with position, heart rate, speed and distance, one lap, one
/// session and the activity with its local time, in little-endian definitions, closed by the
/// file's CRC-16. Deterministic for a seed.
public enum SyntheticFIT {
    /// A run (sport 1) or ride (2) of `seconds` at 1 Hz from `start` (seconds since 1970), around
    /// latitude and longitude in degrees, recorded in local offset `utcOffset` (seconds). Without
    /// `summary`, the file ends after its records with a sport message and no lap, session or
    /// activity: a recording the device closed without its summary (a flat battery).
    public static func activity(start: Int64, seconds: Int, utcOffset: Int32, sport: UInt8 = 1, seed: UInt64 = 1,
                                latitude: Double = 47.37, longitude: Double = 8.54, summary: Bool = true) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        let epoch: Int64 = 631_065_600
        let t0 = UInt32(start - epoch)
        var body: [UInt8] = []
        func s32(_ v: Int32) -> [UInt8] { u32(UInt32(bitPattern: v)) }

        body += definition(local: 0, global: 0, [(0, 1, 0x00), (1, 2, 0x84), (2, 2, 0x84), (4, 4, 0x86)])
        body += [0x00, 4] + u16(1) + u16(2697) + u32(t0)
        body += definition(local: 1, global: 20, [(253, 4, 0x86), (0, 4, 0x85), (1, 4, 0x85), (3, 1, 0x02), (6, 2, 0x84), (5, 4, 0x86)])
        var distance = 0.0
        let semicircles = 2_147_483_648.0 / 180
        var lat = latitude, lon = longitude
        var heartRate = 100.0
        for i in 0..<seconds {
            let speed = (sport == 2 ? 7.0 : 3.0) + Double(random.next() % 100) / 100
            distance += speed
            lat += speed / 111_000 * 0.7
            lon += speed / 75_000 * 0.7
            heartRate = min(185, max(90, heartRate + Double(Int(random.next() % 5) - 2)))
            body += [0x01] + u32(t0 + UInt32(i)) + s32(Int32(lat * semicircles)) + s32(Int32(lon * semicircles))
                + [UInt8(heartRate)] + u16(UInt16(speed * 1000)) + u32(UInt32(distance * 100))
        }
        let elapsed = UInt32(seconds * 1000), end = t0 + UInt32(seconds)
        if !summary {
            body += definition(local: 2, global: 12, [(0, 1, 0x00), (1, 1, 0x00)])
            body += [0x02, sport, 0]
            return file(body)
        }
        body += definition(local: 2, global: 19, [(253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (8, 4, 0x86), (9, 4, 0x86)])
        body += [0x02] + u32(end) + u32(t0) + u32(elapsed) + u32(elapsed) + u32(UInt32(distance * 100))
        body += definition(local: 3, global: 18, [(253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (8, 4, 0x86), (9, 4, 0x86), (11, 2, 0x84),
                                          (5, 1, 0x00), (6, 1, 0x00), (16, 1, 0x02), (17, 1, 0x02)])
        body += [0x03] + u32(end) + u32(t0) + u32(elapsed) + u32(elapsed) + u32(UInt32(distance * 100))
            + u16(UInt16(min(65_000, seconds / 6))) + [sport, 0, 140, 185]
        body += definition(local: 4, global: 34, [(253, 4, 0x86), (0, 4, 0x86), (1, 2, 0x84), (5, 4, 0x86)])
        body += [0x04] + u32(end) + u32(elapsed) + u16(1) + u32(UInt32(Int64(end) + Int64(utcOffset)))

        return file(body)
    }

    /// A sleep file (type 49) as a Garmin watch writes one: the sleep's start event, a
    /// `sleep_level` message each time the level changes (`levels`: minutes after `start` and the
    /// level, 1 awake, 2 light, 3 deep, 4 REM), and the stop event `stopMinutes` after `start`.
    public static func sleep(start: Int64, levels: [(minutes: Int, level: UInt8)], stopMinutes: Int) -> [UInt8] {
        let t0 = UInt32(start - 631_065_600)
        var body: [UInt8] = []
        body += definition(local: 0, global: 0, [(0, 1, 0x00), (1, 2, 0x84), (2, 2, 0x84), (4, 4, 0x86)])
        body += [0x00, 49] + u16(1) + u16(3290) + u32(t0)
        body += definition(local: 1, global: 21, [(253, 4, 0x86), (0, 1, 0x00), (1, 1, 0x00)])
        body += [0x01] + u32(t0) + [74, 0]
        body += definition(local: 2, global: 275, [(253, 4, 0x86), (0, 1, 0x00)])
        for (minutes, level) in levels { body += [0x02] + u32(t0 + UInt32(minutes * 60)) + [level] }
        body += [0x01] + u32(t0 + UInt32(stopMinutes * 60)) + [74, 1]
        return file(body)
    }

    /// A day's monitoring file (type 32) as a wrist device writes one from `start` (seconds since
    /// 1970) for 24 hours: monitoring_info with the local offset, then each minute the walking
    /// steps counted since the local day began (`cycles`, steps for walking) with the activity
    /// type, and every other minute the heart rate in a message holding only `timestamp_16`;
    /// an hour of the day brings intensity minutes, and the day ends with its resting heart rate.
    public static func monitoring(start: Int64, utcOffset: Int32, seed: UInt64 = 1) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        let t0 = UInt32(start - 631_065_600)
        var body: [UInt8] = []
        body += definition(local: 0, global: 0, [(0, 1, 0x00), (1, 2, 0x84), (2, 2, 0x84), (4, 4, 0x86)])
        body += [0x00, 32] + u16(1) + u16(2927) + u32(t0)
        body += definition(local: 1, global: 103, [(253, 4, 0x86), (0, 4, 0x86)])
        body += [0x01] + u32(t0) + u32(UInt32(Int64(t0) + Int64(utcOffset)))
        body += definition(local: 2, global: 55, [(253, 4, 0x86), (5, 1, 0x00), (3, 4, 0x86)])
        body += definition(local: 3, global: 55, [(26, 2, 0x84), (27, 1, 0x02)])
        body += definition(local: 4, global: 55, [(26, 2, 0x84), (33, 2, 0x84), (34, 2, 0x84)])
        var steps: UInt32 = 0
        var heartRate = 60.0
        for minute in 0..<1_440 {
            let t = t0 + UInt32(minute * 60)
            steps += UInt32(random.next() % 40)
            body += [0x02] + u32(t) + [6] + u32(steps)
            if minute % 2 == 0 {
                heartRate = min(150, max(45, heartRate + Double(Int(random.next() % 7) - 3)))
                body += [0x03] + u16(UInt16(t & 0xFFFF)) + [UInt8(heartRate)]
            }
            if minute % 60 == 59, random.next() % 3 == 0 {
                body += [0x04] + u16(UInt16(t & 0xFFFF)) + u16(UInt16(random.next() % 20)) + u16(UInt16(random.next() % 10))
            }
        }
        body += definition(local: 5, global: 211, [(253, 4, 0x86), (0, 1, 0x02), (1, 1, 0x02)])
        body += [0x05] + u32(t0 + 86_340) + [52, 50 + UInt8(random.next() % 5)]
        return file(body)
    }

    /// The file: a 14-byte header with its CRC, the records, and the file's CRC.
    private static func file(_ body: [UInt8]) -> [UInt8] {
        var header: [UInt8] = [14, 0x20] + u16(2132) + u32(UInt32(body.count)) + Array(".FIT".utf8)
        header += u16(crc(header[...]))
        let whole = header + body
        return whole + u16(crc(whole[...]))
    }

    /// A definition message, little-endian: local type `local` stands for global message `global`
    /// with `fields` (number, size, base type).
    private static func definition(local: UInt8, global: UInt16, _ fields: [(UInt8, UInt8, UInt8)]) -> [UInt8] {
        var bytes: [UInt8] = [0x40 | local, 0, 0, UInt8(global & 0xFF), UInt8(global >> 8), UInt8(fields.count)]
        for (number, size, base) in fields { bytes += [number, size, base] }
        return bytes
    }

    private static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    private static func u32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }

    /// FIT's CRC-16 (the SDK's nibble table), written here apart from the importer's on purpose:
    /// a file the generator makes checks the importer's reading, not its own.
    static func crc(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        let table: [UInt16] = [0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
                               0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400]
        var crc: UInt16 = 0
        for byte in bytes {
            for nibble in [byte & 0xF, byte >> 4] {
                let tmp = table[Int(crc & 0xF)]
                crc = (crc >> 4) & 0x0FFF
                crc = crc ^ tmp ^ table[Int(nibble)]
            }
        }
        return crc
    }
}
