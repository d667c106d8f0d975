// The tutorial flows, in order, each printing what it did. Everything goes through the typed API
// (KeelStore, KeelContext, the generated KeelSampleModel classes), so it reads the same embedded
// or against keeld.

import Foundation
import KeelClient
import KeelSampleModel

struct Flows {
    let store: KeelStore
    let data: CompanyData
    var context: KeelContext { store.mainContext }

    func runAll() async throws {
        try await removePreviousRun()
        let imported = try await importCompany()
        try await listDepartments(imported)
        try await queries(imported)
        try await moveEmployees(imported)
        try await deleteRules(imported)
        try await booksAndFeedback()
        print("\nDone.")
    }

    // MARK: 0. A clean start

    /// What an earlier run left: its company (its employees cascade), its departments, its books
    /// and their feedback.
    private func removePreviousRun() async throws {
        var removed = 0
        for try await company in context.fetch(Company.self, where: Company.name == data.company.name) {
            for department in company.departments { removed += try await context.delete(department).count }
            removed += try await context.delete(company).count
        }
        for try await book in context.fetch(Book.self, where: Book.title.endsWith(Self.bookMark)) {
            for feedback in try await context.fetch(Book.feedbackList, of: book.objectID!) {
                removed += try await context.delete(feedback).count
            }
            removed += try await context.delete(book).count
        }
        if removed > 0 {
            try await context.save()
            print("Removed \(removed) objects an earlier run left.")
        }
    }

    // MARK: 1. Import from JSON

    struct Imported {
        let company: KeelID<Company>
        let departments: [Int: KeelID<Department>]
    }

    /// Seed 000: departments and employees from JSON (department 0: none), in one context, one save.
    private func importCompany() async throws -> Imported {
        section("Import departments and employees from \(data.departments.count + data.employees.count) JSON records")
        let company = try await context.insert(
            Company(
                name: data.company.name, website: data.company.website.flatMap(URL.init(string:)),
                founded: try data.company.founded.map { try Date.decode(.string($0), owner: "company.founded") }))
        var departments: [Int: KeelID<Department>] = [:]
        for json in data.departments {
            let department = Department(name: json.name, code: Int16(json.id))
            department.addToCompanies(company)
            departments[json.id] = try await context.insert(department).objectID
        }
        for json in data.employees {
            guard let salary = Decimal(string: json.salary) else { throw ExampleFailure("\(json.name): salary \"\(json.salary)\" is not a decimal") }
            try await context.insert(
                Employee(
                    name: json.name, age: json.age, address: json.address, gender: json.gender, salary: salary,
                    department: departments[json.department], company: company.objectID))
        }
        let changes = try await context.changes()
        let saved = try await context.save()
        print("Inserted \(changes.inserted.count) objects and saved them in one transaction (txn \(saved.transaction.map(String.init) ?? "-")).")
        return Imported(company: company.objectID!, departments: departments)
    }

    // MARK: 2. Departments with employee counts

    private func listDepartments(_ imported: Imported, _ title: String = "Departments and their employees") async throws {
        section(title)
        for try await department in context.fetch(
            Department.self, where: Department.companies.contains(imported.company), sortedBy: .ascending(\.name),
            including: [Department.employees])
        {
            let names = try department.included(Department.employees).map(\.name)
            let list = names.isEmpty ? "" : "  " + names.joined(separator: ", ")
            print("  \(pad(department.name, 16)) \(names.count)\(list)")
        }
        let unassigned = try await context.count(Employee.self, where: Employee.company == imported.company && Employee.department == nil)
        print("  \(pad("(no department)", 16)) \(unassigned)")
    }

    // MARK: 3. Fetch requests

