// `Array.withUnsafeBytes` rethrows untyped errors; the engine throws `StorageError` (typed).
// These wrappers keep the error type without a cast or a trap.

extension Array where Element == UInt8 {
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        let result: Result<R, StorageError> = withUnsafeBytes { b in
            Result { () throws(StorageError) -> R in try body(b) }
        }
        return try result.get()
    }

    @inline(__always)
    mutating func withMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws(StorageError) -> R)
        throws(StorageError) -> R
    {
        let result: Result<R, StorageError> = withUnsafeMutableBytes { b in
            Result { () throws(StorageError) -> R in try body(b) }
        }
        return try result.get()
    }
}
