// The buffer between the connection's event loop, which produces a stream's items as reply
// lines arrive, and the one task that consumes them (a FETCH's rows, a HISTORY's entries, a
// subscription's change events).
//
// Rows are kept as the lines they came in and decoded (JSON parsed, then the stream's own
// decoding) by the consuming task in `next()`: the event loop only cuts lines and routes them,
// and the parsing of a large fetch happens on the consumer's thread, at its pace.
//
// Two policies:
// - back-pressure (rows): when `high` items wait, `push` says so and the connection stops
//   reading the socket; when the consumer has taken them down to `low`, `onResume` tells the
//   connection to read again. Nothing is dropped, and memory stays bounded by `high` plus what
//   one socket read brings.
// - drop with an overflow marker (events): a subscription cannot stop the socket (replies of
//   other calls come on it), so beyond `limit` the waiting items are dropped and one marker
//   takes their place, as the daemon does for its own event queue.
//
// The end (normal or an error) is delivered after every item already buffered. A consumer
// that goes away first (the stream dropped, its task cancelled, or a row it cannot decode)
// calls `onCancel` once, so the connection can discard the rest of the reply by tag.

import DequeModule
import KeelModel
import Synchronization

/// What `StreamBuffer.push` did.
enum StreamPushed: Equatable {
    /// Buffered (or handed straight to a waiting consumer): how many items and line bytes wait
    /// now, and whether the producer must pause (back-pressure policy).
    case buffered(count: Int, bytes: Int, pause: Bool)
    /// The consumer is gone: the item was dropped.
    case discarded
}

final class StreamBuffer<Element: Sendable>: Sendable {
    enum Policy: Sendable {
        case backPressure(high: Int, low: Int)
        case dropOnOverflow(limit: Int, marker: @Sendable (Element) -> Element)
    }

    /// One buffered item: a value, or a reply line still to decode.
    enum Item: Sendable {
        case value(Element)
        /// A ROW line and where its JSON starts.
        case line([UInt8], payloadStart: Int)
    }

    private enum End {
        case open
        case failed(KeelError)
        case finished
    }

    private typealias Waiter = CheckedContinuation<Result<Item?, KeelError>, Never>

    private struct State {
        var items: Deque<(item: Item, bytes: Int)> = []
        var bytes = 0
        var end: End = .open
        /// The consumer, suspended in `next()` with nothing buffered.
        var waiter: Waiter?
        /// The consumer went away before the end.
        var cancelled = false
        /// The producer was told to pause and has not been resumed.
        var paused = false
    }

    /// Guards the buffered items, the end, the waiting consumer and the pause flag.
    private let state = Mutex(State())
    private let policy: Policy
    /// Turns a ROW line (from its JSON's start) into an element, on the consumer's thread.
    private let decode: @Sendable ([UInt8], Int) throws(KeelError) -> Element
    private let onResume: @Sendable () -> Void
    private let onCancel: @Sendable () -> Void

    init(
        policy: Policy, decode: @escaping @Sendable ([UInt8], Int) throws(KeelError) -> Element = StreamBuffer.undecodable,
        onResume: @escaping @Sendable () -> Void = {}, onCancel: @escaping @Sendable () -> Void
    ) {
        self.policy = policy
        self.decode = decode
        self.onResume = onResume
        self.onCancel = onCancel
    }

    /// For buffers fed values only (events).
    @Sendable static func undecodable(_ line: [UInt8], _ start: Int) throws(KeelError) -> Element {
        throw KeelError(.internal, "this stream takes no reply lines")
    }

    /// A buffer that has already ended with `error` (a call that could not be sent).
    static func failed(_ error: KeelError) -> StreamBuffer {
        let buffer = StreamBuffer(policy: .backPressure(high: 1, low: 0), onCancel: {})
        buffer.finish(error)
        return buffer
    }

    // MARK: Producer (the event loop)

    /// Adds an item that came in a line of `bytes` bytes.
    func push(_ item: Item, bytes: Int) -> StreamPushed {
        let (waiter, pushed) = state.withLock { s -> (Waiter?, StreamPushed) in
            guard !s.cancelled, case .open = s.end else { return (nil, .discarded) }
            if let waiter = s.waiter {
                s.waiter = nil
                return (waiter, .buffered(count: 0, bytes: 0, pause: false))
            }
            switch policy {
            case .backPressure(let high, _):
                s.items.append((item, bytes))
                s.bytes += bytes
                let pause = !s.paused && s.items.count >= high
                if pause { s.paused = true }
                return (nil, .buffered(count: s.items.count, bytes: s.bytes, pause: pause))
            case .dropOnOverflow(let limit, let marker):
                if s.items.count >= limit, case .value(let element) = item {
                    s.items.removeAll()
                    s.items.append((.value(marker(element)), 0))
                    s.bytes = 0
                } else {
                    s.items.append((item, bytes))
                    s.bytes += bytes
                }
                return (nil, .buffered(count: s.items.count, bytes: s.bytes, pause: false))
            }
        }
        waiter?.resume(returning: .success(item))
        return pushed
    }

