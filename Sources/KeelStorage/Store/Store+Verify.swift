// Verify: walk every page of a snapshot and report each fault with its page number (I3, I10–I12).

/// The result of `Store.verify()`.
public struct VerifyReport: Sendable, CustomStringConvertible {
    public var faults: [VerifyFault]
    /// Pages in the store, pages read from disk, pages on the free list, trees walked.
    public var pageCount: Int
    public var pagesRead: Int
    public var freePages: Int
    public var trees: [String]
    public var isClean: Bool { faults.isEmpty }

    public var description: String {
        if isClean {
            return "clean: \(pageCount) pages, \(freePages) free, \(trees.count) trees"
        }
        return "\(faults.count) fault(s):\n" + faults.map { "  \($0)" }.joined(separator: "\n")
    }
}

extension Store {
    /// Checks the store as of the newest commit: page checksums (read from disk, not the cache),
    /// B+tree order and shape, overflow chains, the free list, and that every page is reachable
    /// exactly once or free. Faults are reported, not thrown; only a closed store throws.
    /// Reports pages checked against the pages of the store.
    public func verify(progress: ProgressHandler = { _ in }) throws(StorageError) -> VerifyReport {
        let pager = try pager()
        let (id, snapshot, _) = pager.beginRead()
        defer { pager.endRead(id) }
        let source = VerifyPages(pager: pager, snapshot: snapshot)
        var faults: [VerifyFault] = []
        var report = VerifyReport(faults: [], pageCount: 0, pagesRead: 0, freePages: 0, trees: [])

        let meta: MetaPage
        do throws(StorageError) {
            meta = try MetaPage.read(from: try source.page(.meta))
        } catch {
            report.faults = [VerifyFault(page: .meta, tree: nil, message: "page 0: \(error.message)")]
            return report
        }
        report.pageCount = Int(meta.pageCount)
        // Who claims each page: page 0 itself, tree pages, free-list pages.
        var owner = [UInt8](repeating: 0, count: Int(meta.pageCount))  // 0 none, 1 reachable, 2 free
        owner[0] = 1
        var claimed: UInt64 = 1
        let task = "checking \(path.split(separator: "/").last.map(String.init) ?? path)"
        func claim(_ page: PageNumber, as kind: UInt8, tree: String?) {
            claimed += 1
            if claimed % 4096 == 0 { progress(WorkProgress(task: task, done: claimed, total: UInt64(meta.pageCount))) }
            guard Int(page.rawValue) < owner.count else {
                faults.append(VerifyFault(page: page, tree: tree, message: "page number beyond the page count \(meta.pageCount)"))
                return
            }
            if owner[Int(page.rawValue)] != 0 {
                let what = owner[Int(page.rawValue)] == 2 ? "is on the free list and also" : "is"
                faults.append(VerifyFault(page: page, tree: tree, message: "page \(what) reached more than once (I12)"))
                return
            }
            owner[Int(page.rawValue)] = kind
        }

        if meta.catalogRoot.rawValue != 0 {
            let catalog = Catalog(root: meta.catalogRoot)
            faults += catalog.tree.verify(in: source, treeName: "(catalog)") { page, _ in claim(page, as: 1, tree: "(catalog)") }
            do throws(StorageError) {
                for name in try catalog.names(in: source) {
                    report.trees.append(name)
                    guard let root = try catalog.root(of: name, in: source) else { continue }
                    faults += BTree(root: root).verify(in: source, treeName: name) { page, _ in claim(page, as: 1, tree: name) }
                }
            } catch {
                faults.append(VerifyFault(page: error.page, tree: "(catalog)", message: "reading the catalog: \(error.message)"))
            }
        }
        do throws(StorageError) {
            let free = try FreeList.allPages(in: source, head: meta.freeListHead, pageCount: meta.pageCount)
            report.freePages = free.count
            for page in free { claim(page, as: 2, tree: nil) }
            if free.count != Int(meta.freePageCount) {
                faults.append(VerifyFault(page: .meta, tree: nil, message: "page 0 counts \(meta.freePageCount) free pages, the free list holds \(free.count)"))
            }
        } catch {
            faults.append(VerifyFault(page: error.page, tree: nil, message: "free list: \(error.message)"))
        }
        let unclaimed = owner.indices.filter { owner[$0] == 0 }
        if faults.isEmpty {
            for i in unclaimed {
                faults.append(VerifyFault(page: PageNumber(UInt32(i)), tree: nil, message: "page is neither reachable nor free (leaked, I12)"))
            }
        } else if !unclaimed.isEmpty {
            // Damage stopped a walk: the pages under it were not reached, which does not make
            // them leaked. One line for all of them, not one per page.
            let shown = unclaimed.prefix(10).map(String.init).joined(separator: ", ")
            faults.append(VerifyFault(
                page: nil, tree: nil,
                message: "\(unclaimed.count) page\(unclaimed.count == 1 ? " was" : "s were") not reached — under the damage above, or leaked (I12): \(shown)\(unclaimed.count > 10 ? ", …" : "")"))
        }
        report.faults = faults
        report.pagesRead = source.pagesRead
        progress(WorkProgress(task: task, done: UInt64(meta.pageCount), total: UInt64(meta.pageCount)))
        return report
    }
}
