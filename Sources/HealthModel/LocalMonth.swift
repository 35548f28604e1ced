/// A calendar month as the person lived it: the month of a `LocalDay`. What erasure counts in.
public struct LocalMonth: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    /// 1–12.
    public let month: Int

    public init(year: Int, month: Int) {
        precondition((1...12).contains(month), "a month is 1 to 12")
        self.year = year
        self.month = month
    }

    /// The month `day` falls in.
    public init(_ day: LocalDay) {
        let date = day.date
        self.init(year: date.year, month: date.month)
    }

    /// Parses `YYYY-MM`; nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, parts[0].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isASCII),
              let y = Int(parts[0]), let m = Int(parts[1]), (1...12).contains(m) else { return nil }
        self.init(year: y, month: m)
    }

    /// `YYYY-MM`.
    public var description: String {
        let y = String(year)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y + (month < 10 ? "-0" : "-") + String(month)
    }

    /// The first and last day of the month.
    public var days: ClosedRange<LocalDay> {
        let first = LocalDay(year: year, month: month, day: 1)
        return first...LocalDay(dayNumber: first.dayNumber + LocalDay.daysInMonth(Int64(year), Int64(month)) - 1)
    }

    public static func < (a: LocalMonth, b: LocalMonth) -> Bool { (a.year, a.month) < (b.year, b.month) }
}
