import CQREncode
import Foundation

/// A QR code drawn with half blocks (two rows a line), through libqrencode. Light modules are
/// drawn and dark ones left blank, as `qrencode -t UTF8` does, for terminals with a dark background.
enum TerminalQR {
    /// The lines of a QR code holding `text` (error correction M), with a two-module quiet zone;
    /// nil when the text does not fit a QR code.
    static func lines(for text: String) -> [String]? {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width), quiet = 2, size = width + 2 * quiet
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - quiet, y - quiet)
            guard mx >= 0, my >= 0, mx < width, my < width else { return false }
            return code.pointee.data[my * width + mx] & 1 != 0
        }
        var out: [String] = []
        for y in stride(from: 0, to: size, by: 2) {
            var line = ""
            for x in 0..<size {
                let top = !dark(x, y), bottom = y + 1 < size ? !dark(x, y + 1) : false
                line += top && bottom ? "█" : top ? "▀" : bottom ? "▄" : " "
            }
            out.append(line)
        }
        return out
    }
}
