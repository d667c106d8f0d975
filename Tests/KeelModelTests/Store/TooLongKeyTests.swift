// A value too long for its index (the engine's keys are bounded by the page size) fails the save
// with TOO_LARGE naming the index — not IO, which a client reads as a disk fault — and leaves
// nothing behind: the store stays writable and consistent.

import KeelStorage
import Testing

@testable import KeelModel

@Suite("A value too long for its index")
struct TooLongKeyTests {
    @Test("TOO_LARGE naming the index; nothing saved; the next save works")
    func tooLong() throws {
        let f = try StoreFixture()
        let error = keelError { try f.insert("Employee", ["name": .string(String(repeating: "n", count: 5_000))]) }
        #expect(error?.code == .tooLarge, "\(String(describing: error))")
        #expect(error?.message.hasPrefix("a value is too long for idx/") == true, "\(String(describing: error))")
        #expect(error?.message.contains("longer than the maximum") == true, "\(String(describing: error))")
        let kim = try f.insert("Employee", ["name": .string("Kim")])
        #expect(try f.value(kim, "name") == .string("Kim"))
        try f.expectConsistent()
    }

    @Test("an engine error of a key too long reads as TOO_LARGE")
    func mapping() {
        #expect(KeelError(StorageError(.tooLarge, "key of 5013 bytes is longer than the maximum 994")).code == .tooLarge)
    }
}
