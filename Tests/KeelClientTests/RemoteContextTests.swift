// RemoteContextBackend: every ContextBackend operation over the socket, with "context": name.

import KeelClient
import KeelModel
import KeelTestSupport
import Testing

@Suite("RemoteContextBackend")
struct RemoteContextTests {
    @Test("insert, get, update, relate, fetch, count, explain, changes, save, rollback, refresh, delete")
    func operations() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let context = RemoteContextBackend(connection: connection)
        #expect(context.name == "main")
        #expect(context.model.hash == connection.hello.modelHash)

        let company = try await context.insert(entity: "Company", values: ["name": "Acme"])
        let sales = try await context.insert(entity: "Department", values: ["name": "Sales", "companies": [.string(company)]])
        let kim = try await context.insert(entity: "Employee", values: ["name": "Kim", "salary": "5200.00", "age": 30])
        let lee = try await context.insert(entity: "Employee", values: ["name": "Lee", "salary": "4100.50", "age": 41])
        try await context.relate(sales, relationship: "employees", add: [kim, lee], remove: [])
        try await context.relate(company, relationship: "employees", add: [kim, lee], remove: [])
        try await context.update(kim, values: ["age": 31])

        let changes = try await context.changes()
        #expect(changes["hasChanges"] == true)
        #expect(changes["inserted"]?.arrayValue?.count == 4)
        let saved = try await context.save()
        #expect(saved["inserted"] == 4)
        #expect(saved["txn"]?.intValue != nil)

        let object = try await context.get(kim, include: ["department"])
        #expect(object["$id"]?.stringValue == kim)
        #expect(object["age"] == 31)
        #expect(object["salary"] == "5200")
        #expect(object["department"]?["name"] == "Sales")

        var names: [String] = []
        for try await row in context.fetch(["entity": "Employee", "predicate": "age > %@", "args": [30], "sort": [["key": "name"]]]) {
            names.append(row["name"]?.stringValue ?? "")
        }
        #expect(names == ["Kim", "Lee"])
        #expect(try await context.count(["entity": "Employee", "predicate": "department.name == 'Sales'"]) == 2)
        #expect(try await context.count(["entity": "Person"]) == 2)
        #expect(try await context.explain(["entity": "Employee", "predicate": "name == 'Kim'"]).isEmpty == false)

        // Pending changes are seen by this context's reads, dropped by rollback.
        try await context.update(lee, values: ["name": "Leigh"])
        #expect(try await context.count(["entity": "Employee", "predicate": "name == 'Leigh'"]) == 1)
        try await context.rollback()
        #expect(try await context.count(["entity": "Employee", "predicate": "name == 'Leigh'"]) == 0)
        try await context.refresh()

        // Delete rules: Sales denies deletion while it has employees; Acme cascades to them.
        _ = try await context.delete(sales)
        let denied = await keelError { _ = try await context.save() }
        #expect(denied?.code == .deny)
        try await context.rollback()
        let deleted = try await context.delete(company)
        #expect(deleted.first == company)
        #expect(Set(deleted) == [company, kim, lee])
        // Sales lost its only company (minCount 1) but also its employees (deny holds no more).
        #expect(await keelError { _ = try await context.save() }?.code == .validation)
        #expect(try await context.delete(sales) == [sales])
        _ = try await context.save()
        let gone = await keelError { _ = try await context.get(kim, include: []) }
        #expect(gone?.code == .notFound)
    }

    @Test("child and top-level contexts: a child saves into its parent; contexts are independent; close ends them")
    func contexts() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let main = RemoteContextBackend(connection: connection)
        let child = try await main.openContext(name: "child", child: true, mergePolicy: "error")
        #expect(child.name == "child")
        let id = try await child.insert(entity: "Company", values: ["name": "FromChild"])
        #expect(try await main.count(["entity": "Company"]) == 0)
        _ = try await child.save()
        // Saved into main, not the store.
        #expect(try await main.count(["entity": "Company"]) == 1)
        let other = try await main.openContext(name: "other", child: false, mergePolicy: "storeTrumps")
        #expect(try await other.count(["entity": "Company"]) == 0)
        _ = try await main.save()
        try await other.refresh()
        #expect(try await other.get(id, include: [])["name"] == "FromChild")

        await child.close()
        let closed = await keelError { _ = try await child.count(["entity": "Company"]) }
        #expect(closed?.code == .noSuchContext)
        await main.close()  // main is not closed: it lives as long as the connection
        #expect(try await main.count(["entity": "Company"]) == 1)
        let badFetch = await keelError { _ = try await main.rows("not an object").collect() }
        #expect(badFetch?.code == .badRequest)
        await connection.close()
        await other.close()  // the connection is gone: nothing to do, nothing hangs
    }
}
