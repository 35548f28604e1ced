/// How a source ranks by default: by its device's model, never by the name the user gave it.
public enum DeviceClass: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    case watch = 0
    case phone = 1
    case other = 2

    /// The class of a device model (`Watch`, `iPhone`, `Watch6,7`); `nil` means no device.
    public init(model: String?) {
        guard let model else { self = .other; return }
        if model.lowercased().contains("watch") { self = .watch }
        else if model.hasPrefix("iPhone") { self = .phone }
        else { self = .other }
    }

    public init?(name: String) {
        guard let c = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = c
    }

    public var description: String {
        switch self {
        case .watch: "watch"
        case .phone: "phone"
        case .other: "other"
        }
    }

    public static func < (a: DeviceClass, b: DeviceClass) -> Bool { a.rawValue < b.rawValue }
}
