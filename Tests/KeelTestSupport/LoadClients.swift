// Writers on their own threads (blocking sockets must not sit on the cooperative pool), for the
// crash and shutdown tests: each saves small transactions in a loop and records which saves
// the daemon acknowledged with OK, until the daemon goes away.

public import Foundation
import KeelModel
import KeelProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the writers saw.
public final class LoadRecord: Sendable {
    /// Guards the acknowledged save names and the protocol violations seen.
    private let state = Mutex<(acknowledged: [String], violations: [String], busy: Int)>(([], [], 0))

    public init() {}

    public func acknowledge(_ name: String) { state.withLock { $0.acknowledged.append(name) } }
    public func violation(_ text: String) { state.withLock { $0.violations.append(text) } }
    public func sawBusy() { state.withLock { $0.busy += 1 } }

    public var acknowledged: [String] { state.withLock { $0.acknowledged } }
    public var violations: [String] { state.withLock { $0.violations } }
    public var busy: Int { state.withLock { $0.busy } }
}

public enum LoadClients {
    /// Starts `count` writers on their own threads. Writer `w` saves, again and again, one
    /// Company named `"<prefix>w<w>-<i>"` and one Department `"dept-<that name>"` of that
    /// company in one SAVE;
    /// an OK records the name. A writer stops when the connection ends or `deadline` passes.
    /// With `vanishEvery` n > 0, every n-th save is sent and its connection dropped at once (a
    /// reset, not a close), the writer going on on a new connection: that save's outcome is
    /// unknown, so it is never recorded. Wait for the writers with the returned group.
    public static func start(
        socket: String, writers count: Int, prefix: String, record: LoadRecord, deadline: Date, vanishEvery: Int = 0
    ) -> DispatchGroup {
        let group = DispatchGroup()
        for w in 0..<count {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                writer(w, socket: socket, prefix: prefix, record: record, deadline: deadline, vanishEvery: vanishEvery)
            }
            thread.start()
        }
        return group
    }

    private static func writer(_ w: Int, socket: String, prefix: String, record: LoadRecord, deadline: Date, vanishEvery: Int) {
        guard var client = try? LineClient(path: socket, timeoutSeconds: 30) else { return }
        var i = 0
        while Date() < deadline {
            let name = "\(prefix)w\(w)-\(i)"
            do {
                // The department needs the company's ID: the insert first, then the rest pipelined.
                let company = try client.request(#"a\#(i) INSERT {"entity":"Company","values":{"name":"\#(name)"}}"#)
                if company.errorCode == "BUSY" { record.sawBusy(); return }
                guard company.isOK, let id = company.payload?["$id"]?.stringValue else {
                    record.violation("insert: \(company.finalLine)")
                    return
                }
                try client.send(#"b\#(i) INSERT {"entity":"Department","values":{"name":"dept-\#(name)","companies":["\#(id)"]}}"# + "\ns\(i) SAVE\n")
                if vanishEvery > 0, i % vanishEvery == vanishEvery - 1 {
                    var reset = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
                    guard let next = try? LineClient(path: socket, timeoutSeconds: 30) else { return }
                    client = next  // the old connection closes here, its save in flight
                    i += 1
                    continue
                }
                let department = try client.response(tag: "b\(i)")
                let save = try client.response(tag: "s\(i)")
                if save.errorCode == "BUSY" || department.errorCode == "BUSY" {
                    record.sawBusy()
                    return
                }
                guard department.isOK, save.isOK else {
                    record.violation("save: \(department.finalLine) / \(save.finalLine)")
                    return
                }
                record.acknowledge(name)
            } catch {
                // The daemon went away (killed or stopped): the save in flight is unknown.
                return
            }
            i += 1
        }
    }

    /// Runs `body(0..<count)` at once, each on a thread of its own (blocking sockets on the
    /// cooperative pool, two threads on a 2-core machine, would run two at a time), and waits up
    /// to `timeout` seconds for all of them. Returns what went wrong: each error thrown, and a line
    /// when some did not finish in time.
    public static func onThreads(_ count: Int, timeout: Double = 120, _ body: @escaping @Sendable (Int) throws -> Void) -> [String] {
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for c in 0..<count {
            group.enter()
            Thread {
                defer { group.leave() }
                do { try body(c) } catch { failures.withLock { $0.append("\(c): \(error)") } }
            }.start()
        }
        if group.wait(timeout: .now() + timeout) == .timedOut {
            failures.withLock { $0.append("not finished within \(timeout) s") }
        }
        return failures.withLock { $0 }
    }

    /// Every Company and Department name in the store, through a fresh connection.
    public static func storedNames(socket: String) throws -> (companies: Set<String>, departments: [String: [String]]) {
        let client = try LineClient(path: socket)
        let companies = try client.request(#"c FETCH {"entity":"Company","result":"dictionaries","properties":["name"]}"#)
        let departments = try client.request(#"d FETCH {"entity":"Department","include":["companies"]}"#)
        guard companies.isOK, departments.isOK else {
            throw KeeldError("fetch failed: \(companies.finalLine) \(departments.finalLine)")
        }
        var byDepartment: [String: [String]] = [:]
        for row in departments.rows {
            let name = row["name"]?.stringValue ?? ""
            byDepartment[name] = (row["companies"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        }
        return (Set(companies.rows.compactMap { $0["name"]?.stringValue }), byDepartment)
    }
}
