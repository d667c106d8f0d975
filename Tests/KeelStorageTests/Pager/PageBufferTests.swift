import Testing

@testable import KeelStorage

@Suite("Page buffers")
struct PageBufferTests {
    @Test("the bytes are the object's tail: 16-byte aligned, zeroed or copied, freed with the last copy", arguments: [512, 4096, 65536])
    func tailAllocation(pageSize: Int) {
        weak var object: PageBuffer.Storage?
        do {
            let a = PageBuffer.zeroed(size: pageSize)
            object = a.storage
            #expect(a.size == pageSize && a.storage.header == pageSize, "the size is the object's header, read through its pointer")
            #expect(a.bytes.count == pageSize && a.readOnlyBytes.count == pageSize)
            let u = PageBuffer.uninitialized(size: pageSize)
            #expect(u.size == pageSize && u.storage.header == pageSize)
            #expect(Int(bitPattern: a.pointer) % 16 == 0, "the tail is 16-byte aligned")
            let start = UnsafeRawPointer(Unmanaged.passUnretained(a.storage).toOpaque())
            #expect(UnsafeRawPointer(a.pointer) - start <= 64, "the bytes follow the object's header")
            #expect(a.readOnlyBytes.allSatisfy { $0 == 0 })
            a.store(UInt32(0xDEAD_BEEF), at: pageSize - 4)
            a.pageType = .leaf
            let b = PageBuffer.copy(of: a)
            #expect(!(a === b) && a === a)
            #expect(b.size == pageSize && b.pageType == .leaf && b.load(UInt32.self, at: pageSize - 4) == 0xDEAD_BEEF)
            var c = a
            let unique = c.isKnownUniquelyReferenced()
            #expect(!unique, "a copy of the value shares the buffer")
            #expect(object != nil)
        }
        #expect(object == nil, "the buffer goes with its last copy")
    }

    @Test("many buffers allocated and dropped are all freed")
    func allocateAndDrop() {
        var freed = 0
        for round in 0..<200 {
            var buffers: [PageBuffer] = []
            var watched: [Weak] = []
            for i in 0..<50 {
                let b = i.isMultiple(of: 2) ? PageBuffer.zeroed(size: 4096) : PageBuffer.uninitialized(size: 4096)
                b.store(UInt64(round * 50 + i), at: 8)
                let copy = PageBuffer.copy(of: b)
                buffers.append(copy)
                watched.append(Weak(b.storage))
                watched.append(Weak(copy.storage))
            }
            #expect(buffers.enumerated().allSatisfy { $0.element.load(UInt64.self, at: 8) == UInt64(round * 50 + $0.offset) })
            buffers.removeAll()
            freed += watched.filter { $0.object == nil }.count
        }
        #expect(freed == 200 * 100)
    }

    private struct Weak {
        weak var object: PageBuffer.Storage?
        init(_ object: PageBuffer.Storage) { self.object = object }
    }
}
