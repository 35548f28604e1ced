import HealthModel
import Testing
import VaultEvents

/// The names the log stores are fixed for ever (docs/event-encoding.md): a vault written today
/// must decode in ten years whatever the enums become.
@Suite struct PersistedNamesTests {
    @Test func everyStoredNameIsPinnedAndReadsBack() {
        #expect(Ring.allCases.map(PersistedNames.name(of:)) == ["move", "exercise", "stand"])
        #expect(DeviceClass.allCases.map(PersistedNames.name(of:)) == ["watch", "phone", "other"])
        #expect(HealthCategory.allCases.map(PersistedNames.name(of:)) == [
            "activity", "heart", "sleep", "body", "vitals", "workouts", "location", "nutrition", "mindfulness",
            "reproductive", "clinical", "profile", "other", "trackers",
        ])
        #expect(Granularity.allCases.map(PersistedNames.name(of:)) == ["raw", "hourly", "daily"])
        #expect([IdentityRecord.Reason.created, .adopted, .rotated].map(PersistedNames.name(of:)) == ["created", "adopted", "rotated"])
        for ring in Ring.allCases { #expect(PersistedNames.ring(named: PersistedNames.name(of: ring)) == ring) }
        for device in DeviceClass.allCases { #expect(PersistedNames.deviceClass(named: PersistedNames.name(of: device)) == device) }
        for category in HealthCategory.allCases { #expect(PersistedNames.category(named: PersistedNames.name(of: category)) == category) }
        for granularity in Granularity.allCases { #expect(PersistedNames.granularity(named: PersistedNames.name(of: granularity)) == granularity) }
        #expect(PersistedNames.ring(named: "Move") == nil && PersistedNames.category(named: "Trackers") == nil)
    }
}
