// The thread of one connection (DESIGN.md: blocking storage work never on NIO event loops nor on
// Swift's cooperative pool). Each connection's requests run here, one at a time and in order,
// so a slow save of one client never stalls the event loop that serves the others, and a
// context — confined to one thread, as Core Data's are — never crosses threads.
//
// The thread reads its connection's socket itself (Decision 0005, ConnectionInput): it waits on
// its wake-up, which also watches the socket. Others submit jobs (an event drain, a shutdown
// barrier; the requests of a read burst when the event loop reads the socket); the thread runs
// them in order. Closing drops the jobs not yet started — they did nothing, and their connection
// is gone — and ends the thread after the job under way.

import Collections
import Dispatch
import Foundation
import KeelModel
import KeelProtocol
import NIOCore
import Synchronization

/// A unit of work for a connection's thread.
enum SessionJob: Sendable {
    /// The requests of one read burst, in order (each answered by exactly one final line).
    case items([SessionItem])
    /// Bytes the event loop read once the client shut down its side (ConnectionInput), after
    /// everything the thread read itself.
    case input(ByteBuffer)
    /// The client shut down its side, and everything it sent came before this.
    case inputEnded
    /// Move queued subscription events to the connection.
    case drainEvents
    /// Shutdown: every request before this one has been answered; refuse the ones after with
    /// BUSY; then call `reached`.
    case barrier(reached: @Sendable () -> Void)
}

/// What a connection's thread wakes for.
enum SessionWork {
    case job(SessionJob)
    /// The socket the thread watches is readable, or has ended.
    case readable
}

/// One request, checked (RequestIntake).
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
    /// Pollable when it can be (the thread then also waits on its socket).
    let wakeUp = ThreadWakeUp(pollable: ()) ?? ThreadWakeUp()

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

    /// Blocks until a job comes or `socket` (when given) is readable; nil once closed. Call on
    /// the worker thread only.
    func next(watching socket: CInt?) -> SessionWork? {
        while true {
            wakeUp.watch(socket)
            let posted = wakeUp.wait()
            let item = queue.withLock { q -> (job: SessionJob?, closed: Bool) in
                if q.closed { return (nil, true) }
                return (q.jobs.popFirst(), false)
            }
            if item.closed { return nil }
            if let job = item.job { return .job(job) }
            if !posted { return .readable }
        }
    }
}
