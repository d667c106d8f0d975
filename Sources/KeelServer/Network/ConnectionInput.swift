// The reading side of a connection as its session thread does it (Decision 0005): a descriptor of
// the socket of its own, read without blocking when the thread's wake-up says it is readable, so a
// request wakes the one thread that runs it — the event loop never reads, and never wakes the
// thread, for it.
//
// NIO still reads the socket in one case: when the peer shuts down its side (EPOLLRDHUP, or a
// hang-up), BaseSocketChannel reads it to its end whatever the channel's read interest, before it
// reports the end (`readEOF0`, NIO 2.101). Both must never read at once, or the bytes could be
// taken in an order neither knows. So every read of the thread happens under `lock`, and NIO asks
// for the socket before each of its reads (`HandOverRecvAllocator`: NIO calls its
// `nextBufferSize()` just before each read of a stream channel): from then on the thread reads no
// more; what NIO reads comes to the thread as jobs (`SessionJob.input`), after everything the
// thread itself read.

import Glibc
import NIOCore
import Synchronization

final class ConnectionInput: Sendable {
    /// What one read found.
    enum Read {
        /// Bytes were read (how many).
        case bytes(Int)
        /// Nothing to read now.
        case empty
        /// The client shut down its side (or the connection broke): nothing more will come.
        case ended
        /// The event loop reads the socket from now on (the peer shut down its side).
        case handedOver
    }

    /// The thread's own descriptor of the socket (closed when the last holder lets go).
    let descriptor: CInt
    /// True once the event loop reads the socket; the thread reads under it.
    private let loopReads = Mutex(false)

    init?(duplicating socket: CInt) {
        let copy = fcntl(socket, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        descriptor = copy
    }

    deinit {
        close(descriptor)
    }

    /// Reads what the socket holds now into `buffer` (never blocking). The session thread.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Read {
        loopReads.withLock { loopReads -> Read in
            guard !loopReads else { return .handedOver }
            while true {
                let count = recv(descriptor, buffer.baseAddress, buffer.count, CInt(MSG_DONTWAIT))
                if count > 0 { return .bytes(count) }
                if count == 0 { return .ended }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .empty
                default: return .ended  // reset: the event loop sees it too and closes the channel
                }
            }
        }
    }

    /// The channel closed: the peer sees the end at once, and the thread's wait on the socket
    /// ends, even while this descriptor stays open (a request of the thread finishing).
    func shutDown() {
        _ = shutdown(descriptor, CInt(SHUT_RDWR))
    }

    /// The event loop is about to read the socket: the thread's reads end (waiting for one under
    /// way). On the event loop.
    func handOverToLoop() {
        loopReads.withLock { $0 = true }
    }
}

/// NIO's default allocator for what NIO reads, which first hands the socket over to the event
/// loop (ConnectionInput.handOverToLoop): NIO calls `nextBufferSize()` before each read of a
/// stream socket (NIOPooledRecvBufferAllocator).
struct HandOverRecvAllocator: RecvByteBufferAllocator {
    private var base = AdaptiveRecvByteBufferAllocator()
    let input: ConnectionInput

    init(input: ConnectionInput) {
        self.input = input
    }

    func buffer(allocator: ByteBufferAllocator) -> ByteBuffer {
        input.handOverToLoop()
        return base.buffer(allocator: allocator)
    }

    func nextBufferSize() -> Int? {
        input.handOverToLoop()
        return base.nextBufferSize()
    }

    mutating func record(actualReadBytes: Int) -> Bool {
        base.record(actualReadBytes: actualReadBytes)
    }
}
