// A client that sends without reading, on a thread of its own (the back-pressure tests).

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starts a thread that sends `text` `times` times on `fd` (blocking while the socket is full),
/// calling `sent` with each send's count; it stops at the first send that fails (the socket shut
/// down).
func startSender(fd: Int32, _ text: String, times: Int, sent: @escaping @Sendable (Int) -> Void = { _ in }) -> Thread {
    let bytes = Array(text.utf8)
    let sender = Thread {
        for _ in 0..<times {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return }
                offset += n
                sent(n)
            }
        }
    }
    sender.start()
    return sender
}
