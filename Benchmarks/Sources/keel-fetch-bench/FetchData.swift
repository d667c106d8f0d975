// The data set of the fetch benchmark, the same for both engines: `departments` departments
// ("Dept 0" …) of one company, and `count` employees numbered from 1 whose fields are a pure
// function of the number — a name from syllables (each name shared by 10 employees), an age, a
// salary in cents, a hire date, a manager flag and a department — so both engines hold
// identical rows and every query has the same answer on both.

struct FetchData {
    let count: Int
    let departments: Int

    static let syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "da", "fe", "go", "hu", "ji", "ba", "po"]

    struct Employee {
        var name: String
        var age: Int64
        var salaryCents: Int64
        var hiredAt: Int64
        var isManager: Bool
        /// 0-based department.
        var department: Int
    }

    /// A capitalised name of 4 syllables from `n` (base 16): 65,536 names.
    static func name(_ n: Int) -> String {
        var s = ""
        var v = n
        for i in 0..<4 {
            let syllable = syllables[v % 16]
            s += i == 0 ? syllable.prefix(1).uppercased() + syllable.dropFirst() : syllable
            v /= 16
        }
        return s
    }

    func employee(_ number: Int) -> Employee {
        var x = UInt64(number) &* 0x9E37_79B9_7F4A_7C15
        x ^= x >> 29
        x &*= 0xBF58_476D_1CE4_E5B9
        x ^= x >> 32
        return Employee(
            name: Self.name(Int(x % 65_536)), age: 18 + Int64(x >> 16 % 53), salaryCents: 100_000 + Int64((x >> 24) % 1_900_000),
            hiredAt: 1_500_000_000_000 + Int64((x >> 8) % 250_000_000) * 1000, isManager: (x >> 40) % 10 == 0,
            department: Int((x >> 44) % UInt64(departments)))
    }

    static func salaryText(_ cents: Int64) -> String {
        let fraction = cents % 100
        return "\(cents / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
