// The Keel side of the object workloads: KeelModel's ObjectStore on the bench model below,
// engine settings as in KeelEngine (page 4096, cache 64 MiB, sync full).
#if KEEL_ENGINE
    import Foundation
    import KeelModel
    import KeelStorage

    enum KeelObjectEngine: ObjectBenchEngine {
        static let name = keelName

        /// Issue 3's Department/Employee pair with config/model.json's attribute types:
        /// Employee.name string (indexed), age int16, salary decimal, hiredAt date, department
        /// to-one (nullify) with the inverse to-many Department.employees (cascade); Department.name
        /// unique. A model of its own so that the rows are exactly what SQLite's tables hold
        /// (config/model.json's Department.employees is ordered and `deny`, and Employee there has
        /// more required attributes and a compound index).
        static let modelText = """
            { "name": "Bench", "version": 1, "entities": [
              { "name": "Department",
                "attributes": [ { "name": "name", "type": "string", "optional": false } ],
                "relationships": [ { "name": "employees", "destination": "Employee", "inverse": "department",
                                     "toMany": true, "deleteRule": "cascade" } ],
                "uniqueConstraints": [ ["name"] ] },
              { "name": "Employee",
                "attributes": [
                  { "name": "name",    "type": "string", "optional": false, "indexed": true },
                  { "name": "age",     "type": "int16" },
                  { "name": "salary",  "type": "decimal" },
                  { "name": "hiredAt", "type": "date" } ],
                "relationships": [ { "name": "department", "destination": "Department", "inverse": "employees",
                                     "deleteRule": "nullify" } ] }
            ] }
            """

        static func open(directory: String, data: EmployeeSet, plan: Plan) throws -> any ObjectBenchStore {
            try KeelObjectStore(directory: directory, data: data, inlineCheckpoints: plan.keelInlineCheckpoints)
        }
    }

    final class KeelObjectStore: ObjectBenchStore {
        let directory: String
        let store: ObjectStore
        let model: Model
        let employee: EntityID
        let fName: Int, fAge: Int, fSalary: Int, fHired: Int, fDepartment: Int, fEmployees: Int
        /// Department d's ID.
        var departments: [ObjectID] = []
        /// Employee i's ID (batch-inserted ones; the fetch reads these).
        var employees: [ObjectID] = []
        /// The inputs of the next insert call, built untimed by `prepare`: by field for
        /// `batchInsert`, by property name for the context's `insert(entity:typedValues:)`.
        private var prepared: [[Int: Value]] = []
        private var preparedNamed: [[String: Value]] = []
        /// The context of `saveInserts`, reused from save to save as an application would.
        private var context: ObjectContext?

        init(directory: String, data: EmployeeSet, inlineCheckpoints: Bool = false) throws {
            self.directory = directory
            model = try ModelLoader.load(text: KeelObjectEngine.modelText)
            var options = ObjectStoreOptions(storage: KeelEngine.options(.full))
            // The object store's default (ObjectStoreOptions.defaultStorage): checkpoints on the
            // background checkpointer.
            options.storage.checkpointInBackground = !inlineCheckpoints
            options.historyRetention = nil
            store = try ObjectStore.open(directory: directory, model: model, options: options)
            let department = model.entity(named: "Department")!
            let e = model.entity(named: "Employee")!
            employee = e.id
            fName = e.field(named: "name")!
            fAge = e.field(named: "age")!
            fSalary = e.field(named: "salary")!
            fHired = e.field(named: "hiredAt")!
            fDepartment = e.field(named: "department")!
            fEmployees = department.field(named: "employees")!
            let nameField = department.field(named: "name")!
            let rows = (0..<data.departments).map { d -> [Int: Value] in [nameField: .string(data.departmentName(d))] }
            departments = try store.batchInsert(entity: department.id, objects: rows).inserted
            for (d, id) in departments.enumerated() where id.number != UInt64(d + 1) {
                throw BenchError("Keel: department \(d) got number \(id.number), expected \(d + 1)")
            }
        }

        func prepare(_ data: EmployeeSet, _ range: Range<Int>) {
            prepared.removeAll(keepingCapacity: true)
            preparedNamed.removeAll(keepingCapacity: true)
            for i in range {
                let values = Self.values(data, i, departments)
                prepared.append([fName: values.0, fAge: values.1, fSalary: values.2, fHired: values.3, fDepartment: values.4])
                preparedNamed.append(Self.named(values))
            }
        }

        /// Employee i's name, age, salary, hire date and department.
        static func values(_ data: EmployeeSet, _ i: Int, _ departments: [ObjectID]) -> (Value, Value, Value, Value, Value) {
            (.string(data.names[i]), .int(Int64(data.ages[i])),
             .decimal(Decimal(sign: .plus, exponent: -2, significand: Decimal(data.salaryCents[i]))),
             .date(data.hiredAt[i]), .object(departments[Int(data.department[i])]))
        }

        static func named(_ v: (Value, Value, Value, Value, Value)) -> [String: Value] {
            ["name": v.0, "age": v.1, "salary": v.2, "hiredAt": v.3, "department": v.4]
        }

        func batchInsert() throws {
            let result = try store.batchInsert(entity: employee, objects: prepared)
            employees.append(contentsOf: result.inserted)
            // Timed: a throughput row pays for its checkpoints (SQLite's run in its COMMIT).
            try store.waitForBackgroundCheckpoints()
        }

        func saveInserts() throws {
            let context = self.context ?? ObjectContext(store: store)
            self.context = context
            for values in preparedNamed { try context.insert(entity: "Employee", typedValues: values) }
            _ = try context.save()
            try store.waitForBackgroundCheckpoints()  // timed, as in batchInsert
        }

        func storeSaveInserts() throws {
            var changes: [Change] = []
            changes.reserveCapacity(prepared.count)
            for values in prepared {
                changes.append(.insert(try store.newObjectID(for: employee), values: values))
            }
            _ = try store.save(ChangeSet(changes: changes))
            try store.waitForBackgroundCheckpoints()  // timed, as in batchInsert
        }

        func fetch(_ indices: [Int32]) throws -> ObjectTally {
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            let objects = try snapshot.objects(indices.map { employees[Int($0)] })
            var tally = ObjectTally()
            for case let o? in objects {
                tally.found += 1
                if case .string(let s) = o.values[fName] { tally.nameBytes += s.utf8.count }
                if case .int(let a) = o.values[fAge] { tally.ageSum += Int(a) }
                if case .date(let ms) = o.values[fHired] { tally.dateSum &+= ms }
                if case .object(let d) = o.values[fDepartment] { tally.departmentSum += Int(d.number) }
            }
            return tally
        }

        func salaries(_ indices: [Int32]) throws -> [String] {
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            return try snapshot.objects(indices.map { employees[Int($0)] }).map { o -> String in
                guard let o, case .decimal(let d) = o.values[fSalary] else { return "missing" }
                return "\(d)"
            }
        }

        /// The department's row as a context's snapshot would have it (read untimed).
        func departmentRow(_ d: Int) throws -> StoredObject {
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            guard let row = try snapshot.object(departments[d]) else { throw BenchError("Keel: no department \(d)") }
            return row
        }

        private var pendingDelete: (Int, StoredObject)?

        func prepareDelete(_ d: Int) throws { pendingDelete = (d, try departmentRow(d)) }

        func deleteDepartment(_ d: Int) throws -> Int {
            guard let (pd, row) = pendingDelete, pd == d else { throw BenchError("Keel: delete not prepared") }
            pendingDelete = nil
            let id = departments[d]
            let result = try store.save(ChangeSet(changes: [.delete(id)], originals: [id: row]))
            return result.deleted.count - 1
        }

        func employeeCount() throws -> Int {
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            return try snapshot.count(employee, includeSubentities: true)
        }

        func employeeCount(department d: Int) throws -> Int {
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            return try snapshot.members(of: departments[d], field: fEmployees).count
        }

        func checkpoint() throws { try store.checkpoint() }

        func waitForBackgroundWork() throws { try store.waitForBackgroundCheckpoints() }

        func close() throws {
            context = nil
            try store.close()
        }
    }
