// The session thread reads its own socket (Decision 0005): woken by its wake-up watching the
// socket (SessionWorker.next), it reads what is there (ConnectionInput, never blocking), frames
// and checks the requests (RequestIntake, the code the event loop uses when it reads) and runs
// them as one burst — one wake-up per request burst, and no event loop in between. It reads no
// more while its client leaves more than `maxBufferedBytes` of replies unread (the gate wakes it
// once half is read). When the client shuts down its side, NIO reads the rest and hands it over
// as jobs (`input`, `inputEnded`), in order after what this thread read.

import KeelProtocol

extension Session {
    /// Bytes read from the socket at most at once (on this thread's stack).
    static let readBytes = 16 << 10

    /// The descriptor the thread's next wait watches: its socket, unless it does not read it (or
    /// no more), or its client has too many replies unread.
    func socketToWatch() -> CInt? {
        guard readsSocket, let input = link.input else { return nil }
        guard link.gate.isOverLimit else { return input.descriptor }
        let wakeUp = link.worker.wakeUp
        link.gate.whenRoomToRead { wakeUp.post() }
        return nil
    }

    /// The socket is readable: reads what it holds and runs its requests.
    func readInput() {
        guard readsSocket, let input = link.input else { return }
        withUnsafeTemporaryAllocation(byteCount: Self.readBytes, alignment: 1) { buffer in
            switch input.read(into: buffer) {
            case .bytes(let count):
                // A save of this burst that sleeps until it is durable also wakes for the
                // client's next request (ObjectStore+SaveGroup.swift).
                link.worker.wakeUp.watch(input.descriptor)
                take(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            case .empty:
                break
            case .ended:
                endInput()
            case .handedOver:
                readsSocket = false
            }
        }
    }

    /// Frames bytes of the client's and runs their requests, at most `inFlightRequests` of them
    /// framed and not answered at once.
    func take(_ raw: UnsafeRawBufferPointer) {
        let limit = max(1, server.limits.inFlightRequests)
        var offset = 0
        while offset < raw.count, !quitting, !link.worker.isClosed {
            var items: [SessionItem] = []
            offset += intake.frame(UnsafeRawBufferPointer(rebasing: raw[offset...]), link: link, while: { items.count < limit }) {
                items.append($0)
            }
            if !items.isEmpty { handle(.items(items)) }
        }
    }

    /// The client shut down its side (`printf … | socat`) and everything it sent is answered:
    /// the connection closes once the replies are written.
    func endInput() {
        readsSocket = false
        quitting = true
        if pendingBytes == 0 {
            link.deliver([], finals: 0, close: true)
        } else {
            flush()
        }
    }
}
