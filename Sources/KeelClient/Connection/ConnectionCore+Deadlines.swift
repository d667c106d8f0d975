// Cancellation, deadlines and the connection's failure (ConnectionCore.swift has the state). One
// timer per connection, set for the earliest deadline of the calls in flight; when it fires, every
// call past its deadline fails with TIMEOUT and turns `.discarded` (its late lines are dropped by
// tag), and the timer is set for the next.

import KeelModel
import NIOCore

extension ConnectionCore {
    /// The calling task was cancelled: the call fails with CANCELLED; its reply is discarded.
    func cancel(_ tag: UInt64) {
        let continuation = state.withLock { s -> ReplyContinuation? in
            guard let call = s.calls[tag], case .reply(let continuation) = call.kind else { return nil }
            s.calls[tag]?.kind = .discarded
            s.calls[tag]?.deadline = nil
            return continuation
        }
        continuation?.resume(returning: .failure(KeelError(.cancelled, "the task was cancelled while waiting for the reply")))
    }

    func scheduleTimer(at deadline: NIODeadline) {
        eventLoop.assertInEventLoop()
        let timer = eventLoop.scheduleTask(deadline: deadline) { self.expire() }
        let previous = state.withLock { s -> Scheduled<Void>? in
            let previous = s.timer
            s.timer = timer
            return previous
        }
        previous?.cancel()
    }

    /// The deadline timer (event loop): every call past its deadline fails with TIMEOUT and is
    /// discarded; the timer is set again for the earliest deadline left.
    private func expire() {
        let now = NIODeadline.now()
        let (expired, next) = state.withLock { s -> ([PendingCall], NIODeadline?) in
            var expired: [PendingCall] = []
            var next: NIODeadline?
            for (tag, call) in s.calls {
                guard let deadline = call.deadline else { continue }
                if deadline <= now {
                    expired.append(call)
                    s.calls[tag]?.kind = .discarded
                    s.calls[tag]?.deadline = nil
                } else if next.map({ deadline < $0 }) ?? true {
                    next = deadline
                }
            }
            s.timerAt = next
            s.timer = nil
            return (expired, next)
        }
        for call in expired {
            let error = KeelError(
                .timeout,
                "no reply to \(call.command) within its deadline of \(Self.describe(call.timeout)); a late reply will be discarded")
            switch call.kind {
            case .reply(let continuation): continuation.resume(returning: .failure(error))
            case .stream(let sink): sink.finish(error)
            case .discarded: break
            }
        }
        if !expired.isEmpty { logger.debug("calls timed out", metadata: ["calls.expired": "\(expired.count)"]) }
        if let next { scheduleTimer(at: next) }
    }

    /// The connection is gone: every call in flight fails with `error`, and every later one.
    /// Returns false when it had already failed.
    @discardableResult
    func fail(_ reason: KeelError) -> Bool {
        var error = reason
        let taken = state.withLock { s -> (calls: [PendingCall], subscribers: [ChangeBuffer], waiters: [SubscribeContinuation], timer: Scheduled<Void>?)? in
            guard s.failure == nil else { return nil }
            error = s.closing ?? reason
            s.failure = error
            let calls = Array(s.calls.values)
            s.calls = [:]
            s.wire.outgoing = ByteBuffer()
            let (subscribers, waiters) = s.subscriptions.takeAll()
            let timer = s.timer
            s.timer = nil
            s.timerAt = nil
            s.handler = nil
            // Its descriptor closes once a send under way (if any) lets go of it.
            s.wire.socket = nil
            return (calls, subscribers, waiters, timer)
        }
        guard let taken else { return false }
        taken.timer?.cancel()
        for call in taken.calls {
            switch call.kind {
            case .reply(let continuation): continuation.resume(returning: .failure(error))
            case .stream(let sink): sink.finish(error)
            case .discarded: break
            }
        }
        for subscriber in taken.subscribers { subscriber.finish(error) }
        for waiter in taken.waiters { waiter.resume(returning: .failed(error)) }
        return true
    }

    /// Why the connection is gone (or closing); nil while it is usable.
    var failure: KeelError? { state.withLock { $0.failure ?? $0.closing } }

    /// `close()` begins: later calls fail with `reason`; calls in flight still get their replies.
    /// Returns false when the connection was already closing or gone.
    func beginClose(_ reason: KeelError) -> Bool {
        state.withLock { s in
            guard s.failure == nil, s.closing == nil else { return false }
            s.closing = reason
            return true
        }
    }

    var callsInFlight: Int { state.withLock { $0.calls.count } }

    static func describe(_ amount: TimeAmount) -> String {
        let ns = amount.nanoseconds
        if ns % 1_000_000_000 == 0 { return "\(ns / 1_000_000_000) s" }
        if ns % 1_000_000 == 0 { return "\(ns / 1_000_000) ms" }
        return "\(Double(ns) / 1e6) ms"
    }
}
