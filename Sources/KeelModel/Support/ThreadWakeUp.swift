// A thread's wake-up, shared by everyone who may have work for it: the daemon's connection thread
// sleeps on one between jobs (its event loop posts it per job), and a save of that thread that
// runs in another saver's group sleeps on the same one, so the thread can sleep once between
// a save and its client's next request (ObjectStore+SaveGroup.swift). Every waiter must look
// again at what it waits for after a wake-up: one post may have been meant for another reason.

import KeelStorage

/// A counting wake-up (a POSIX semaphore that starts at zero).
package final class ThreadWakeUp: Sendable {
    private let parker = Parker()

    package init() {}

    /// Sleeps until a post (returns at once, taking one, when posts are waiting).
    package func wait() { parker.park() }

    /// Wakes the sleeper, or lets the next `wait` return at once.
    package func post() { parker.unpark() }
}
