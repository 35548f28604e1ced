import Foundation

/// Activity rings as Apple draws them: three concentric arcs (move outside, exercise, stand
/// inside), each starting at the top and running clockwise for its share of the goal; past 100%
/// a second arc runs over the first from the top again. Drawn as SVG circles whose dash is the
/// arc's length, so the length is an attribute a test (and a browser) can read.
public enum RingGeometry {
    /// One ring's arcs.
    public struct Arc: Equatable, Sendable {
        /// Radius of the ring's centre line, in SVG units.
        public var radius: Double
        /// value / goal (0 without a goal).
        public var fraction: Double
        public var circumference: Double { 2 * Double.pi * radius }
        /// Length of the first lap (at most the circumference).
        public var firstLap: Double { min(max(fraction, 0), 1) * circumference }
        /// Length of the part past 100% (at most one more lap), drawn over the first.
        public var overlap: Double { min(max(fraction - 1, 0), 1) * circumference }
    }

    static let colors = [(ring: "move", color: "#fa114f", dim: "#3a0b17"), (ring: "exercise", color: "#92e82a", dim: "#223509"),
                         (ring: "stand", color: "#1eeaef", dim: "#0b3536")]

    /// The arcs of the three rings in a square of side `size`.
    public static func arcs(move: Double, exercise: Double, stand: Double, size: Double) -> [Arc] {
        let stroke = size / 9
        return [move, exercise, stand].enumerated().map { i, fraction in
            Arc(radius: size / 2 - stroke / 2 - Double(i) * (stroke + 1), fraction: fraction.isFinite ? fraction : 0)
        }
    }

    /// An SVG of the three rings of `day`, `size` units wide.
    public static func svg(day: String, move: Double, exercise: Double, stand: Double, size: Double) -> String {
        let stroke = size / 9, centre = size / 2
        var out = #"<svg class="rings" viewBox="0 0 \#(n(size)) \#(n(size))" width="\#(n(size))" height="\#(n(size))" role="img" aria-label="rings \#(day)">"#
        for (arc, style) in zip(arcs(move: move, exercise: exercise, stand: stand, size: size), colors) {
            let common = #"cx="\#(n(centre))" cy="\#(n(centre))" r="\#(n(arc.radius))" fill="none" stroke-width="\#(n(stroke))""#
            out += #"<circle \#(common) stroke="\#(style.dim)"/>"#
            if arc.firstLap > 0 {
                out += #"<circle class="arc" data-day="\#(day)" data-ring="\#(style.ring)" data-lap="1" \#(common) stroke="\#(style.color)" stroke-linecap="round" "#
                    + #"stroke-dasharray="\#(n(arc.firstLap)) \#(n(arc.circumference))" transform="rotate(-90 \#(n(centre)) \#(n(centre)))"/>"#
            }
            if arc.overlap > 0 {
                out += #"<circle class="arc" data-day="\#(day)" data-ring="\#(style.ring)" data-lap="2" \#(common) stroke="\#(style.color)" stroke-linecap="round" "#
                    + #"stroke-dasharray="\#(n(arc.overlap)) \#(n(arc.circumference))" transform="rotate(-90 \#(n(centre)) \#(n(centre)))" style="filter:brightness(1.25)"/>"#
            }
        }
        return out + "</svg>"
    }

    /// A number as SVG attributes take it: three decimals at most.
    static func n(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
