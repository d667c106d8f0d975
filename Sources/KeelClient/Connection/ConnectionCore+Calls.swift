// The two shapes of a call: one reply (`call`), or rows then a final line (`stream`). Both
// make the line first (so a bad command or argument fails before anything is sent), register
// the call under a fresh tag and queue the line (ConnectionCore.submit).

import KeelModel
import NIOCore

extension ConnectionCore {
    /// Sends `command` and waits for its final line: the OK payload, or the ERR as a
    /// `KeelError`. Fails with TIMEOUT after `timeout`, with CANCELLED when the task is
    /// cancelled (the late reply is discarded by tag either way), with DISCONNECTED when the
    /// connection goes.
    func call(_ command: String, _ arguments: JSON?, timeout: TimeAmount, whileClosing: Bool = false) async throws(KeelError) -> JSON? {
        let tag = makeTag()
        let line = try encode(tag: tag, command: command, arguments: arguments)
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: ReplyContinuation) in
                let call = PendingCall(kind: .reply(continuation), deadline: .now() + timeout, timeout: timeout, command: command)
                if let error = submit(tag: tag, line: line, call: call, whileClosing: whileClosing) {
                    continuation.resume(returning: .failure(error))
                }
            }
        } onCancel: {
            self.cancel(tag)
        }
        return try result.flatMap { $0.outcome(command: command) }.get()
    }

    /// Sends `command` and returns its rows as a stream, each decoded by `decode`. The stream
    /// ends with the final OK, or throws its ERR (or TIMEOUT, CANCELLED, DISCONNECTED). The
    /// deadline counts while the stream waits for the daemon: it starts again at each row, and
    /// stops while the consumer is behind.
    func stream<Element: Sendable>(
        _ command: String, _ arguments: JSON?, timeout: TimeAmount, highWater: Int, lowWater: Int,
        decode: @escaping @Sendable (JSON) throws(KeelError) -> Element
    ) -> KeelStream<Element> {
        let tag = makeTag()
        let line: [UInt8]
        do {
            line = try encode(tag: tag, command: command, arguments: arguments)
        } catch {
            return KeelStream(.failed(error))
        }
        let buffer = StreamBuffer<Element>(
            policy: .backPressure(high: max(1, highWater), low: max(0, min(lowWater, highWater - 1))),
            decode: { (line, start) throws(KeelError) -> Element in
                let json: JSON
                do throws(KeelError) {
                    json = try JSON.parse(line[start...])
                } catch {
                    throw KeelError(.internal, "a row of \(command) cannot be read: \(error.message)")
                }
                return try decode(json)
            },
            onResume: { [weak self] in self?.consumerResumed(tag) },
            onCancel: { [weak self] in self?.consumerGone(tag) })
        let call = PendingCall(kind: .stream(buffer), deadline: .now() + timeout, timeout: timeout, command: command)
        if let error = submit(tag: tag, line: line, call: call) {
            buffer.finish(error)
        }
        return KeelStream(buffer)
    }
}
