// A mutex whose waiters sleep at once (a plain pthread mutex), for locks that many threads want
// at once or that are held across I/O: the object store's save lock is held for a whole save —
// its B+tree work and its log write — and sixteen savers waiting on `Synchronization.Mutex` spun
// for it first, which on a two-core machine took the CPU from the save they were waiting for; the
// ID allocator's lock, held only for a moment, was spun on whenever its holder was preempted
// (Docs/Performance.md, "Durable saves"). Locks taken by few threads keep using `Mutex`.

import Glibc

/// `@unchecked Sendable`: `value` is read and written only between `pthread_mutex_lock` and
/// `pthread_mutex_unlock` on `mutex`, which lives at a stable heap address from init to deinit,
/// when no thread can hold it.
final class BlockingMutex<Value: Sendable>: @unchecked Sendable {
    private let mutex = PthreadObject<pthread_mutex_t> { pthread_mutex_init($0, nil) }
    private var value: Value

    init(_ value: Value) { self.value = value }

    deinit { mutex.destroy { pthread_mutex_destroy($0) } }

    func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex.pointer)
        defer { pthread_mutex_unlock(mutex.pointer) }
        return try body(&value)
    }
}

/// A pthread object (mutex, rwlock) at a stable heap address, as pthread requires: allocated and
/// initialised once, destroyed and freed by its owner's deinit.
struct PthreadObject<T> {
    let pointer: UnsafeMutablePointer<T>

    init(_ initialize: (UnsafeMutablePointer<T>) -> Int32) {
        pointer = .allocate(capacity: 1)
        _ = initialize(pointer)
    }

    func destroy(_ body: (UnsafeMutablePointer<T>) -> Int32) {
        _ = body(pointer)
        pointer.deallocate()
    }
}
