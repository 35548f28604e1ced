import EventLog
import Foundation
import HandOff
import Importers
import Projections
import VaultEvents

/// A value handed to another thread that the handing side promises not to touch meanwhile.
struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
}

extension Vault {
    /// Read-model inputs in a chunk handed from the log's reader to the applying side.
    static let inputChunkSize = 4096

    /// Applies the read-model inputs of the events `scan` reads to `apply`, the scan running on a
    /// second thread feeding a `ChunkPipe` (three chunks at most wait): a rebuild's (or a long
    /// catch-up's) two halves, decrypting and decoding the log and the read models' SQL, on the
    /// machine's two cores. The scanning thread is the only one to touch what it reads (the log,
    /// its decoders); this one touches only the read models. Returns the position read up to and
    /// the inputs applied.
    ///
    /// Samples, nearly every event, are read by their heads (`EventDecoder.sampleHead`); the
    /// rest are decoded whole.
    func applyInputs(scan: @escaping (_ body: (EventDecoder, UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> LogPosition,
                     _ apply: (ProjectionInput) throws -> Void) throws -> (position: LogPosition, inputs: Int) {
        let scanner = HandedOver(value: scan)
        let pipe = ChunkPipe<[ProjectionInput]>(capacity: 3)
        let reached = ReachedPosition()
        pipe.start(name: "read-model inputs", stackSize: 8 << 20) { pipe in
            var feed = ProjectionFeed()
            var chunk: [ProjectionInput] = []
            chunk.reserveCapacity(Vault.inputChunkSize)
            let position = try scanner.value { decoder, index, bytes in
                let input: ProjectionInput?
                if let head = try decoder.sampleHead(bytes, index: index) {
                    input = feed.input(for: head, of: decoder)
                } else if let event = try decoder.decode(bytes, index: index) {
                    input = feed.input(for: event)
                } else {
                    return
                }
                guard let input else { return }
                chunk.append(input)
                if chunk.count == Vault.inputChunkSize {
                    try pipe.put(chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if !chunk.isEmpty { try pipe.put(chunk) }
            // Set before the pipe is finished, which the last `take` waits for.
            reached.position = position
        }
        defer { pipe.cancelAndDrain() }
        var inputs = 0
        while var chunk = try pipe.take() {
            inputs += chunk.count
            for index in chunk.indices { try apply(chunk.takeInput(at: index)) }
        }
        return (reached.position!, inputs)
    }
}

/// Where a scan on another thread stopped: written by it before its pipe is finished, read after
/// the pipe's end was taken (the pipe's lock orders the two).
private final class ReachedPosition: @unchecked Sendable {
    var position: LogPosition?
}

extension Array where Element == ProjectionInput {
    /// The input at `index`, moved out and not copied, a payload-free input left in its place: a
    /// copy would retain the strings of each input on the applying thread while the thread that
    /// made them retains the same ones for the next inputs.
    @inline(__always)
    mutating func takeInput(at index: Int) -> ProjectionInput {
        var input = ProjectionInput.standHour(start: 0, utcOffset: 0, stood: false)
        swap(&input, &self[index])
        return input
    }
}
