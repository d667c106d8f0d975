// Carrying out an import plan (ImportPlan.swift) in saves of bounded size, against the object
// store in-process (`ObjectStore.importObjects`) or through keeld (keelctl's online target):
//
//   1. inserts, in the plan's order, `chunkSize` objects per save, each with its links to objects
//      inserted before it; a target that can hand out IDs before an insert (the object store)
//      takes any mix of entities per save; one that hands them out at the insert (keeld's
//      BATCH.INSERT) takes runs of one entity whose objects do not link to each other. The
//      plan's group (a cycle of required relationships) is one save, and only the first kind
//      of target can make it;
//   2. the fix-ups, `chunkSize` per save;
//   3. if any save fails: every object already inserted is removed again — its relationships
//      cleared, then deleted, one save per insert save, newest first, so each save leaves the
//      store as it was before the matching insert — and the error is thrown, each object it
//      names given its line. Nothing of the import remains (unless the removal fails too,
//      which the error then says).

public import KeelStorage
/// Where an import's saves go.
public protocol ImportTarget {
    /// IDs for `count` new objects of `entity`, handed out before the insert; nil when the
    /// target hands IDs out only when it inserts.
    mutating func reserveIDs(for entity: EntityID, count: Int) throws(KeelError) -> [ObjectID]?
    /// One save inserting `objects` (with the reserved `ids`, when there are); returns their IDs
    /// in order.
    mutating func insert(_ objects: [(entity: EntityID, values: [Int: Value])], ids: [ObjectID]?) throws(KeelError) -> [ObjectID]
    /// Sets relationship values (whole), in one save.
    mutating func set(_ values: [(object: ObjectID, field: Int, value: Value)]) throws(KeelError)
    /// Clears every relationship of `objects` and deletes them (no delete rule then reaches
    /// further), in as few saves as the target allows.
    mutating func remove(_ objects: [ObjectID]) throws(KeelError)
}

/// What an import did.
public struct ImportResult: Sendable, Equatable {
    /// Objects inserted per entity name, in the model's order.
    public var inserted: [(entity: String, count: Int)]
    public var saves: Int

    public var total: Int { inserted.reduce(0) { $0 + $1.count } }

    public static func == (a: ImportResult, b: ImportResult) -> Bool {
        a.inserted.map(\.entity) == b.inserted.map(\.entity) && a.inserted.map(\.count) == b.inserted.map(\.count) && a.saves == b.saves
    }
}

public struct ImportRun<Target: ImportTarget> {
    public let plan: ImportPlan
    public var target: Target
    public let chunkSize: Int
    private var ids: [ObjectID?]
    /// IDs of each insert save made, in order (what an undo removes).
    private var saved: [[ObjectID]] = []
    private var lineOf: [ObjectID: Int] = [:]
    private var saves = 0

    public init(plan: ImportPlan, target: Target, chunkSize: Int = 5000) {
        precondition(chunkSize > 0, "chunkSize must be positive")
        self.plan = plan
        self.target = target
        self.chunkSize = chunkSize
        self.ids = [ObjectID?](repeating: nil, count: plan.objects.count)
    }

    /// Runs the import; see the top of this file. Reports objects saved (inserts, then fix-ups).
    public mutating func run(progress: ProgressHandler = { _ in }) throws(KeelError) -> ImportResult {
        let fixUps = plan.fixUps
        let total = UInt64(plan.objects.count + fixUps.count)
        do throws(KeelError) {
            var start = 0
            while start < plan.order.count {
                let end = try insertChunk(from: start)
                start = end
                progress(WorkProgress(task: "importing", done: UInt64(start), total: total))
            }
            var done = 0
            while done < fixUps.count {
                let slice = fixUps[done..<min(done + chunkSize, fixUps.count)]
                let id = self.id
                try target.set(slice.map { (id($0.object), $0.field, plan.value(of: $0.object, field: $0.field, id: id)) })
                saves += 1
                done += slice.count
                progress(WorkProgress(task: "importing", done: UInt64(plan.objects.count + done), total: total))
            }
        } catch {
            throw undo(after: located(error))
        }
        var counts = [Int](repeating: 0, count: plan.model.entities.count)
        for o in plan.objects { counts[o.entity.index] += 1 }
        let inserted = plan.model.entities.filter { counts[$0.id.index] > 0 }.map { ($0.name, counts[$0.id.index]) }
        return ImportResult(inserted: inserted, saves: saves)
    }

