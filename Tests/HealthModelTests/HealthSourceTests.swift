import Testing
@testable import HealthModel

/// `HealthSource` is a value kept in a shared box: it must behave exactly as a struct of its
/// three fields would.
@Suite struct HealthSourceTests {
    static let watch = HealthDevice(name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardware: "Watch6,1", software: "10.1")

    @Test func sourcesMadeApartAreEqualAndHashAlike() {
        let a = HealthSource(name: "Jo’s Watch", version: "10.1", device: Self.watch)
        let b = HealthSource(name: "Jo’s Watch", version: "10.1", device: Self.watch)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(a != HealthSource(name: "Jo’s Watch", version: "10.2", device: Self.watch))
        #expect(a != HealthSource(name: "Jo’s Watch", version: "10.1", device: nil))
        #expect(a != HealthSource(name: "Jo’s iPhone", version: "10.1", device: Self.watch))
    }

    @Test func settingAFieldOfACopyLeavesTheOriginalAsItWas() {
        let original = HealthSource(name: "Jo’s Watch", version: "10.1", device: Self.watch)
        var copy = original
        copy.name = "Health"
        copy.version = nil
        copy.device?.model = "iPhone"
        #expect(original.name == "Jo’s Watch" && original.version == "10.1" && original.device == Self.watch)
        #expect(copy.name == "Health" && copy.version == nil && copy.device?.model == "iPhone" && copy.device?.hardware == "Watch6,1")
        #expect(copy != original)
        var back = copy
        back.name = "Jo’s Watch"
        back.version = "10.1"
        back.device = Self.watch
        #expect(back == original && back.hashValue == original.hashValue)
    }

    @Test func aSourceIsADictionaryKeyByValue() {
        var ids: [HealthSource: Int] = [HealthSource(name: "Scale"): 1]
        ids[HealthSource(name: "Scale")] = 2
        ids[HealthSource(name: "Scale", version: "2")] = 3
        #expect(ids.count == 2 && ids[HealthSource(name: "Scale")] == 2)
    }
}
