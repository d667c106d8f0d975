// A reader-writer lock held across calls (not closure-scoped): a multi-store save takes it
// exclusively from just before its first store commits until its last one has, so a snapshot
// (which takes it shared while pinning one engine snapshot per store) never sees half a save.

import Glibc

/// `@unchecked Sendable`: the pthread rwlock is thread-safe by definition; the pointer is
/// allocated once in init, never reassigned, and freed in deinit when no thread can hold it.
final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lockShared() { pthread_rwlock_rdlock(lock) }
    func lockExclusive() { pthread_rwlock_wrlock(lock) }
    func unlock() { pthread_rwlock_unlock(lock) }

    func withShared<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lockShared()
        defer { unlock() }
        return try body()
    }
}
