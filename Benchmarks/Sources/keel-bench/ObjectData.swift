import Foundation
import KeelStorage

/// The object workloads' data set (issue 3, "Figures"): employees with a name, an age, a salary
/// (an exact decimal with cents), a hire date and a department, generated once from a seed and
/// read by both engines in the same order. Departments are numbered 0..<departments; employee i
/// belongs to department `department[i]`, drawn so that every department gets exactly
/// `count / departments` employees (the cascade row deletes a department of known size).
final class EmployeeSet: Sendable {
    let count: Int
    let departments: Int
    /// "First Last" names from two lists of 64, plus a random 6-digit suffix: random order in the
    /// name index, 14–24 bytes.
    let names: [String]
    /// 18...70.
    let ages: [Int16]
    /// Cents, 20,000.00 ... 199,999.99.
    let salaryCents: [Int64]
    /// Milliseconds since 1970, 2000-01-01 ... 2026-01-01.
    let hiredAt: [Int64]
    let department: [Int32]

    init(count: Int, departments: Int, seed: UInt64) {
        precondition(departments > 0 && count % departments == 0, "employees must divide evenly into departments")
        self.count = count
        self.departments = departments
        var rng = SeededRandom(seed: seed)
        var names: [String] = []
        var ages: [Int16] = []
        var salaries: [Int64] = []
        var dates: [Int64] = []
        names.reserveCapacity(count)
        ages.reserveCapacity(count)
        salaries.reserveCapacity(count)
        dates.reserveCapacity(count)
        for _ in 0..<count {
            let r = rng.next()
            let first = Self.first[Int(r & 63)], last = Self.last[Int((r >> 6) & 63)]
            names.append("\(first) \(last) \(100_000 + (r >> 12) % 900_000)")
            ages.append(Int16(18 + (r >> 32) % 53))
            salaries.append(2_000_000 + Int64(rng.next() % 18_000_000))
            dates.append(946_684_800_000 + Int64(rng.next() % 820_540_800_000))
        }
        // Every department exactly count/departments employees, in a random order.
        var department = (0..<count).map { Int32($0 % departments) }
        for i in stride(from: count - 1, to: 0, by: -1) {
            let j = Int(rng.next() % UInt64(i + 1))
            department.swapAt(i, j)
        }
        self.names = names
        self.ages = ages
        self.salaryCents = salaries
        self.hiredAt = dates
        self.department = department
    }

    /// The department names (unique): "Department 0", ...
    func departmentName(_ d: Int) -> String { "Department \(d)" }

    /// A salary in its exact decimal text: "123456.78".
    func salaryText(_ i: Int) -> String {
        let c = salaryCents[i]
        let cents = c % 100
        return "\(c / 100).\(cents < 10 ? "0" : "")\(cents)"
    }

    var employeesPerDepartment: Int { count / departments }

    static let first = [
        "Ada", "Alan", "Anna", "Ben", "Bea", "Carl", "Cleo", "Dan", "Dora", "Eli", "Emma", "Finn", "Fay", "Gus", "Gwen", "Hal",
        "Hana", "Ivan", "Iris", "Jack", "Jill", "Karl", "Kim", "Leo", "Lena", "Max", "Mia", "Ned", "Nora", "Otto", "Olga", "Paul",
        "Pia", "Quin", "Rosa", "Rob", "Sam", "Sara", "Tom", "Tina", "Uma", "Udo", "Vic", "Vera", "Walt", "Wren", "Xavi", "Xena",
        "Yann", "Yara", "Zack", "Zoe", "Abe", "Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gil", "Ina", "Jo", "Kai", "Liv",
    ]
    static let last = [
        "Adams", "Baker", "Clark", "Davis", "Evans", "Fisher", "Garcia", "Hill", "Irwin", "Jones", "King", "Lopez", "Moore",
        "Nash", "Owens", "Perez", "Quinn", "Reed", "Smith", "Turner", "Usher", "Vance", "White", "Xu", "Young", "Zhang", "Allen",
        "Brown", "Cole", "Dunn", "Ellis", "Ford", "Grant", "Hayes", "Ito", "James", "Kelly", "Lee", "Miller", "Nolan", "Ortiz",
        "Price", "Rossi", "Scott", "Tanaka", "Ueda", "Voss", "Walsh", "Wong", "Yates", "Ziegler", "Arndt", "Berg", "Chen",
        "Diaz", "Engel", "Frank", "Gomez", "Hahn", "Iqbal", "Jung", "Klein", "Lang", "Meyer",
    ]
}

/// What a fetch saw, summed over every fetched object, so both engines can be checked against
/// each other: objects found, UTF-8 bytes of the names, and sums of ages, hire dates, department
/// numbers. Salaries are compared separately, untimed, on a sample (`salaries`).
struct ObjectTally: Equatable, Codable, Sendable {
    var found = 0
    var nameBytes = 0
    var ageSum = 0
    var dateSum: Int64 = 0
    var departmentSum = 0
}
