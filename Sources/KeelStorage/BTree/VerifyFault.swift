/// One problem found by a verifier (B+tree structure here; the pager reports its own faults —
/// checksums, unreachable or doubly used pages — with the same type).
public struct VerifyFault: Sendable, Hashable, CustomStringConvertible {
    /// The page the fault is on, when it is about one page.
    public var page: PageNumber?
    /// The named tree it was found in (nil for the catalog itself or pager-level faults).
    public var tree: String?
    public var message: String

    public init(page: PageNumber?, tree: String? = nil, message: String) {
        self.page = page
        self.tree = tree
        self.message = message
    }

    public var description: String {
        var s = ""
        if let tree { s += "tree \"\(tree)\": " }
        if let page { s += "\(page): " }
        return s + message
    }
}