    /// The stream's end: normal (`nil`) or an error, delivered after what is buffered.
    func finish(_ error: KeelError? = nil) {
        let waiter = state.withLock { s -> Waiter? in
            guard case .open = s.end else { return nil }
            s.end = error.map(End.failed) ?? .finished
            let waiter = s.waiter
            s.waiter = nil
            if waiter != nil { s.end = .finished }
            return waiter
        }
        waiter?.resume(returning: error.map { .failure($0) } ?? .success(nil))
    }

    // MARK: Consumer

    /// The next element; nil at the end. Throws the stream's error once, after the elements
    /// buffered before it; `CANCELLED` if the consuming task is cancelled while it waits.
    func next() async throws(KeelError) -> Element? {
        // Fast path: something is buffered (no continuation, no cancellation handler).
        if let ready = take() { return try element(ready) }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                var resume = false
                let ready = state.withLock { s -> Result<Item?, KeelError>? in
                    if let ready = take(&s, resume: &resume) { return ready }
                    if Task.isCancelled { return .failure(KeelError(.cancelled, "the task consuming the stream was cancelled")) }
                    s.waiter = continuation
                    return nil
                }
                if resume { onResume() }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.cancel(KeelError(.cancelled, "the task consuming the stream was cancelled"))
        }
        if case .failure(let error) = result, error.code == .cancelled { cancel(error) }
        return try element(result)
    }

    /// The element of a taken item, decoded here; a row that cannot be decoded ends the stream
    /// (the rest is discarded) with its error.
    private func element(_ taken: Result<Item?, KeelError>) throws(KeelError) -> Element? {
        switch try taken.get() {
        case nil: return nil
        case .value(let element)?: return element
        case .line(let line, let start)?:
            do {
                return try decode(line, start)
            } catch {
                cancel(error)
                throw error
            }
        }
    }

    /// The consumer goes away: what is buffered is dropped, a waiting `next()` gets `error`, and
    /// `onCancel` runs (once) unless the stream had already ended.
    func cancel(_ error: KeelError) {
        let (waiter, notify) = state.withLock { s -> (Waiter?, Bool) in
            guard !s.cancelled else { return (nil, false) }
            s.cancelled = true
            s.items.removeAll()
            s.bytes = 0
            let waiter = s.waiter
            s.waiter = nil
            let wasOpen: Bool
            if case .open = s.end { wasOpen = true } else { wasOpen = false }
            s.end = .finished
            return (waiter, wasOpen)
        }
        waiter?.resume(returning: .failure(error))
        if notify { onCancel() }
    }

    /// The values buffered now, taken without waiting (a burst of events, handled as one); the
    /// stream's end or error, and reply lines, are left for `next()`.
    func takeBufferedValues() -> [Element] {
        var resume = false
        let values = state.withLock { s -> [Element] in
            var out: [Element] = []
            while case .value(_)? = s.items.first?.item, case .success(.value(let element)?)? = take(&s, resume: &resume) {
                out.append(element)
            }
            return out
        }
        if resume { onResume() }
        return values
    }

    /// Takes the next buffered item or the end, resuming a paused producer when the buffer has
    /// drained to its low-water mark.
    private func take() -> Result<Item?, KeelError>? {
        var resume = false
        let ready = state.withLock { s in take(&s, resume: &resume) }
        if resume { onResume() }
        return ready
    }

    private func take(_ s: inout State, resume: inout Bool) -> Result<Item?, KeelError>? {
        if let first = s.items.popFirst() {
            s.bytes -= first.bytes
            if s.paused, case .backPressure(_, let low) = policy, s.items.count <= low {
                s.paused = false
                resume = true
            }
            return .success(first.item)
        }
        switch s.end {
        case .open: return s.cancelled ? .success(nil) : nil
        case .finished: return .success(nil)
        case .failed(let error):
            s.end = .finished
            return .failure(error)
        }
    }
}
