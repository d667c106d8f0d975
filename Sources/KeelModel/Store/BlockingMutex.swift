// A mutex whose waiters sleep at once (a plain pthread mutex), for locks that many threads want
// at once or that are held across I/O: the object store's save lock is held for a whole save —
// its B+tree work and its log write — and sixteen savers waiting on `Synchronization.Mutex` spun
// for it first, which on a two-core machine took the CPU from the save they were waiting for; the
// ID allocator's lock, held only for a moment, was spun on whenever its holder was preempted
// (Docs/Performance.md, "Durable saves"). Locks taken by few threads keep using `Mutex`.

import Glibc

/// `@unchecked Sendable`: `value` is read and written only between `pthread_mutex_lock` and
/// `pthread_mutex_unlock` on `mutex`, which is allocated once in init, never reassigned, and
/// freed in deinit when no thread can hold it.
final class BlockingMutex<Value: Sendable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
