import HealthModel
import ResearchBundle

/// What a raw line says of where a sample came from (since 2026-11-27), so that a researcher can
/// reproduce the person's deduplicated totals (a Watch counts before an iPhone where both count
/// the same minutes) and see what the sample carried: the app, the device's model and class, and
/// the metadata. Never a name the person gave a device ("Anna's Apple Watch"): the Health app
/// names its own data after the device, and such a name becomes the device's kind.
enum SourceFields {
    /// The fields that name `source`.
    static func fields(of source: HealthSource) -> [RecordLine.Field] {
        let device = source.device
        var fields: [RecordLine.Field] = [.init("source", .text(shareableName(source)))]
        if let model = device?.model { fields.append(.init("device", .text(device?.hardware.map { "\(model) (\($0))" } ?? model))) }
        fields.append(.init("deviceClass", .text(deviceClass(source).description)))
        return fields
    }

    /// A sample's fields: its source's, made once per source, and its metadata. A vault's
    /// samples come from a few sources, and telling a personal name costs a search of the name
    /// (a sixth of a large raw export's time, measured with `perf`).
    struct Memo {
        private var bySource: [HealthSource: [RecordLine.Field]] = [:]

        mutating func fields(of source: HealthSource, metadata: [MetadataEntry]) -> [RecordLine.Field] {
            var fields: [RecordLine.Field]
            if let known = bySource[source] {
                fields = known
            } else {
                fields = SourceFields.fields(of: source)
                if bySource.count < 4096 { bySource[source] = fields }
            }
            if !metadata.isEmpty { fields.append(.init("metadata", .object(metadata))) }
            return fields
        }
    }

    /// The source's name, unless it is a device's personal name: then the device's kind.
    static func shareableName(_ source: HealthSource) -> String {
        let name = source.name
        let personal = (source.device?.name).map { $0 == name } ?? false
            || name.contains("'s ") || name.contains("’s ") || name.contains("s' ") || name.contains("s’ ")
        guard personal else { return name }
        switch deviceClass(source) {
        case .watch: return "Apple Watch"
        case .phone: return "iPhone"
        case .other: return source.device?.model ?? "a device"
        }
    }

    /// The class the source ranks by: its device's model, else what its name says.
    static func deviceClass(_ source: HealthSource) -> DeviceClass {
        if let model = source.device?.model { return DeviceClass(model: model) }
        let lower = source.name.lowercased()
        return lower.contains("watch") ? .watch : lower.contains("iphone") ? .phone : .other
    }
}
