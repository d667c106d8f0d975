// The background checkpointer (`StoreOptions.checkpointInBackground`): the automatic checkpoint
// that a commit triggers runs on a thread of its own instead of on the committer's, so the save
// that pushed the log past its threshold returns once it is durable and does not also wait for
// ~15,000 page writes and an fsync of the page file (Docs/Performance.md, "Object layer").
//
// What runs is exactly the inline checkpoint (`Pager.checkpointIfNeeded`: the writer lock, the
// same steps 1–5 of Pager+Checkpoint.swift, so every invariant of Docs/Invariants.md holds as it
// does inline — commits wait for the writer lock while it runs, readers never do). Only the
// thread differs. A thread is started when a request finds none running and ends when no request
// is left, so an idle store holds no thread. Requests that arrive while a checkpoint runs are
// folded into one more pass (which runs only if the log still needs it).
//
// Closing: `Store.close` retires the pager under the writer lock first, so a background
// checkpoint either finished before (close waited for the lock) or finds the pager retired and
// does nothing; close then waits for the thread to end (`waitIdle`), so no thread outlives the
// store. The thread holds the pager while it runs, so the files stay open until it ends.

import Glibc

final class BackgroundCheckpointer: @unchecked Sendable {
    // `@unchecked Sendable`: every mutable field is guarded by `lock`.
    private let lock = PthreadMutex()
    /// A thread is running (or about to): it will look at `requested` before it ends.
    private var running = false
    /// A checkpoint was asked for since the running thread last looked.
    private var requested = false
    /// Callers of `waitIdle` waiting for the thread to end.
    private var idleWaiters: [Parker] = []
    private var passes: UInt64 = 0

    init() {}

    /// Asks for a checkpoint of `pager` on the background thread; returns at once. Runs it on the
    /// caller's thread if no thread can be started.
    func request(_ pager: Pager) {
        lock.lock()
        requested = true
        if running {
            lock.unlock()
            return
        }
        running = true
        lock.unlock()
        let job = Unmanaged.passRetained(Job(checkpointer: self, pager: pager)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { argument in
            Unmanaged<Job>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, job)
        if rc == 0 {
            pthread_detach(thread)
        } else {
            pager.logger.warning("could not start the background checkpointer; checkpointing inline", metadata: ["errno": "\(rc)"])
            Unmanaged<Job>.fromOpaque(job).takeRetainedValue().run()
        }
    }

    /// Waits until no background checkpoint runs or is asked for.
    func waitIdle() {
        lock.lock()
        guard running else {
            lock.unlock()
            return
        }
        let parker = Parker()
        idleWaiters.append(parker)
        lock.unlock()
        parker.park()
    }

    /// How many checkpoint passes the background thread ran (each may have found nothing to do).
    var passCount: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return passes
    }

    /// The thread's loop: one pass per batch of requests; returns the `waitIdle` callers to wake
    /// once no request is left.
    private func serve(_ pager: Pager) -> [Parker] {
        while true {
            lock.lock()
            guard requested else {
                running = false
                let waiters = idleWaiters
                idleWaiters.removeAll()
                lock.unlock()
                return waiters
            }
            requested = false
            passes += 1
            lock.unlock()
            pager.runAutomaticCheckpoint()
        }
    }

    /// One thread's work. It lets go of the pager before it wakes `waitIdle`: a waiter that goes
    /// on to drop the store must not race this thread for the pager's last reference (its deinit
    /// closes the files, and a crash test counts those closes).
    private final class Job {
        let checkpointer: BackgroundCheckpointer
        var pager: Pager?

        init(checkpointer: BackgroundCheckpointer, pager: Pager) {
            self.checkpointer = checkpointer
            self.pager = pager
        }

        func run() {
            for w in serveAndLetGo() { w.unpark() }
        }

        /// Every reference to the pager this thread held is gone when this returns.
        private func serveAndLetGo() -> [Parker] {
            guard let pager else { return [] }
            self.pager = nil
            return checkpointer.serve(pager)
        }
    }
}
