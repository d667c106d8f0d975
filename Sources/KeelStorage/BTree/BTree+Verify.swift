// Verifying a tree: walk every page from the root and report each fault as a value, never
// stopping at the first (TreeVerifier.swift does the walk). Checked: page types; node headers,
// slot and cell offsets inside the page; cells not overlapping and the space accounting (N2);
// keys strictly increasing (N1) and inside their parent's separators (N3); no empty non-root
// page and no root branch with one child (N4); all leaves at one depth (N5); key and cell sizes
// within the limits; overflow references and chains (page types, used bytes, length, LZ4 blocks
// that decompress to the value length); no page reached twice (T2).

extension BTree {
    /// Checks the whole tree and returns every fault found (empty when the tree is sound).
    /// `visit` is called once for each page reached (nodes and overflow pages), so the pager can
    /// check that every page is either reachable exactly once or free.
    public func verify(
        in source: some PageSource, treeName: String? = nil, visit: (PageNumber, PageType) -> Void = { _, _ in }
    ) -> [VerifyFault] {
        var visited = Set<PageNumber>()
        return verify(in: source, treeName: treeName, visited: &visited, visit: visit)
    }

    /// Like `verify(in:treeName:visit:)`, sharing `visited` with other trees so that a page
    /// reached from two trees is reported too.
    public func verify(
        in source: some PageSource, treeName: String?, visited: inout Set<PageNumber>,
        visit: (PageNumber, PageType) -> Void
    ) -> [VerifyFault] {
        var verifier = TreeVerifier(source: source, tree: treeName, root: root)
        verifier.checkNode(root, depth: 0, lower: nil, upper: nil, visited: &visited, visit: visit)
        return verifier.faults
    }
}
