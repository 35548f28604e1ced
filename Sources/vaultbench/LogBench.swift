import SecureMemory
import ArgumentParser
import CSodium
import EventLog
import Foundation

extension VaultBench {
    /// Append, read and verify throughput of the event log, against libsodium run directly.
    struct LogBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "log",
            abstract: "Append N small events in batches with one fsync each, then read and verify them.")

        @Option(help: "Events to append.") var events = 1_000_000
        @Option(help: "Events per batch (one durable commit each).") var batch = 10_000
        @Option(help: "Bytes per event.") var size = 40
        @Option(help: "Directory for the temporary log (default: system temp).") var directory: String?
        @Option(help: "Read passes; the median is reported.") var passes = 5

        func run() throws {
            precondition(sodium_init() >= 0)
            print("vaultbench log: \(grouped(events)) events of \(size) B, batches of \(grouped(batch))")
            print("machine: \(Machine.summary)")
            let base = directory ?? FileManager.default.temporaryDirectory.path
            let path = base + "/vaultbench-log-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: path) }

            // Event contents: varied bytes, generated before any timing starts.
            var contents = [UInt8](repeating: 0, count: events * size)
            contents.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
            let key = SecretKey.random()
            let vaultID = (0..<16).map { _ in UInt8.random(in: 0...255) }

            // Append: build each batch from the raw bytes and commit it durably.
            let log = try EventLog.create(in: path, vaultID: vaultID, masterKey: key)
            let (_, appendSeconds) = try measure {
                try contents.withUnsafeBytes { raw in
                    var pending = EventBatch(reservingCapacity: batch * (size + 2))
                    for i in 0..<events {
                        try pending.append(UnsafeRawBufferPointer(rebasing: raw[(i * size)..<((i + 1) * size)]))
                        if pending.count == batch || i == events - 1 {
                            try log.append(pending)
                            pending.removeAll()
                        }
                    }
                }
            }
            let logSize = try FileManager.default.attributesOfItem(atPath: LogDirectory(path).log)[.size] as! Int
            let frames = Int(log.committed.sequence)

            // Read: every frame authenticated, chained and decrypted; every event visited.
            // Each pass takes well under a second, so the median of several is reported.
            let reader = try EventLog.open(in: path, masterKey: key, mode: .readOnly)
            var readTimes: [Double] = []
            for _ in 0..<passes {
                let ((readEvents, readBytes), seconds) = try measure { () throws -> (Int, Int) in
                    var iterator = try reader.reader()
                    var count = 0, bytes = 0
                    while let frame = try iterator.next() {
                        frame.forEachEvent { _, event in count += 1; bytes += event.count }
                    }
                    return (count, bytes)
                }
                guard readEvents == events, readBytes == events * size else {
                    throw ValidationError("read back \(readEvents) events / \(readBytes) bytes, expected \(events) / \(events * size)")
                }
                readTimes.append(seconds)
            }
            readTimes.sort()
            let readSeconds = readTimes[readTimes.count / 2]
            let (report, verifySeconds) = try measure { try EventLog.verify(in: path, masterKey: key) }
            guard report.isOK, report.events == UInt64(events) else { throw ValidationError("verify failed: \(report.problems)") }

            // Anchors in the same run: libsodium on the same bytes, without the log around it.
            let anchor = rawCryptoAnchor(contents, frameSize: logSize / max(frames, 1))
            let perEvent = perEventSealAnchor(contents, size: size, limit: min(events, 200_000))

            let appendRate = Double(events) / appendSeconds
            let readRate = Double(logSize) / readSeconds / 1e6
            let payloadPerEvent = size + 1 // one varint length byte below 128 bytes
            let frameOverhead = Double(logSize - 32 - events * payloadPerEvent) / Double(frames)
            print("")
            print("append      \(appendSeconds.formatted(3)) s  \(grouped(Int(appendRate))) events/s  (\(grouped(frames)) frames, \(events / batch) fsync'd commits)   target >= 1,000,000 events/s: \(appendRate >= 1e6 ? "met" : "NOT MET")")
            print("read        \(readSeconds.formatted(3)) s  \(readRate.formatted(0)) MB/s of log (chain + decrypt + events; median of \(passes), range \((Double(logSize) / readTimes.last! / 1e6).formatted(0))-\((Double(logSize) / readTimes.first! / 1e6).formatted(0)))   target >= 500 MB/s: \(readRate >= 500 ? "met" : "NOT MET")")
            print("verify      \(verifySeconds.formatted(3)) s  \((Double(logSize) / verifySeconds / 1e6).formatted(0)) MB/s")
            print("size        \(grouped(logSize)) B log for \(grouped(events * size)) B of events: \(frameOverhead.formatted(1)) B overhead per frame (112 header + 16 tag), +1 B length per event, \((Double(logSize) / Double(events)).formatted(2)) B per event")
            print("anchor      libsodium XChaCha20-Poly1305 decrypt + BLAKE2b of the same bytes in \(grouped(logSize / max(frames, 1))) B chunks: \(anchor.formatted(0)) MB/s; log read = \((readRate / anchor).formatted(2)) x anchor")
            print("anchor      one XChaCha20-Poly1305 seal per event (no batching): \(grouped(Int(perEvent))) events/s; batched append = \((appendRate / perEvent).formatted(1)) x anchor")
            print("peak RSS    \(Machine.peakRSSMiB.formatted(0)) MiB (includes the \(events * size / 1_048_576) MiB of generated event contents)")
        }

        /// Decrypt-and-hash throughput of libsodium alone, single-threaded, in frame-sized chunks.
        private func rawCryptoAnchor(_ data: [UInt8], frameSize: Int) -> Double {
            let chunk = max(frameSize, 4096)
            var key = [UInt8](repeating: 1, count: 32), nonce = [UInt8](repeating: 2, count: 24)
            var sealed: [[UInt8]] = []
            var offset = 0
            while offset < data.count {
                let n = min(chunk, data.count - offset)
                var out = [UInt8](repeating: 0, count: n + 16)
                var written: UInt64 = 0
                data.withUnsafeBufferPointer { src in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(&out, &written, src.baseAddress! + offset, UInt64(n), nil, 0, nil, nonce, key)
                }
                sealed.append(out)
                offset += n
            }
            var plain = [UInt8](repeating: 0, count: chunk)
            var hash = [UInt8](repeating: 0, count: 32)
            let (_, seconds) = measure {
                for c in sealed {
                    var written: UInt64 = 0
                    _ = crypto_aead_xchacha20poly1305_ietf_decrypt(&plain, &written, nil, c, UInt64(c.count), nil, 0, nonce, key)
                    _ = crypto_generichash(&hash, 32, c, UInt64(c.count), nil, 0)
                }
            }
            sodium_memzero(&key, 32)
            nonce.removeAll()
            return Double(data.count) / seconds / 1e6
        }

        /// What sealing each event on its own (with its own random nonce) achieves.
        private func perEventSealAnchor(_ data: [UInt8], size: Int, limit: Int) -> Double {
            let key = [UInt8](repeating: 3, count: 32)
            var nonce = [UInt8](repeating: 0, count: 24)
            var out = [UInt8](repeating: 0, count: size + 16)
            let (_, seconds) = measure {
                data.withUnsafeBufferPointer { src in
                    for i in 0..<limit {
                        var written: UInt64 = 0
                        randombytes_buf(&nonce, 24)
                        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(&out, &written, src.baseAddress! + i * size, UInt64(size), nil, 0, nil, nonce, key)
                    }
                }
            }
            return Double(limit) / seconds
        }
    }
}
