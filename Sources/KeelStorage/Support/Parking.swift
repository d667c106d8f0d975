// The two primitives group commit waits with (GroupCommit.swift): a plain pthread mutex for its
// state, locked and unlocked around the leader's sync, and a `Parker` per waiting committer, so
// that the end of an fdatasync wakes exactly the committers it made durable, each on its own
// semaphore — no broadcast that wakes every waiter only for all of them to fight over one mutex
// and most to go back to sleep (Docs/Performance.md, "Durable saves"). The object store's save
// queue (KeelModel, ObjectStore+SaveGroup.swift) parks its waiting savers the same way.

import Glibc

/// A pthread mutex with explicit lock and unlock (for code that releases it in the middle, as a
/// group-commit leader does around its sync); its waiters sleep. `BlockingMutex` is the scoped
/// kind.
///
/// `@unchecked Sendable`: the pthread mutex lives at a stable heap address for the lifetime of the
/// instance and is designed to be shared between threads.
package final class PthreadMutex: @unchecked Sendable {
    private let mutex = PthreadObject<pthread_mutex_t> { pthread_mutex_init($0, nil) }

    package init() {}

    deinit { mutex.destroy { pthread_mutex_destroy($0) } }

    package func lock() { pthread_mutex_lock(mutex.pointer) }
    package func unlock() { pthread_mutex_unlock(mutex.pointer) }
}

/// Where one thread sleeps until another wakes it: a POSIX semaphore that starts at zero. `park`
/// returns after `unpark` (at once when `unpark` came first). The one who unparks holds a
/// reference to the parker until `unpark` returns, so the semaphore outlives the post.
///
/// `@unchecked Sendable`: the semaphore lives at a stable heap address for the lifetime of the
/// instance, and sem_wait/sem_post are designed to be called from different threads.
package final class Parker: @unchecked Sendable {
    private let semaphore = PthreadObject<sem_t> { sem_init($0, 0, 0) }

    package init() {}

    deinit { semaphore.destroy { sem_destroy($0) } }

    /// Sleeps until `unpark` (a signal interrupting the wait is not a wake-up: it waits again).
    package func park() {
        while sem_wait(semaphore.pointer) != 0 {}
    }

    package func unpark() { sem_post(semaphore.pointer) }
}
