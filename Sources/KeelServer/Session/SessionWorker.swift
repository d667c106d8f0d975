// The thread of one connection (DESIGN.md: blocking storage work never on NIO event loops nor on
// Swift's cooperative pool). Each connection's requests run here, one at a time and in order,
// so a slow save of one client never stalls the event loop that serves the others, and a
// context — confined to one thread, as Core Data's are — never crosses threads.
//
// The event loop submits jobs (the requests of one read burst, an event drain, a shutdown
// barrier); the thread runs them in order. Closing drops the jobs not yet started — they did
// nothing, and their connection is gone — and ends the thread after the job under way.

import Collections
import Dispatch
import Foundation
import KeelModel
import KeelProtocol
import Synchronization

/// A unit of work for a connection's thread.
enum SessionJob: Sendable {
    /// The requests of one read burst, in order (each answered by exactly one final line).
    case items([SessionItem])
    /// Move queued subscription events to the connection.
    case drainEvents
    /// Shutdown: every request before this one has been answered; refuse the ones after with
    /// BUSY; then call `reached`.
    case barrier(reached: @Sendable () -> Void)
}

/// One request as the event loop hands it over.
enum SessionItem: Sendable {
    /// A request to run; its arguments have been checked against the command table.
    case request(Request, CommandSpec)
    /// A request already answered (PARSE, TOO_LARGE, PERMISSION, BUSY…): its line, in order.
    case reply(Reply)
}

final class SessionWorker: Sendable {
    struct Queue {
        var jobs: Deque<SessionJob> = []
        var closed = false
    }

    /// Guards the jobs not yet started and the closed flag.
    private let queue = Mutex(Queue())
    /// Counts submitted jobs (and one extra wake at close). A SAVE of this thread that runs in
    /// another saver's group sleeps on it too, so the thread can sleep once between the save's end
    /// and its next job (ObjectStore+SaveGroup.swift); so a wake-up may come without a job, and
    /// `next` looks again.
    let wakeUp = ThreadWakeUp()

    init() {}

    /// Starts the thread; `body` runs on it and pulls jobs with `next()` until it returns nil.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        // Deep but bounded recursion runs here (predicates nest up to 256, JSON values 512).
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Queues a job; false when the worker is closed (the job is dropped, a barrier reported
    /// reached).
    @discardableResult
    func submit(_ job: SessionJob) -> Bool {
        let accepted = queue.withLock { q -> Bool in
            guard !q.closed else { return false }
            q.jobs.append(job)
            return true
        }
        if accepted {
            wakeUp.post()
        } else if case .barrier(let reached) = job {
            reached()
        }
        return accepted
    }

    /// The connection is gone: drop what has not started, end the thread after the current job.
    /// A dropped shutdown barrier is still reported reached: nothing before it will run.
    func close() {
        let dropped = queue.withLock { q -> Deque<SessionJob>? in
            guard !q.closed else { return nil }
            q.closed = true
            defer { q.jobs.removeAll() }
            return q.jobs
        }
        guard let dropped else { return }
        wakeUp.post()
        for case .barrier(let reached) in dropped { reached() }
    }

    var isClosed: Bool { queue.withLock { $0.closed } }

    /// Whether jobs wait behind the one running (its output can then wait for theirs: one
    /// write and one flush for the whole burst).
    var hasQueuedJobs: Bool { queue.withLock { !$0.jobs.isEmpty } }

    /// Blocks until a job comes; nil once closed. Call on the worker thread only.
    func next() -> SessionJob? {
        while true {
            wakeUp.wait()
            let item = queue.withLock { q -> (job: SessionJob?, closed: Bool) in
                if q.closed { return (nil, true) }
                return (q.jobs.popFirst(), false)
            }
            if item.closed { return nil }
            if let job = item.job { return job }
        }
    }
}
