// The Keel side: the project's model (config/model.json) in an ObjectStore, loaded with batch
// inserts, queried through `ObjectContext.fetch(_:_:)` / `count(_:)` exactly as the daemon runs
// FETCH and COUNT (result `objects`: each row becomes a ManagedObject with its relationships).

import Foundation
import KeelModel

final class KeelFetch {
    let store: ObjectStore
    let model: Model

    init(directory: String, modelPath: String, cacheMiB: Int = 64) throws {
        model = try ModelLoader.load(path: modelPath)
        var options = ObjectStoreOptions()
        options.storage.syncMode = .normal
        options.storage.cacheSizeBytes = cacheMiB << 20
        store = try ObjectStore.open(directory: directory, model: model, options: options)
    }

    func field(_ entity: String, _ name: String) throws -> Int {
        guard let f = model.entity(named: entity)?.field(named: name) else { throw BenchError("no \(entity).\(name)") }
        return f
    }

    func entity(_ name: String) throws -> EntityID {
        guard let e = model.entity(named: name) else { throw BenchError("no entity \(name)") }
        return e.id
    }

    func load(_ data: FetchData) throws {
        let company = try store.batchInsert(entity: try entity("Company"), objects: [[try field("Company", "name"): .string("Acme")]])
        guard let companyID = company.inserted.first else { throw BenchError("no company") }
        let dName = try field("Department", "name"), dCode = try field("Department", "code"), dCompanies = try field("Department", "companies")
        let departments = try store.batchInsert(
            entity: try entity("Department"),
            objects: (0..<data.departments).map { i in [dName: .string("Dept \(i)"), dCode: .int(Int64(i % 100)), dCompanies: .objects([companyID])] })
        let ids = departments.inserted
        let name = try field("Employee", "name"), age = try field("Employee", "age"), salary = try field("Employee", "salary")
        let hired = try field("Employee", "hiredAt"), manager = try field("Employee", "isManager"), department = try field("Employee", "department")
        let employee = try entity("Employee")
        var n = 1
        while n <= data.count {
            let end = min(n + 50_000, data.count + 1)
            let batch: [[Int: Value]] = (n..<end).map { i in
                let x = data.employee(i)
                return [
                    name: .string(x.name), age: .int(x.age), salary: .decimal(Decimal(x.salaryCents) / 100), hired: .date(x.hiredAt),
                    manager: .bool(x.isManager), department: .object(ids[x.department]),
                ]
            }
            _ = try store.batchInsert(entity: employee, objects: batch)
            n = end
        }
        try store.checkpoint()
    }

    /// Runs `request` in `context`, touching every value of every row; returns the row count.
    func rows(_ context: ObjectContext, _ request: FetchRequest) throws -> Int {
        var sink = 0
        let n = try context.fetch(request) { row in
            if let object = row.object { sink &+= object.values.count }
            return true
        }
        if sink == -1 { print("") }
        return n
    }

    /// `rows` for a prepared request run with `args` (`--prepared`).
    func rows(_ context: ObjectContext, _ prepared: PreparedFetchRequest, args: [JSON]) throws -> Int {
        var sink = 0
        let n = try context.fetch(prepared, args: args) { row in
            if let object = row.object { sink &+= object.values.count }
            return true
        }
        if sink == -1 { print("") }
        return n
    }
}
