import Testing

@testable import KeelStorage

@Suite("Catalog of named trees")
struct CatalogTests {
    @Test("create, look up, list and drop named trees")
    func lifecycle() throws {
        let sink = MemoryPageSink()
        let catalog = Catalog(root: try Catalog.create(in: sink))
        #expect(try catalog.names(in: sink) == [])
        let people = try catalog.createTree(named: "people", in: sink)
        let index = try catalog.createTree(named: "people.byName", kind: 2, flags: 0x0102, in: sink)
        let unicode = try catalog.createTree(named: "índice ✓", in: sink)
        #expect(try catalog.root(of: "people", in: sink) == people)
        #expect(try catalog.entry(named: "people.byName", in: sink) == Catalog.Entry(root: index, kind: 2, flags: 0x0102))
        #expect(try catalog.root(of: "índice ✓", in: sink) == unicode)
        #expect(try catalog.root(of: "nobody", in: sink) == nil)
        #expect(try catalog.names(in: sink) == ["people", "people.byName", "índice ✓"])
        sink.commit()
        #expect(catalog.verify(in: sink).isEmpty)

        try catalog.dropTree(named: "people", in: sink)
        #expect(try catalog.root(of: "people", in: sink) == nil)
        #expect(try catalog.names(in: sink) == ["people.byName", "índice ✓"])
        sink.commit()
        #expect(catalog.verify(in: sink).isEmpty)
        expectSound([catalog.tree, BTree(root: index), BTree(root: unicode)], in: sink)
    }

    @Test("creating a taken name throws .treeExists; dropping a missing one .noSuchTree; bad names are refused")
    func errors() throws {
        let sink = MemoryPageSink()
        let catalog = Catalog(root: try Catalog.create(in: sink))
        try catalog.createTree(named: "a", in: sink)
        func code(_ body: () throws(StorageError) -> Void) -> StorageError.Code? {
            do { try body() } catch { return error.code }
            return nil
        }
        #expect(code { () throws(StorageError) in _ = try catalog.createTree(named: "a", in: sink) } == .treeExists)
        #expect(code { () throws(StorageError) in try catalog.dropTree(named: "b", in: sink) } == .noSuchTree)
        #expect(code { () throws(StorageError) in _ = try catalog.createTree(named: "", in: sink) } == .invalidArgument)
        #expect(code { () throws(StorageError) in _ = try catalog.createTree(named: String(repeating: "x", count: 5000), in: sink) } == .tooLarge)
        #expect(try catalog.names(in: sink) == ["a"])
    }

    @Test("dropping a tree frees every one of its pages, overflow chains included")
    func dropFreesPages() throws {
        let sink = MemoryPageSink()
        let catalog = Catalog(root: try Catalog.create(in: sink))
        sink.commit()
        let baseline = sink.livePageCount
        let root = try catalog.createTree(named: "big", in: sink)
        let tree = BTree(root: root)
        for i in 0..<3000 { try tree.put(key: numericKey(i), value: testValue(i, count: i % 100 == 0 ? 20_000 : 90), in: sink) }
        sink.commit()
        #expect(sink.livePageCount > 100)
        #expect(catalog.verify(in: sink).isEmpty)
        try catalog.dropTree(named: "big", in: sink)
        sink.commit()
        #expect(sink.livePageCount == baseline)
        expectSound([catalog.tree], in: sink)
    }

    @Test("roots stay put while trees grow and shrink; many trees in one catalog")
    func manyTrees() throws {
        let sink = MemoryPageSink()
        let catalog = Catalog(root: try Catalog.create(in: sink))
        var roots: [String: PageNumber] = [:]
        for t in 0..<300 {
            let name = "tree-\(t)-" + String(repeating: "n", count: t % 40)
            roots[name] = try catalog.createTree(named: name, in: sink)
        }
        for (name, root) in roots.sorted(by: { $0.key < $1.key }).prefix(20) {
            let tree = BTree(root: root)
            for i in 0..<400 { try tree.put(key: numericKey(i), value: testValue(i, count: 100), in: sink) }
            for i in 0..<390 { try tree.delete(key: numericKey(i), in: sink) }
            #expect(try catalog.root(of: name, in: sink) == root)
        }
        sink.commit()
        #expect(try catalog.names(in: sink).count == 300)
        var reached = 0
        #expect(catalog.verify(in: sink) { _, _ in reached += 1 }.isEmpty)
        #expect(reached == sink.livePageCount)
        for name in roots.keys { try catalog.dropTree(named: name, in: sink) }
        sink.commit()
        #expect(sink.livePageCount == 1)
    }

    @Test("verify reports a page shared by two trees")
    func sharedPageIsAFault() throws {
        let sink = MemoryPageSink()
        let catalog = Catalog(root: try Catalog.create(in: sink))
        let a = try catalog.createTree(named: "a", in: sink)
        // A second entry naming the same root breaks invariant C1.
        try catalog.tree.put(key: Array("b".utf8), value: Catalog.encode(Catalog.Entry(root: a)), in: sink)
        sink.commit()
        let faults = catalog.verify(in: sink)
        #expect(faults.contains { $0.tree == "b" && $0.page == a && $0.message.contains("twice") })
    }
}
