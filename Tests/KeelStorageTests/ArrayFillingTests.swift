// `Array(filling:count:)` is `Array(repeating:count:)` built through the growth path: the same
// elements, count and independence of the copies, for plain, optional, class and array elements.

import Testing

@testable import KeelStorage

@Suite("Array(filling:count:)")
struct ArrayFillingTests {
    final class Box {
        var value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test("equals Array(repeating:count:) at every count from 0 to 300, with room for them all")
    func sameAsRepeating() {
        for count in 0...300 {
            let words = [UInt64](filling: 7, count: count)
            #expect(words == [UInt64](repeating: 7, count: count), "count \(count)")
            #expect(words.capacity >= count)
            let optionals = [Int?](filling: nil, count: count)
            #expect(optionals == [Int?](repeating: nil, count: count), "count \(count)")
            let lists = [[Int]](filling: [1, 2], count: count)
            #expect(lists == [[Int]](repeating: [1, 2], count: count), "count \(count)")
        }
    }

    @Test("each element is a copy of the value: changing one changes no other; a class value is shared as with repeating")
    func elementsAreCopies() {
        var lists = [[Int]](filling: [], count: 5)
        lists[2].append(9)
        #expect(lists == [[], [], [9], [], []])
        let box = Box(1)
        let boxes = [Box](filling: box, count: 3)
        #expect(boxes.allSatisfy { $0 === box })
        box.value = 4
        #expect(boxes.map(\.value) == [4, 4, 4])
    }
}
