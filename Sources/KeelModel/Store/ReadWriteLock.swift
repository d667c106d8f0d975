// A reader-writer lock held across calls (not closure-scoped): a multi-store save takes it
// exclusively from just before its first store commits until its last one has, so a snapshot
// (which takes it shared while pinning one engine snapshot per store) never sees half a save.

import Glibc
import KeelStorage

/// `@unchecked Sendable`: the pthread rwlock is thread-safe by definition; it lives at a stable
/// heap address (`PthreadObject`) from init to deinit, when no thread can hold it.
final class ReadWriteLock: @unchecked Sendable {
    private let lock = PthreadObject<pthread_rwlock_t> { pthread_rwlock_init($0, nil) }

    init() {}

    deinit { lock.destroy { pthread_rwlock_destroy($0) } }

    func lockShared() { pthread_rwlock_rdlock(lock.pointer) }
    func lockExclusive() { pthread_rwlock_wrlock(lock.pointer) }
    func unlock() { pthread_rwlock_unlock(lock.pointer) }

    func withShared<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lockShared()
        defer { unlock() }
        return try body()
    }
}
