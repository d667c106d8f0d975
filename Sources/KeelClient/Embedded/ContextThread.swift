// The thread that owns one family of embedded contexts: a top-level context and its children.
//
// Why a dedicated thread (and not an actor on the cooperative pool): a context is confined to
// one isolation domain (Docs/Contexts.md, "The isolation rule"), and a child context reads its
// parent live, so a whole family must share one owner; its work blocks (page reads, the fsync of
// a save), and blocking work never runs on Swift's cooperative pool (DESIGN.md, "Concurrency");
// and a streaming fetch must be able to wait for its consumer without stopping the family —
// `serve(until:)` runs the family's other calls while it waits, which an actor, busy with the
// fetch's job, could not. This is keeld's model too: a thread per connection owns its contexts
// (Decision 0005).
//
// Jobs run one at a time, in the order submitted. `stop()` lets the queued jobs finish and then
// ends the thread; a job submitted after it is refused (its caller reports the context closed).

import Collections
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

final class ContextThread: Sendable {
    typealias Job = @Sendable () -> Void

    private struct Queue {
        var jobs: Deque<Job> = []
        var stopping = false
    }

    /// Guards the jobs not yet started and the stopping flag.
    private let queue = Mutex(Queue())
    /// Counts submitted jobs, wakes and the stop: the thread waits on it for something to do.
    private let signal = DispatchSemaphore(value: 0)
    /// The running thread's id (set once, by the thread itself), for `isCurrent`.
    private let running = Mutex<pthread_t?>(nil)

    init(name: String) {
        let thread = Thread { [self] in
            running.withLock { $0 = pthread_self() }
            serve { queue.withLock { $0.stopping && $0.jobs.isEmpty } }
        }
        thread.name = name
        // Deep but bounded recursion runs here (predicates nest up to 256, JSON values 512).
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Queues `job`; false (and the job dropped) once the thread is stopping.
    @discardableResult
    func submit(_ job: @escaping Job) -> Bool {
        let accepted = queue.withLock { q -> Bool in
            guard !q.stopping else { return false }
            q.jobs.append(job)
            return true
        }
        if accepted { signal.signal() }
        return accepted
    }

    /// Makes a waiting `serve(until:)` look at its condition again.
    func wake() {
        signal.signal()
    }

    /// Ends the thread once the jobs already queued have run.
    func stop() {
        queue.withLock { $0.stopping = true }
        signal.signal()
    }

    var isStopping: Bool { queue.withLock { $0.stopping } }

    /// Whether the caller runs on this thread.
    var isCurrent: Bool {
        running.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Runs jobs until `done()` holds; called on this thread only (by its main loop, and by a
    /// fetch that waits for its consumer: the family's other calls go on meanwhile).
    func serve(until done: () -> Bool) {
        while !done() {
            signal.wait()
            if let job = queue.withLock({ $0.jobs.popFirst() }) { job() }
        }
    }
}
