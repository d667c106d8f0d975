// The two primitives group commit waits with (GroupCommit.swift): a plain pthread mutex for its
// state, and a `Parker` per waiting committer, so that the end of an fdatasync wakes exactly the
// committers it made durable, each on its own semaphore — no broadcast that wakes every waiter
// only for all of them to fight over one mutex and most to go back to sleep
// (Docs/Performance.md, "Durable saves").

import Glibc

/// A pthread mutex; its waiters sleep (no spinning).
///
/// `@unchecked Sendable`: the pthread mutex lives at a stable heap address for the lifetime of the
/// instance and is designed to be shared between threads.
final class PthreadMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
}

/// Where one thread sleeps until another wakes it: a POSIX semaphore that starts at zero. `park`
/// returns after `unpark` (at once when `unpark` came first). The one who unparks must hold a
/// reference to the parker until `unpark` returns, so the semaphore outlives the post.
///
/// `@unchecked Sendable`: the semaphore lives at a stable heap address for the lifetime of the
/// instance, and sem_wait/sem_post are designed to be called from different threads.
final class Parker: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Sleeps until `unpark` (a signal interrupting the wait is not a wake-up).
    func park() {
        while sem_wait(semaphore) != 0 {}
    }

    func unpark() { sem_post(semaphore) }
}
