/// Bar charts as inline SVG: one bar per period, labels below, the largest bar's value on top.
enum BarChart {
    struct Bar {
        var label: String
        var value: Double
    }

    /// Stacked parts of one bar (sleep stages), in order, with their colours.
    struct Stack {
        var label: String
        var parts: [(value: Double, color: String)]
    }

    static func svg(_ bars: [Bar], color: String, unit: String) -> String {
        svg(bars.map { Stack(label: $0.label, parts: [($0.value, color)]) }, unit: unit)
    }

    static func svg(_ stacks: [Stack], unit: String) -> String {
        guard !stacks.isEmpty else { return "<p class=\"empty\">no data in this range</p>" }
        let width = 640.0, height = 160.0, top = 16.0, bottom = 28.0
        let largest = max(stacks.map { $0.parts.reduce(0) { $0 + max($1.value, 0) } }.max() ?? 0, 1e-9)
        let slot = width / Double(stacks.count), barWidth = max(slot * 0.7, 1)
        var out = #"<svg class="chart" viewBox="0 0 \#(Int(width)) \#(Int(height))" width="100%" height="\#(Int(height))" role="img">"#
        let every = max(1, stacks.count / 12)
        for (i, stack) in stacks.enumerated() {
            var y = height - bottom
            let x = Double(i) * slot + (slot - barWidth) / 2
            for part in stack.parts where part.value > 0 {
                let h = part.value / largest * (height - top - bottom)
                // A part too thin to draw (a rounding remainder) is left out, not drawn as 0.
                guard h >= 0.0005 else { continue }
                y -= h
                out += #"<rect x="\#(RingGeometry.n(x))" y="\#(RingGeometry.n(y))" width="\#(RingGeometry.n(barWidth))" height="\#(RingGeometry.n(h))" fill="\#(part.color)"/>"#
            }
            if i % every == 0 {
                // At most what the label's slots hold (about 6 px a character at 10 px): a long
                // name (a workout type) is cut with an ellipsis, whole in its tooltip.
                let fits = max(2, Int(slot * Double(every) / 6))
                let shown = stack.label.count > fits ? String(stack.label.prefix(fits - 1)) + "…" : stack.label
                out += #"<text x="\#(RingGeometry.n(x + barWidth / 2))" y="\#(Int(height - 8))" text-anchor="middle"><title>\#(escape(stack.label))</title>\#(escape(shown))</text>"#
            }
        }
        out += #"<text x="0" y="11">\#(escape(format(largest))) \#(escape(unit))</text>"#
        return out + "</svg>"
    }

    /// A figure as the report prints it: whole above 100, one decimal below, "–" for what is not
    /// a finite number (never a trap on a huge one).
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "–" }
        if abs(value) >= 100 { return abs(value) < 1e15 ? String(Int64(value.rounded())) : String(format: "%.3g", value) }
        return String((value * 10).rounded() / 10)
    }

    /// Text from the vault put into HTML or SVG markup, escaped scalar by scalar (a grapheme
    /// cluster can hide a `<` from an escaper that compares whole characters).
    static func escape(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
