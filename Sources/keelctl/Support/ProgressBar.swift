// Progress of long work (compact, verify, backup, restore, import, export) on standard error —
// only when it is a terminal, so scripts and logs get nothing. One line, redrawn at most ten
// times a second and erased when the work ends:
//
//   compacting Default.keel [##########..........]  50%  1534/3068
//
// The store reports through `WorkProgress` (KeelStorage); online, where keeld reports nothing
// until it answers, the line says what is awaited and for how long.

import Foundation
import KeelModel
import KeelStorage
import Synchronization

final class ProgressBar: Sendable {
    let enabled: Bool
    /// Guards what was drawn last, and when.
    private let state = Mutex<(drawn: Bool, last: ContinuousClock.Instant?)>((false, nil))

    init(enabled: Bool = Output.errorIsTerminal) {
        self.enabled = enabled
    }

    /// Draws `progress` unless a line was drawn less than 0.1 s ago.
    func report(_ progress: WorkProgress) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let due = state.withLock { s -> Bool in
            if let last = s.last, now - last < .milliseconds(100), progress.done < progress.total { return false }
            s.last = now
            s.drawn = true
            return true
        }
        if due { draw(Self.line(progress)) }
    }

    /// Erases the line, if one was drawn.
    func finish() {
        guard enabled, state.withLock({ s in defer { s.drawn = false }; return s.drawn }) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    /// The line for `progress`: a bar and a percentage when the total is known, a count otherwise.
    static func line(_ progress: WorkProgress, width: Int = 20) -> String {
        guard progress.total > 0 else { return "\(progress.task) \(progress.done)" }
        let fraction = min(1, Double(progress.done) / Double(progress.total))
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let percent = String(Int(fraction * 100)).leftPadded(to: 3)
        return "\(progress.task) [\(bar)] \(percent)%  \(min(progress.done, progress.total))/\(progress.total)"
    }

    private func draw(_ line: String) {
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    }

    /// Runs `body`, then erases the line. With `ticking` (online calls, whose progress keeld
    /// does not report), the line meanwhile says `task` and the seconds waited.
    func during<R>(_ task: String, ticking: Bool, _ body: () async throws(KeelError) -> R) async throws(KeelError) -> R {
        guard enabled, ticking else {
            defer { finish() }
            return try await body()
        }
        let ticker = Task { [self] in
            let start = ContinuousClock.now
            while !Task.isCancelled {
                let seconds = (ContinuousClock.now - start).components.seconds
                report(WorkProgress(task: "\(task) (\(seconds) s)", done: 0, total: 0))
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        let result: Result<R, KeelError>
        do throws(KeelError) {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        ticker.cancel()
        _ = await ticker.value
        finish()
        return try result.get()
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
