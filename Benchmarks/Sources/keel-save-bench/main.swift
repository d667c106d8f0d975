// The object layer's side of issue 5's durable saves, without the daemon: THREADS threads, each with
// its own context on one object store (as keeld's connections), each doing SAVES times the bench's
// `INSERT` of one small `Computer` (the wire JSON of scripts/bench-daemon.sh, through the fast
// insert path) and a `SAVE` (the save group when several save at once). Prints saves, seconds and
// each thread's CPU time per save. Sync mode `off` by default, so the disk does not count
// (callgrind: run with two SAVES counts and take the difference; Docs/Performance.md, round savework).
//
//   keel-save-bench MODEL.json DIR [THREADS=1] [SAVES=1000] [SYNC=off]
import Foundation
import KeelModel
import KeelStorage

let args = CommandLine.arguments
func usage(_ problem: String? = nil) -> Never {
    if let problem { FileHandle.standardError.write("keel-save-bench: \(problem)\n".data(using: .utf8)!) }
    FileHandle.standardError.write("usage: keel-save-bench MODEL.json DIR [THREADS] [SAVES] [off|normal|full]\n".data(using: .utf8)!)
    exit(2)
}
guard (3...6).contains(args.count) else { usage() }
func count(_ index: Int, default value: Int, _ name: String) -> Int {
    guard args.count > index else { return value }
    guard let n = Int(args[index]), n >= 1 else { usage("\(name) must be a whole number of at least 1, not '\(args[index])'") }
    return n
}
let threads = count(3, default: 1, "THREADS")
let saves = count(4, default: 1000, "SAVES")
let sync: SyncMode
if args.count > 5 {
    guard let mode = SyncMode(rawValue: args[5]) else { usage("the sync mode is off, normal or full, not '\(args[5])'") }
    sync = mode
} else {
    sync = .off
}
do {
    let model = try ModelLoader.load(text: try String(contentsOfFile: args[1], encoding: .utf8))
    var options = ObjectStoreOptions()
    options.storage.syncMode = sync
    let store = try ObjectStore.open(directory: args[2], model: model, options: options)
    let values = try JSON.parse(#"{"id":"6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162","model":"X1"}"#)
    let start = Date()
    var workers: [Thread] = []
    let done = DispatchGroup()
    for _ in 0..<threads {
        done.enter()
        let t = Thread {
            let context = ObjectContext(store: store)
            do {
                for _ in 0..<saves {
                    try context.insert(entity: "Computer", values: values)
                    try context.save()
                }
            } catch {
                print("save failed: \(error)")
                exit(1)
            }
            done.leave()
        }
        t.stackSize = 1 << 20
        workers.append(t)
        t.start()
    }
    done.wait()
    let seconds = Date().timeIntervalSince(start)
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let total = threads * saves
    print(String(format: "%d saves in %.3f s = %.0f saves/s; process user CPU %.1f µs per save (startup included)",
                 total, seconds, Double(total) / seconds, cpu / Double(total) * 1e6))
    // Transactions committed since open (one per save group, plus the ID reservations): saves per
    // group for the run (Performance.md reads them next to instructions per save).
    if case .object(let members) = try store.statistics(), case .object(let files)? = members["files"] {
        for (name, file) in files {
            if case .object(let f) = file, let last = f["lastTransaction"] { print("\(name): lastTransaction \(last)") }
        }
    }
    try store.close()
} catch {
    print("error: \(error)")
    exit(1)
}
