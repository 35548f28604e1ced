import HealthModel
import Projections
import ResearchBundle
import VaultEvents

/// Raw bundle lines of records that are not samples or workouts, so that everything the vault
/// keeps can be shared under its category (docs/bundle-format.md, "Records"): a route's points
/// (location), the `Me` characteristics (profile), correlations (blood pressure, food), ECG
/// recordings (heart) and kept elements such as clinical records. Only raw grants carry them: they have no figure to
/// aggregate.
enum RecordLines {
    /// The type a record's lines name (a correlation's type, a kept element's `type` attribute or
    /// its element), nil for records whose type is fixed by their kind.
    static func typeName(of event: VaultEvent) -> String? {
        switch event {
        case .correlation(let c): c.type
        case .genericRecord(let g): g.attributes.first { $0.key == "type" }?.value ?? g.element
        default: nil
        }
    }

    static func lines(of event: VaultEvent, category: HealthCategory, grant: ConsentGrant, _ emit: (RecordLine) throws -> Void) rethrows {
        if let type = typeName(of: event), !grant.admits(category, type: type) { return }
        switch event {
        case .route(let route):
            for p in route.points {
                let t = HealthTimestamp(seconds: p.time, utcOffset: route.workoutStart.utcOffset)
                guard PeriodClip(start: t, end: t, from: grant.from, to: grant.to) != nil else { continue }
                var fields: [RecordLine.Field] = [.init("latitude", .number(p.latitude)), .init("longitude", .number(p.longitude))]
                let optional: [(String, Double?)] = [("altitude", p.altitude), ("speed", p.speed), ("course", p.course),
                                                     ("horizontalAccuracy", p.horizontalAccuracy), ("verticalAccuracy", p.verticalAccuracy)]
                for (name, value) in optional { if let value { fields.append(.init(name, .number(value))) } }
                try emit(RecordLine(category: category.rawValue, type: ProjectionFeed.routeType, start: t, end: t, value: .none, unit: nil, fields: fields))
            }
        case .characteristics(let entries):
            // Undated: a grant's period does not select them.
            for entry in entries {
                try emit(RecordLine(category: category.rawValue, type: entry.key, start: nil, end: nil, value: .text(entry.value), unit: nil))
            }
        case .correlation(let c):
            guard let clip = PeriodClip(start: c.start, end: c.end, from: grant.from, to: grant.to) else { return }
            try emit(RecordLine(category: category.rawValue, type: c.type, start: clip.start, end: clip.end, value: .none, unit: nil,
                                clipped: clip.clipped, fields: c.metadata.isEmpty ? [] : [.init("metadata", .object(c.metadata))]))
        case .electrocardiogram(let e):
            guard PeriodClip(start: e.recorded, end: e.recorded, from: grant.from, to: grant.to) != nil else { return }
            var fields: [RecordLine.Field] = [.init("fields", .object(e.fields)), .init("voltages", .thousandths(e.millivoltages))]
            if let rate = e.sampleRate { fields.insert(.init("sampleRate", .number(rate)), at: 0) }
            try emit(RecordLine(category: category.rawValue, type: Electrocardiogram.type, start: e.recorded, end: e.end,
                                value: e.field("Classification").map { .text($0) } ?? .none, unit: e.unit, fields: fields))
        case .genericRecord(let g):
            let type = typeName(of: event) ?? g.element
            let date = DataLabel.timestamp(of: g)
            if let date, PeriodClip(start: date, end: date, from: grant.from, to: grant.to) == nil { return }
            try emit(RecordLine(category: category.rawValue, type: type, start: date, end: date, value: .none, unit: nil,
                                fields: [.init("element", .text(g.element)), .init("attributes", .object(g.attributes))]))
        default:
            return
        }
    }
}
