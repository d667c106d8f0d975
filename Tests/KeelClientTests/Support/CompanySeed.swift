// The sample data the typed suite works on (config/model.json): one company, four departments,
// six employees, two students, a laptop; inserted through the typed API and saved.

import Foundation
import KeelClient
import KeelSampleModel

struct CompanySeed {
    let company: KeelID<Company>
    let departments: [String: KeelID<Department>]
    let employees: [String: KeelID<Employee>]
    let students: [String: KeelID<Student>]

    /// Name, age, salary, department, gender.
    static let staff: [(String, Int16, String, String, String)] = [
        ("Kim", 34, "5200.50", "Sales", "female"),
        ("Lee", 28, "4100", "Development", "male"),
        ("Park", 45, "7300.25", "Development", "male"),
        ("Choi", 31, "4800", "Design", "female"),
        ("Jung", 52, "6100", "Sales", "other"),
        ("Émile", 29, "3900", "HR", "male"),
    ]
    static let departmentNames: [(String, Int16)] = [("Sales", 7), ("Design", 2), ("Development", 3), ("HR", 4)]

    static func insert(into context: KeelContext) async throws -> CompanySeed {
        let company = try await context.insert(
            Company(
                name: "Acme", website: URL(string: "https://acme.example/about"),
                founded: Date(keelMilliseconds: 925_516_800_000), registrationNumber: 123_456_789_012))
        var departments: [String: KeelID<Department>] = [:]
        for (name, code) in departmentNames {
            let department = Department(name: name, code: code)
            department.addToCompanies(company)
            departments[name] = try await context.insert(department).objectID
        }
        var employees: [String: KeelID<Employee>] = [:]
        for (name, age, salary, department, gender) in staff {
            let employee = Employee(
                name: name, age: age, address: "\(name) Street 1", gender: gender, salary: Decimal(string: salary)!,
                hiredAt: Date(keelMilliseconds: 1_600_000_000_000 + Int64(age) * 86_400_000), isManager: name == "Park",
                department: departments[department], company: company.objectID)
            employees[name] = try await context.insert(employee).objectID
        }
        var students: [String: KeelID<Student>] = [:]
        for (name, grade, course, age) in [("Han", Int32(10), "math", Int16(16)), ("Yoon", 12, "physics", 18)] {
            students[name] = try await context.insert(Student(name: name, age: age, grade: grade, course: course)).objectID
        }
        try await context.save()
        return CompanySeed(company: company.objectID!, departments: departments, employees: employees, students: students)
    }
}
