// A plain blocking socket client for the tests: raw bytes out, lines in, with a timeout, so a
// test can send exactly what it wants (split lines, a thousand requests in one write, garbage)
// and read exactly what the daemon answered.

import Foundation
public import KeelModel
public import KeelProtocol

#if canImport(Glibc)
import Glibc
#endif

public final class LineClient {
    public let fd: Int32
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// One recv's worth, reused.
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    public init(path: String, timeoutSeconds: Int = 30) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw KeeldError("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw KeeldError("connect \(path): \(String(cString: strerror(code)))")
        }
        setTimeout(seconds: timeoutSeconds)
    }

    deinit { close(fd) }

    public func setTimeout(seconds: Int) {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Shrinks the kernel receive buffer (a slow reader's test).
    public func setReceiveBuffer(_ bytes: Int32) {
        var value = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends bytes, all of them (one write call when the kernel takes them at once).
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw KeeldError("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    /// The next line (without its LF); nil at end of stream. Throws on timeout.
    public func readLine() throws -> String? {
        while true {
            if let newline = buffer[readIndex...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[readIndex..<newline], as: UTF8.self)
                readIndex = newline + 1
                if readIndex > 1 << 16 {
                    buffer.removeFirst(readIndex)
                    readIndex = 0
                }
                return line
            }
            guard try receive() else { return nil }
        }
    }

    /// One recv into the buffer; false at end of stream.
    private func receive() throws -> Bool {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return false }
        guard n > 0 else { throw KeeldError("recv: \(String(cString: strerror(errno)))") }
        buffer.append(contentsOf: chunk[..<n])
        return true
    }

    /// Reads until `count` more lines have come, without keeping them (a load generator's
    /// reading: counting LFs, nothing else).
    public func skipLines(_ count: Int) throws {
        var want = count
        while want > 0 {
            if readIndex < buffer.count {
                for i in readIndex..<buffer.count where buffer[i] == UInt8(ascii: "\n") {
                    want -= 1
                    if want == 0 {
                        readIndex = i + 1
                        return
                    }
                }
                buffer.removeAll(keepingCapacity: true)
                readIndex = 0
            }
            guard try receive() else { throw KeeldError("the daemon closed the connection") }
        }
    }

    /// The next line, which must exist.
    public func line() throws -> String {
        guard let line = try readLine() else { throw KeeldError("the daemon closed the connection") }
        return line
    }

    /// Sends one request and reads its reply: the ROW lines and the final line (events before
    /// or between are collected in `events`).
    public func request(_ line: String) throws -> Response {
        try send(line + "\n")
        let tag = String(line.prefix { $0 != " " })
        return try response(tag: tag)
    }

    /// Reads up to and including the final line of `tag`.
    public func response(tag: String) throws -> Response {
        var response = Response()
        while true {
            let text = try line()
            let reply = try Reply.parse(Array(text.utf8))
            switch reply {
            case .event(let json): response.events.append(json)
            case .row(let t, let json):
                guard t == tag else { throw KeeldError("a ROW of \(t) while waiting for \(tag): \(text)") }
                response.rows.append(json)
            case .ok(let t, _), .error(let t, _, _, _):
                guard t == tag else { throw KeeldError("the reply of \(t) while waiting for \(tag): \(text)") }
                response.final = reply
                response.finalLine = text
                return response
            }
        }
    }
}

/// One request's reply.
public struct Response {
    public var rows: [JSON] = []
    public var events: [JSON] = []
    public var final: Reply = .ok(tag: "", nil)
    public var finalLine = ""

    public var isOK: Bool { if case .ok = final { true } else { false } }
    public var payload: JSON? { if case .ok(_, let json) = final { json } else { nil } }
    public var errorCode: String? { if case .error(_, let code, _, _) = final { code.rawValue } else { nil } }
    public var errorMessage: String? { if case .error(_, _, let message, _) = final { message } else { nil } }
}
