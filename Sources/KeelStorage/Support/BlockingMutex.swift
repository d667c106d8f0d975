// A mutex whose waiters sleep at once (a plain pthread mutex), for locks that many threads want
// at once or that are held across I/O. The engine's writer lock is held for a whole write
// transaction; the object store's save lock for a whole save — its B+tree work and its log write.
// Sixteen writers waiting on `Synchronization.Mutex` spin for it first, which on a two-core
// machine takes the CPU from the transaction they are waiting for (the writer lock's spinning was
// 9.5% of a 16-thread commit run; the save lock's 12–16% of keeld under 16 savers). The ID
// allocator's lock, held only for a moment, was spun on whenever its holder was preempted
// (Docs/Performance.md, "Durable saves"). Locks taken by few threads keep using `Mutex`.
//
// `package`: KeelModel's locks (the save lock, the ID allocator, `ReadWriteLock`) use these too.

import Glibc

/// `@unchecked Sendable`: `value` is read and written only between `pthread_mutex_lock` and
/// `pthread_mutex_unlock` on `mutex`, which lives at a stable heap address from init to deinit,
/// when no thread can hold it.
package final class BlockingMutex<Value: Sendable>: @unchecked Sendable {
    private let mutex = PthreadObject<pthread_mutex_t> { pthread_mutex_init($0, nil) }
    private var value: Value

    package init(_ value: Value) { self.value = value }

    deinit { mutex.destroy { pthread_mutex_destroy($0) } }

    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex.pointer)
        defer { pthread_mutex_unlock(mutex.pointer) }
        return try body(&value)
    }
}

/// A pthread object (mutex, rwlock) at a stable heap address, as pthread requires: allocated and
/// initialised once, destroyed and freed by its owner's deinit.
package struct PthreadObject<T> {
    package let pointer: UnsafeMutablePointer<T>

    package init(_ initialize: (UnsafeMutablePointer<T>) -> Int32) {
        pointer = .allocate(capacity: 1)
        _ = initialize(pointer)
    }

    package func destroy(_ body: (UnsafeMutablePointer<T>) -> Int32) {
        _ = body(pointer)
        pointer.deallocate()
    }
}
