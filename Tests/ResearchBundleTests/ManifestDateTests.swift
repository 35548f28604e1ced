import Foundation
import ResearchBundle
import Testing

/// A manifest's `createdAt` is read as `BundleDraft` writes it, and nothing else passes
/// (issue 35's review: trailing junk passed Foundation's parser).
@Suite struct ManifestDateTests {
    @Test func onlyTheWrittenFormPasses() {
        #expect(ManifestDate.parse("2026-11-27T09:30:00Z") == Date(timeIntervalSince1970: 1_795_771_800))
        for bad in ["2026-11-27T09:30:00Zjunk", "2026-11-27T09:30:00Z ", "2026-11-27T09:30:00+01:00", "2026-11-27 09:30:00Z",
                    "2026-02-30T09:30:00Z", "2026-11-27T09:30Z", ""] {
            #expect(ManifestDate.parse(bad) == nil, "\(bad)")
        }
    }
}
