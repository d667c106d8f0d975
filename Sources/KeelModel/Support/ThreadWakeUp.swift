// A thread's wake-up, shared by everyone who may have work for it: the daemon's connection thread
// sleeps on one between jobs (whoever has a job for it posts it), and a save of that thread that
// runs in another saver's group sleeps on the same one, so the thread can sleep once between
// a save and its client's next request (ObjectStore+SaveGroup.swift). Every waiter must look
// again at what it waits for after a wake-up: one post may have been meant for another reason.
//
// The daemon's connection thread reads its own socket (Decision 0005): its wake-up is an eventfd
// it polls together with the socket it `watch`es, so a request arriving wakes it as a post does —
// inside a save too, where it sleeps until its client's next request. A watched socket wakes one
// wait only (the watch then ends; the thread watches again once it has read).

import CKeelSupport
import Glibc
import KeelStorage
import Synchronization

/// A counting wake-up: a POSIX semaphore that starts at zero, or (`pollable`) an eventfd in
/// semaphore mode that a wait polls together with a watched descriptor.
package final class ThreadWakeUp: Sendable {
    private enum Kind {
        case parker(Parker)
        case eventfd(CInt)
    }

    private let kind: Kind
    /// POLLRDHUP (Linux), which Swift's Glibc module does not export.
    private static let pollReadHangUp: Int16 = 0x2000
    /// The descriptor whose readiness ends the next wait too (-1: none). Set and cleared by the
    /// waiting thread only.
    private let watched = Atomic<CInt>(-1)

    package init() {
        kind = .parker(Parker())
    }

    /// A wake-up that can also watch a descriptor; nil when no eventfd can be made.
    package init?(pollable: Void) {
        let descriptor = keel_eventfd_semaphore()
        guard descriptor >= 0 else { return nil }
        kind = .eventfd(descriptor)
    }

    /// Whether a wait can also watch a descriptor.
    package var isPollable: Bool {
        if case .eventfd = kind { return true }
        return false
    }

    deinit {
        if case .eventfd(let descriptor) = kind { close(descriptor) }
    }

    /// The next wait also ends when `descriptor` is readable, has hung up or failed (nil: only a
    /// post ends it). Call on the waiting thread; a wake-up without an eventfd ignores it.
    package func watch(_ descriptor: CInt?) {
        watched.store(descriptor ?? -1, ordering: .relaxed)
    }

    /// Sleeps until a post (returns at once, taking one, when posts are waiting) and returns true;
    /// or until the watched descriptor is ready, and returns false without taking a post (the
    /// watch ends: the next wait does not look at it unless watched again).
    @discardableResult
    package func wait() -> Bool {
        switch kind {
        case .parker(let parker):
            parker.park()
            return true
        case .eventfd(let descriptor):
            while true {
                let socket = watched.load(ordering: .relaxed)
                var fds = (
                    pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: socket, events: Int16(POLLIN) | Self.pollReadHangUp, revents: 0)
                )
                let ready = withUnsafeMutableBytes(of: &fds) { raw in
                    poll(raw.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, -1)
                }
                if ready < 0 { continue }  // EINTR
                if fds.0.revents != 0 {
                    var count: UInt64 = 0
                    if read(descriptor, &count, 8) == 8 { return true }
                }
                if socket >= 0, fds.1.revents != 0 {
                    watched.store(-1, ordering: .relaxed)
                    return false
                }
            }
        }
    }

    /// Wakes the sleeper, or lets the next `wait` return at once.
    package func post() {
        switch kind {
        case .parker(let parker): parker.unpark()
        case .eventfd(let descriptor):
            var one: UInt64 = 1
            while write(descriptor, &one, 8) < 0, errno == EINTR {}
        }
    }
}