    private func queries(_ imported: Imported) async throws {
        section("Fetch requests with typed predicates and sorts")
        let predicate = Employee.company == imported.company && Employee.age > 30 && Employee.department.name == "Development"
        print("Employees over 30 in Development, by salary (predicate: \(predicate)):")
        for try await employee in context.fetch(Employee.self, where: predicate, sortedBy: .descending(\.salary)) {
            print("  \(pad(employee.name, 14)) \(employee.age ?? 0)  \(employee.salary)")
        }
        // Core Data's dictionary result type: only the values asked for, each distinct set once.
        let places = try await context.fetchProperties(
            Employee.self, Employee.department.name, where: Employee.company == imported.company && Employee.age > 30,
            sortedBy: .ascending(\.department.name), distinct: true
        ).collect()
        print("Where employees over 30 work (only department.name, distinct): "
              + (try places.map { try $0[Employee.department.name] ?? "(no department)" }).joined(separator: ", "))
        // Core Data's propertiesToGroupBy with expression descriptions: one row per department.
        let headcount = KeelAggregate.count(of: Employee.self, as: "headcount")
        let payroll = Employee.salary.sum(as: "payroll")
        let oldest = Employee.age.max(as: "oldest")
        print("Payroll by department (grouped by department.name: count, sum of salary, max of age):")
        for try await row in context.fetchProperties(
            Employee.self, Employee.department.name, headcount, payroll, oldest, groupedBy: [Employee.department.name],
            where: Employee.company == imported.company, sortedBy: .descending(payroll))
        {
            let name = try row[Employee.department.name] ?? "(no department)"
            print("  \(pad(name, 16)) \(try row[headcount] ?? 0)  \(pad("\(try row[payroll] ?? 0)", 9)) oldest \(try row[oldest].map(String.init) ?? "-")")
        }
        // having (Core Data's havingPredicate): only the groups whose row holds.
        let large = try await context.fetchProperties(
            Employee.self, Employee.department.name, headcount, groupedBy: [Employee.department.name],
            having: headcount >= 2 && Employee.department.name != nil, where: Employee.company == imported.company,
            sortedBy: .ascending(Employee.department.name)
        ).collect()
        print("Departments with two or more employees: \(try large.map { try $0[Employee.department.name] ?? "" }.joined(separator: ", "))")
        let seoul = try await context.count(
            Employee.self, where: Employee.company == imported.company && Employee.address.equals("seoul", .caseInsensitive))
        print("Employees living in Seoul: \(seoul)")
        let plan = try await context.explain(Employee.self, where: Employee.name.beginsWith("K"), sortedBy: .ascending(\.name))
        print("How `name BEGINSWITH \"K\"` runs: \(plan)")
        // A batch update (Core Data's NSBatchUpdateRequest): one transaction, no context.
        let senior = Employee.company == imported.company && Employee.age >= 35
        let batch = try await store.batchUpdate(Employee.self, where: senior, set: Employee.isManager.to(true))
        try await context.refresh()  // the batch bypassed the context: read again
        let managers = try await context.fetch(Employee.self, where: senior && Employee.isManager == true, sortedBy: .ascending(\.name)).collect()
        print("Batch update, everyone 35 or older is a manager: \(batch.count) updated (\(managers.map(\.name).joined(separator: ", ")))")
    }

    // MARK: 4. Moving employees

    /// The two youngest developers move to Design: `design.addToEmployees(_:)` (ordered to-many),
    /// sent as one RELATE; each employee's `department` follows (inverse).
    private func moveEmployees(_ imported: Imported) async throws {
        section("Move the two youngest developers to Design")
        let ours = Department.companies.contains(imported.company)
        guard let design = try await context.first(Department.self, where: ours && Department.name == "Design") else {
            throw ExampleFailure("no Design department")
        }
        // Live results (Core Data's NSFetchedResultsController) of Design's employees, and the
        // change events of Employee objects: both follow the save below as it lands.
        var live = store.fetchedResults(
            Employee.self, where: Employee.company == imported.company && Employee.department.name == "Design",
            sortedBy: .ascending(\.name)
        ).makeAsyncIterator()
        let before = try await live.next()?.ids.count ?? 0
        var events = try await store.changes(of: [Employee.self]).makeAsyncIterator()
        var moved: [String] = []
        for try await employee in context.fetch(
            Employee.self, where: Employee.company == imported.company && Employee.department.name == "Development",
            sortedBy: .ascending(\.age), limit: 2)
        {
            design.addToEmployees(employee)
            moved.append(employee.name)
        }
        try await context.update(design)
        try await context.save()
        print("Moved \(moved.joined(separator: " and ")).")
        if let event = try await events.next() {
            print("Change event: transaction \(event.txn) updated \(event.updated(of: Employee.self).count) employees")
        }
        if let snapshot = try await live.next() {
            var arrived: [String] = []
            for change in snapshot.difference {
                if case .insert(_, let id, _) = change { arrived.append(try await context.get(id).name) }
            }
            print("Live results, Design's employees: \(before) → \(snapshot.ids.count) (in: \(arrived.sorted().joined(separator: ", ")))")
        }
        try await listDepartments(imported, "Departments after the move")
    }

    // MARK: 5. Delete rules

