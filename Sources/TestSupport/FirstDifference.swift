/// Where two long lists first differ, in a line: for expectations on lists that would print
/// megabytes when they fail (`#expect(firstDifference(a, b) == nil)`). nil when they are equal.
public func firstDifference<Element: Equatable>(_ actual: [Element], _ expected: [Element]) -> String? {
    guard actual != expected else { return nil }
    func short(_ element: Element) -> String {
        let text = "\(element)"
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
    for (index, (a, e)) in zip(actual, expected).enumerated() where a != e {
        return "element \(index) of \(actual.count) (expected \(expected.count)): \(short(a)) instead of \(short(e))"
    }
    return "\(actual.count) elements instead of \(expected.count)" + (actual.count > expected.count
        ? ", the first extra one \(short(actual[expected.count]))" : ", the first missing one \(short(expected[actual.count]))")
}