    private func id(_ i: Int) -> ObjectID {
        guard let id = ids[i] else { preconditionFailure("object \(i) is linked before it is inserted (ImportPlan's order)") }
        return id
    }

    /// Inserts the objects of `plan.order[start...]` that fit one save; returns where the next
    /// save starts.
    private mutating func insertChunk(from start: Int) throws(KeelError) -> Int {
        let order = plan.order
        let first = order[start]
        var reserved: [EntityID: [ObjectID]] = [:]
        var chunk: [Int]
        if start >= plan.groupStart {
            chunk = Array(order[start...])
        } else {
            chunk = Array(order[start..<min(start + chunkSize, plan.groupStart)])
        }
        // IDs before the insert, when the target hands them out so.
        var counts: [EntityID: Int] = [:]
        for i in chunk { counts[plan.objects[i].entity, default: 0] += 1 }
        var byInsert = true
        for (entity, count) in counts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let list = try target.reserveIDs(for: entity, count: count) else {
                byInsert = false
                break
            }
            reserved[entity] = list.reversed()
        }
        if byInsert {
            for i in chunk {
                ids[i] = reserved[plan.objects[i].entity]?.popLast()
                if let id = ids[i] { lineOf[id] = plan.objects[i].line }
            }
        } else {
            // One entity, no links inside the save.
            guard start < plan.groupStart else {
                throw KeelError(
                    .badRequest,
                    "line \(plan.objects[first].line): objects on a cycle of required relationships must be saved together; import this file offline (--data)")
            }
            var run: [Int] = []
            var members: Set<Int> = []
            for i in chunk {
                guard plan.objects[i].entity == plan.objects[first].entity else { break }
                let linked = plan.objects[i].links.values.contains { $0.contains { members.contains($0) } }
                if linked { break }
                run.append(i)
                members.insert(i)
            }
            chunk = run
        }
        let id = self.id
        let objects = chunk.map { (plan.objects[$0].entity, plan.insertValues($0, id: id)) }
        let made = try target.insert(objects, ids: byInsert ? chunk.map(id) : nil)
        for (i, objectID) in zip(chunk, made) {
            ids[i] = objectID
            lineOf[objectID] = plan.objects[i].line
        }
        saved.append(made)
        saves += 1
        return start + chunk.count
    }

    /// Removes what was saved, newest first; returns the error to throw.
    private mutating func undo(after error: KeelError) -> KeelError {
        var remaining = saved.reduce(0) { $0 + $1.count }
        while let last = saved.last {
            do throws(KeelError) {
                try target.remove(last)
            } catch {
                var e = located(error)
                e.message += "; undoing the import failed too (\(error.message)): \(remaining) imported object\(remaining == 1 ? "" : "s") remain"
                return e
            }
            remaining -= last.count
            saved.removeLast()
        }
        var e = error
        e.message += " (nothing was imported)"
        return e
    }

    /// The error with each object of this import it names followed by its line.
    private func located(_ error: KeelError) -> KeelError {
        var e = error
        e.message = Self.annotate(error.message, model: plan.model) { lineOf[$0] }
        return e
    }

    /// `Entity/N` in `text`, for the objects `line` knows, becomes `Entity/N (line L)`.
    static func annotate(_ text: String, model: Model, line: (ObjectID) -> Int?) -> String {
        func isName(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }
        var out = ""
        var i = text.startIndex
        while i < text.endIndex {
            guard isName(text[i]) else {
                out.append(text[i])
                i = text.index(after: i)
                continue
            }
            var j = i
            while j < text.endIndex, isName(text[j]) { j = text.index(after: j) }
            if j < text.endIndex, text[j] == "/" {
                var k = text.index(after: j)
                while k < text.endIndex, text[k].isNumber { k = text.index(after: k) }
                let token = String(text[i..<k])
                if k > text.index(after: j), let id = model.objectID(token), let l = line(id) {
                    out += token + " (line \(l))"
                    i = k
                    continue
                }
            }
            out += text[i..<j]
            i = j
        }
        return out
    }
}