#endif

#if KEEL_ENGINE
    /// The child process of the context-memory figure: a fresh store in `directory`, then one
    /// context holding `count` pending employee inserts (each insert's values built on the fly and
    /// dropped, so only the context holds them). Prints one line:
    /// `hwm-before hwm-holding rss-holding hwm-after-save` in bytes (VmHWM/VmRSS of /proc/self/status).
    func runContextMemoryProbe(directory: String, count: Int, seed: UInt64) throws {
        let departments = max(1, count / 10_000)
        let data = EmployeeSet(count: count, departments: departments, seed: seed)
        let store = try KeelObjectStore(directory: directory, data: data)
        let before = procStatus("VmHWM")
        let context = ObjectContext(store: store.store)
        for i in 0..<count {
            try context.insert(entity: "Employee", typedValues: KeelObjectStore.named(KeelObjectStore.values(data, i, store.departments)))
        }
        let holding = procStatus("VmHWM")
        let rss = procStatus("VmRSS")
        guard context.pendingObjectCount >= count else { throw BenchError("the context holds \(context.pendingObjectCount) pending objects") }
        _ = try context.save()
        let saved = procStatus("VmHWM")
        print("\(before) \(holding) \(rss) \(saved)")
        try store.close()
    }

/// A `kB` line of /proc/self/status, in bytes (0 when absent).
func procStatus(_ key: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
        let digits = line.dropFirst(key.count + 1).filter(\.isNumber)
        return (Int(String(digits)) ?? 0) * 1024
    }
    return 0
}
#endif
