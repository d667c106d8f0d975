// The object store as a root context's parent: its snapshots are what contexts read, its saves
// take their change sets.

extension ObjectSnapshot: ContextSnapshot {}

extension ObjectStore: ContextStore {
    public func contextSnapshot() throws(KeelError) -> any ContextSnapshot { try snapshot() }
}
