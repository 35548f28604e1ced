/// A source as the priority list knows it: the app or device name with its device class.
public struct SourceKey: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var deviceClass: DeviceClass

    public init(name: String, deviceClass: DeviceClass) {
        self.name = name
        self.deviceClass = deviceClass
    }

    public var description: String { "\(name) (\(deviceClass))" }
}
