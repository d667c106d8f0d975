// The asynchronous sequence the connection hands out for anything that comes as many lines: a
// FETCH's rows (`KeelStream<JSON>`), a HISTORY's entries (`KeelStream<HistoryEntry>`), a
// subscription's change events (`KeelStream<ChangeEvent>`).
//
// One consumer, one pass: iterate it once, from one task. Reading is driven by the consumer
// (StreamBuffer.swift): a slow consumer makes the connection stop reading the socket instead
// of buffering a million rows. Dropping the stream (or cancelling the task that iterates it)
// before its end tells the connection, which discards the rest of the reply by tag, or, for a
// subscription, ends it.

public import KeelModel

public struct KeelStream<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = KeelError

    /// Owns the buffer for the sequence and its iterator: when both are gone before the end, the
    /// consumer has gone away.
    final class Owner: Sendable {
        let buffer: StreamBuffer<Element>
        init(_ buffer: StreamBuffer<Element>) { self.buffer = buffer }
        deinit { buffer.cancel(KeelError(.cancelled, "the stream was dropped before its end")) }
    }

    let owner: Owner

    init(_ buffer: StreamBuffer<Element>) {
        owner = Owner(buffer)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let owner: Owner

        /// The next element; nil at the end. Throws the call's `KeelError` (the daemon's ERR, or
        /// `TIMEOUT`, `DISCONNECTED`, `CANCELLED`) after the elements that came before it.
        public mutating func next() async throws(KeelError) -> Element? {
            try await owner.buffer.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KeelError) -> Element? {
            try await owner.buffer.next()
        }

        /// The elements that have already come, without waiting (none when nothing has).
        mutating func buffered() -> [Element] {
            owner.buffer.takeBufferedValues()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(owner: owner)
    }

    /// Every element, in order (for results known to be small).
    public func collect() async throws(KeelError) -> [Element] {
        var all: [Element] = []
        var iterator = makeAsyncIterator()
        while let element = try await iterator.next() { all.append(element) }
        return all
    }

    /// The same stream as an `AsyncThrowingStream` (what `ContextBackend.fetch` returns): still
    /// pulled one element at a time by its consumer, so back-pressure is kept.
    public var throwingStream: AsyncThrowingStream<Element, any Error> {
        let owner = self.owner
        return AsyncThrowingStream(unfolding: { () async throws -> Element? in try await owner.buffer.next() })
    }
}
