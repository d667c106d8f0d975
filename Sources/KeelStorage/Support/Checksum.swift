import CKeelSupport

/// CRC32C (Castagnoli), hardware-accelerated when the CPU has SSE4.2. Every page and every log
/// record carries one (Docs/Invariants.md, I3).
public enum CRC32C {
    /// The CRC32C of `bytes`, continuing from `crc` (0 to start).

    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return keel_crc32c(crc, base, bytes.count)
    }

    /// The CRC32C of a little-endian integer's bytes, continuing from `crc`.

    public static func checksum<T: FixedWidthInteger>(integer value: T, continuing crc: UInt32) -> UInt32 {
        var le = value.littleEndian
        return withUnsafeBytes(of: &le) { checksum($0, continuing: crc) }
    }

    /// Whether the hardware instruction is in use.
    public static var isHardwareAccelerated: Bool { keel_crc32c_hardware() != 0 }

    /// Appending a fixed number of zero bytes to a CRC: for the CRC `a` of A and `b` of B, with B
    /// `length` bytes long, the CRC of A ++ B is `apply(a) ^ b` (CRCs are linear). Built once
    /// (four byte tables), applied in four lookups.
    struct ZeroAppend: Sendable {
        let length: Int
        private let table: [UInt32]

        init(length: Int) {
            self.length = length
            var table = [UInt32](repeating: 0, count: 1024)
            table.withUnsafeMutableBufferPointer { keel_crc32c_zeros_table($0.baseAddress!, length) }
            self.table = table
        }

        @inline(__always)
        func apply(_ crc: UInt32) -> UInt32 {
            table.withUnsafeBufferPointer { t in
                t[Int(crc & 0xFF)] ^ t[256 + Int((crc >> 8) & 0xFF)] ^ t[512 + Int((crc >> 16) & 0xFF)] ^ t[768 + Int(crc >> 24)]
            }
        }
    }
}
