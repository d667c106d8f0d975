// The connection's event loop as a Swift task executor (`KeelConnection.executor`). A task that
// prefers it (`withTaskExecutorPreference(connection.executor) { … }`) runs on the thread that
// reads and writes the connection's socket: its request is written without waking another
// thread, and its reply resumes it on the same thread — no hop to the event loop and back to
// the cooperative pool per call. For latency-bound loops of calls; code that blocks must not run
// there, since it would stall the connection.

import NIOCore

final class EventLoopExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
