// FETCH results as an `AsyncSequence` that streams: each iteration runs the fetch and decodes
// rows one at a time as the backend hands them over (with back-pressure: embedded, the fetch
// waits for a slow reader; over the socket, the connection stops reading). Nothing is collected
// unless you ask (`collect()`). Objects are decoded in the caller's isolation (`next(isolation:)`),
// since they are not `Sendable`.

public struct FetchResults<Element>: AsyncSequence, Sendable {
    public typealias Failure = KeelError

    let backend: any ContextBackend
    let request: JSON
    let decode: @Sendable (JSON) throws(KeelError) -> Element

    public func makeAsyncIterator() -> Iterator {
        Iterator(rows: backend.fetch(request).makeAsyncIterator(), decode: decode)
    }

    public struct Iterator: AsyncIteratorProtocol {
        var rows: AsyncThrowingStream<JSON, any Error>.AsyncIterator
        let decode: @Sendable (JSON) throws(KeelError) -> Element

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KeelError) -> Element? {
            let row: JSON?
            do {
                row = try await rows.next(isolation: actor)
            } catch {
                throw KeelError(streamFailure: error)
            }
            guard let row else { return nil }
            return try decode(row)
        }

        public mutating func next() async throws(KeelError) -> Element? {
            try await next(isolation: nil)
        }
    }

    /// Every element, in order, in an array (for when you do want them all at once).
    public func collect(isolation actor: isolated (any Actor)? = #isolation) async throws(KeelError) -> [Element] {
        var out: [Element] = []
        var iterator = makeAsyncIterator()
        while let element = try await iterator.next(isolation: actor) { out.append(element) }
        return out
    }
}

extension KeelError {
    /// A fetch stream's failure as a `KeelError`: the backend's own error, or the reader's task
    /// cancelled (`CANCELLED`, as the connection reports it).
    init(streamFailure error: any Error) {
        if let keel = error as? KeelError {
            self = keel
        } else if error is CancellationError {
            self.init(.cancelled, "the fetch was cancelled", cause: CancellationError())
        } else {
            self.init(.internal, "the fetch failed: \(error)")
        }
    }
}
