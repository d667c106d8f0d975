import CLZ4

/// LZ4 block compression through the system's liblz4. Compressed data is always checksummed
/// before it is trusted, and is decompressed only with `LZ4_decompress_safe`, which never reads or
/// writes outside the buffers it is given (Docs/Invariants.md, I4).
public enum LZ4 {
    /// The largest output `compress` can produce for `count` input bytes.

    public static func compressBound(_ count: Int) -> Int { Int(LZ4_compressBound(Int32(count))) }

    /// Compresses `source` into `destination`; returns the compressed length, or nil when the
    /// result would not fit or would not be smaller than `limit` bytes (compression does not pay).

    public static func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, limit: Int
    ) -> Int? {
        guard let src = source.baseAddress, let dst = destination.baseAddress, source.count > 0 else { return nil }
        let capacity = min(destination.count, limit - 1)
        guard capacity > 0 else { return nil }
        let n = LZ4_compress_default(
            src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(capacity))
        return n > 0 ? Int(n) : nil
    }

    /// Decompresses `source` into exactly `destination.count` bytes. Throws `.corrupt` when the
    /// input is malformed or does not produce exactly that many bytes.

    public static func decompress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
        page: PageNumber? = nil, logPosition: LogPosition? = nil
    ) throws(StorageError) {
        guard let src = source.baseAddress, let dst = destination.baseAddress else {
            throw StorageError(.corrupt, "empty LZ4 block", page: page, logPosition: logPosition)
        }
        let n = LZ4_decompress_safe(
            src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count))
        guard n == Int32(destination.count) else {
            throw StorageError(
                .corrupt, "LZ4 block does not decompress to \(destination.count) bytes (got \(n))",
                page: page, logPosition: logPosition)
        }
    }
}