    private func deleteRules(_ imported: Imported) async throws {
        section("Delete rules")
        let staff = Employee.company == imported.company
        // nullify (Employee.department): the department forgets the deleted employee.
        guard let choi = try await context.first(Employee.self, where: staff && Employee.name == "Choi Dohyun"),
            let management = choi.department
        else { throw ExampleFailure("no Choi Dohyun in a department") }
        let before = try await context.get(management).employees.count
        try await context.delete(choi)
        let after = try await context.get(management).employees.count
        try await context.save()
        print("nullify:  deleting \(choi.name) takes him out of Management: \(before) employee(s) before, \(after) after.")

        // cascade (Person.computers): an employee's computers go with her.
        guard let kang = try await context.first(Employee.self, where: staff && Employee.name == "Kang Jiwoo") else {
            throw ExampleFailure("no Kang Jiwoo")
        }
        for model in ["ThinkPad X1", "MacBook Air"] {
            try await context.insert(Computer(id: UUID(), model: model, price: 1499, owner: kang.objectID?.upcast()))
        }
        try await context.save()
        let cascaded = try await context.delete(kang)
        try await context.save()
        print("cascade:  deleting \(kang.name) deletes \(cascaded.map(\.text).joined(separator: ", ")).")

        // deny (Department.employees): a department with employees cannot be deleted.
        guard let sales = try await context.first(Department.self, where: Department.companies.contains(imported.company) && Department.name == "Sales") else {
            throw ExampleFailure("no Sales department")
        }
        try await context.delete(sales)
        let refusal = await refusedSave()
        guard let refusal, refusal.code == .deny else {
            throw ExampleFailure("deleting a department with employees should be refused (DENY), not \(refusal.map { "\($0)" } ?? "saved")")
        }
        print("deny:     deleting Sales, which has \(sales.employees.count) employees, is refused at save: \(refusal.code) — \(refusal.validationFailures.first?.message ?? refusal.message)")
        // The refused save wrote nothing; rollback drops the pending delete.
        try await context.rollback()

        // noAction (Computer.owner): deleting a computer leaves its owner's list alone; the link
        // dangles and reads as missing.
        guard let kim = try await context.first(Employee.self, where: staff && Employee.name == "Kim Minji") else {
            throw ExampleFailure("no Kim Minji")
        }
        var laptops: [KeelID<Computer>] = []
        for model in ["Galaxy Book", "Gram 16"] {
            laptops.append(try await context.insert(Computer(id: UUID(), model: model, owner: kim.objectID?.upcast())).objectID!)
        }
        try await context.save()
        try await context.delete(laptops[0])
        try await context.save()
        let left = try await context.get(kim.objectID!).computers
        print("noAction: deleting \(laptops[0].text) leaves Kim Minji's list untouched in the store; it reads as missing: computers = \(left.map(\.text)).")
        try await listDepartments(imported, "Departments after the deletes")
    }

    /// The error a save fails with; nil when it succeeds.
    private func refusedSave() async -> KeelError? {
        do {
            try await context.save()
            return nil
        } catch {
            return error
        }
    }

    // MARK: 6. Two stores, one fetched property

    static let bookMark = " (keel-example)"

    /// Seed 004: Book lives in the Default store, Feedback in the Feedback store; the fetched
    /// property `feedbackList` (`bookUUID == $FETCH_SOURCE.uuid`, by rating) joins them.
    private func booksAndFeedback() async throws {
        section("A book and its feedback, across two stores")
        let uuid = UUID()
        let book = try await context.insert(Book(uuid: uuid, title: "Core Data on Linux" + Self.bookMark, publishedAt: Date()))
        for (rating, comment) in [(Float(4), "Clear and practical"), (5, "Exactly what I needed"), (2, "Too short")] {
            try await context.insert(Feedback(bookUUID: uuid, rating: rating, comment: comment))
        }
        try await context.save()
        print("\(book.title) (\(Book.entity.configuration) store), uuid \(uuid.uuidString.lowercased())")
        for feedback in try await context.fetch(Book.feedbackList, of: book.objectID!) {
            print("  \(String(repeating: "★", count: Int(feedback.rating ?? 0)))\(String(repeating: "☆", count: 5 - Int(feedback.rating ?? 0)))  \(feedback.comment ?? "")  (\(Feedback.entity.configuration) store)")
        }
    }

    // MARK: Output

    private func section(_ title: String) {
        print("\n== \(title)")
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
