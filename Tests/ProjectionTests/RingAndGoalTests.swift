import HealthModel
import Testing
@testable import Projections

@Suite struct RingAndGoalTests {
    static func day(_ i: Int64) -> LocalDay { LocalDay(dayNumber: d0.dayNumber + i) }

    /// Active energy, exercise minutes and stood hours of one day.
    static func activity(_ day: LocalDay, kcal: Double, minutes: Int, stood: Int) -> [ProjectionInput] {
        var inputs: [ProjectionInput] = []
        let start = Build.instant(day, 7)
        inputs.append(.cumulative(CumulativeSample(metric: RingMetrics.activeEnergy, unit: "kcal", source: Build.watch,
                                                   start: start, end: start + 3600, utcOffset: 0, value: kcal)))
        for m in 0..<minutes {
            let t = Build.instant(day, 17) + Int64(m * 60)
            inputs.append(.cumulative(CumulativeSample(metric: RingMetrics.exerciseTime, unit: "min", source: Build.watch,
                                                       start: t, end: t + 60, utcOffset: 0, value: 1)))
        }
        for h in 0..<stood { inputs.append(.standHour(start: Build.instant(day, 8 + h), utcOffset: 0, stood: true)) }
        return inputs
    }

    @Test func aDaysGoalIsTheSetOneElseApplesElseTheLastKnownElseTheDefault() throws {
        let models = try ReadModels()
        var inputs: [ProjectionInput] = []
        for i: Int64 in 0..<6 { inputs += Self.activity(Self.day(i), kcal: 500, minutes: 35, stood: 12) }
        // Apple's goals on days 1 and 4; the person sets move 650 from day 3 on.
        inputs.append(.appleRings(AppleRings(day: Self.day(1), move: 500, moveGoal: 300, exercise: 35, exerciseGoal: 30, stand: 12, standGoal: 10)))
        inputs.append(.appleRings(AppleRings(day: Self.day(4), move: 500, moveGoal: 350, exercise: 35, exerciseGoal: 40, stand: 12, standGoal: 12)))
        inputs.append(.goalSet(ring: .move, value: 650, from: Self.day(3)))
        try models.feed(inputs)
        let rings = try models.rings()
        #expect(rings.map(\.moveGoal) == [400, 300, 300, 650, 650, 650])
        #expect(rings.map(\.exerciseGoal) == [30, 30, 30, 30, 40, 40])
        #expect(rings.map(\.standGoal) == [12, 10, 10, 10, 12, 12])
        #expect(rings.map { $0.closed(.move) } == [true, true, true, false, false, false])
        #expect(rings[1].apple?.moveGoal == 300 && rings[0].apple == nil)
        #expect(try models.goalChanges() == [GoalChange(ring: .move, value: 650, from: Self.day(3))])

        // A later goal from an earlier day overrides from then on.
        try models.feed([.goalSet(ring: .move, value: 200, from: Self.day(4))], position: [2])
        #expect(try models.rings().map(\.moveGoal) == [400, 300, 300, 650, 200, 200])
    }

    @Test func streaksRunOverConsecutiveClosedDays() throws {
        let models = try ReadModels()
        var inputs: [ProjectionInput] = []
        // Days 0-2 all rings closed, day 3 stand missed, days 4-5 closed, day 7 closed (day 6 has no data).
        for i: Int64 in [0, 1, 2, 4, 5, 7] { inputs += Self.activity(Self.day(i), kcal: 500, minutes: 35, stood: 12) }
        inputs += Self.activity(Self.day(3), kcal: 500, minutes: 35, stood: 5)
        try models.feed(inputs)
        let streaks = try models.streaks()
        #expect(streaks.move.longest == 6 && streaks.move.longestFrom == Self.day(0) && streaks.move.longestTo == Self.day(5))
        #expect(streaks.move.current == 1 && streaks.move.currentFrom == Self.day(7))
        #expect(streaks.stand.longest == 3 && streaks.stand.longestTo == Self.day(2))
        #expect(streaks.all.longest == 3 && streaks.all.current == 1)
    }

    @Test func exerciseAndMoveAreDeduplicatedLikeAnyCumulativeMetric() throws {
        let models = try ReadModels()
        var inputs = Self.activity(d0, kcal: 300, minutes: 20, stood: 2)
        // The phone's own (lower) energy for the same hour does not add to the ring.
        let start = Build.instant(d0, 7)
        inputs.append(.cumulative(CumulativeSample(metric: RingMetrics.activeEnergy, unit: "kcal", source: Build.phone,
                                                   start: start, end: start + 3600, utcOffset: 0, value: 120)))
        try models.feed(inputs)
        let ring = try #require(try models.rings().first)
        #expect(ring.move == 300 && ring.exercise == 20 && ring.stand == 2)
    }
}
