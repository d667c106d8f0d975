import CKeelSupport
import Testing

@testable import KeelStorage

@Suite("Checksums and compression")
struct SupportTests {
    @Test("CRC32C matches the standard check value and chains across calls")
    func crcCheckValue() {
        let bytes = Array("123456789".utf8)
        let whole = bytes.withUnsafeBytes { CRC32C.checksum($0) }
        #expect(whole == 0xE306_9283)
        let split = bytes.withUnsafeBytes { all in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[4...]),
                            continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[..<4])))
        }
        #expect(split == whole)
        // Long input exercises the 8-byte path; one flipped bit must change the value.
        var long = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let a = long.withUnsafeBytes { CRC32C.checksum($0) }
        long[5_000] ^= 0x10
        let b = long.withUnsafeBytes { CRC32C.checksum($0) }
        #expect(a != b)
    }

    @Test("the hardware CRC32C (three interleaved streams, joined by the zero-append operator) equals the table path at every length and offset")
    func crcHardwareMatchesPortable() {
        var random = SeededRandom(seed: 0x5EED_C3C)
        let data = (0..<(3 * 8192 * 2 + 777)).map { _ in UInt8.random(in: 0...255, using: &random) }
        // Every length up to a few triples of short blocks, then around the long-block boundaries.
        let lengths = Array(0...1_600) + [4_096, 4_128, 8_192, 3 * 8_192 - 1, 3 * 8_192, 3 * 8_192 + 1, 3 * 8_192 + 3 * 256 + 5, data.count - 7]
        data.withUnsafeBytes { all in
            for length in lengths {
                for offset in [0, 1, 3, 7] where offset + length <= all.count {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    let expected = keel_crc32c_portable(0x1234_5678, slice.baseAddress, length)
                    let actual = CRC32C.checksum(slice, continuing: 0x1234_5678)
                    if length > 0 { #expect(actual == expected, "length \(length) at offset \(offset)") }
                }
            }
        }
        #expect(CRC32C.isHardwareAccelerated || keel_crc32c_hardware() == 0)
    }

    @Test("the zero-append operator joins CRCs: CRC(A ++ B) = Z_|B|(CRC(A)) ^ CRC(B), at any length of B")
    func crcZeroAppend() {
        var random = SeededRandom(seed: 0xC0DE_0A0B)
        let data = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        data.withUnsafeBytes { all in
            for length in [0, 1, 2, 3, 7, 8, 255, 256, 508, 1_000, 4_092, 8_188, 65_532] {
                let zeros = CRC32C.ZeroAppend(length: length)
                for split in [0, 1, 5, 64, 1_000] where split + length <= all.count {
                    let a = UnsafeRawBufferPointer(rebasing: all[0..<split])
                    let b = UnsafeRawBufferPointer(rebasing: all[split..<(split + length)])
                    let whole = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[0..<(split + length)]))
                    #expect(zeros.apply(CRC32C.checksum(a)) ^ CRC32C.checksum(b) == whole, "|A| \(split), |B| \(length)")
                }
            }
        }
    }

    @Test("a sealed page's frame checksum, derived from its page checksum, equals the one computed over the frame's bytes")
    func sealedFrameChecksum() {
        var random = SeededRandom(seed: 0xF4A3_E5)
        for pageSize in [512, 1_024, 4_096, 16_384, 65_536] {
            let zeros = CRC32C.ZeroAppend(length: pageSize - 4)
            for round in 0..<20 {
                let page = PageBuffer.zeroed(size: pageSize)
                for i in 0..<pageSize { page.bytes[i] = UInt8.random(in: 0...255, using: &random) }
                if round % 4 == 0 { for i in 0..<pageSize { page.bytes[i] = 0 } }  // an empty page as well
                let number = PageNumber(UInt32.random(in: 1...UInt32.max, using: &random))
                page.seal(as: number)
                let previous = UInt32.random(in: 0...UInt32.max, using: &random)
                let header = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
                let offset = LogPosition(UInt64.random(in: 64...(1 << 40), using: &random))
                header.withUnsafeBytes { h in
                    let full = LogFormat.frameChecksum(previous: previous, headerFields: h, offset: offset, payload: page.readOnlyBytes)
                    let derived = LogFormat.sealedFrameChecksum(
                        previous: previous, headerFields: h, offset: offset, page: page, number: number, zeros: zeros)
                    #expect(derived == full, "page size \(pageSize), round \(round)")
                }
            }
        }
    }

    @Test("LZ4 round-trips compressible data and refuses damaged blocks without crashing")
    func lz4RoundTrip() throws {
        let source = [UInt8](repeating: 7, count: 4096) + Array("tail".utf8)
        var compressed = [UInt8](repeating: 0, count: LZ4.compressBound(source.count))
        let n = source.withUnsafeBytes { src in
            compressed.withUnsafeMutableBytes { LZ4.compress(src, into: $0, limit: source.count) }
        }
        let length = try #require(n)
        #expect(length < 200)
        var out = [UInt8](repeating: 0, count: source.count)
        try compressed.withUnsafeBytes { c in
            try out.withUnsafeMutableBytes { try LZ4.decompress(UnsafeRawBufferPointer(rebasing: c[..<length]), into: $0) }
        }
        #expect(out == source)
        // Truncated input must be an error, never a crash or an over-read.
        #expect(throws: StorageError.self) {
            try compressed.withUnsafeBytes { c in
                try out.withUnsafeMutableBytes { try LZ4.decompress(UnsafeRawBufferPointer(rebasing: c[..<(length / 2)]), into: $0) }
            }
        }
        // Incompressible data does not "pay": compress returns nil under the limit.
        var rng = SystemRandomNumberGenerator()
        let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let m = noise.withUnsafeBytes { src in
            compressed.withUnsafeMutableBytes { LZ4.compress(src, into: $0, limit: noise.count) }
        }
        #expect(m == nil)
    }
}
