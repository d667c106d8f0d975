// `Array.withUnsafeBytes` is `rethrows`, which erases a typed `throws(StorageError)` to `any Error`.
// This keeps the error type.

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws `StorageError`.
    @inline(__always)
    func withStorageBytes<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        let result: Result<R, StorageError> = withUnsafeBytes { bytes in
            Result { () throws(StorageError) -> R in try body(bytes) }
        }
        return try result.get()
    }
}
