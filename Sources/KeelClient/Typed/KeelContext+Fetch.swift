// Fetching in the typed API: `context.fetch(Employee.self, where: Employee.age > 30,
// sortedBy: .ascending(\.name))` streams `Employee` objects (FetchResults), `count` and `explain`
// take the same arguments, `first` is a fetch with limit 1, `fetchIDs` streams typed IDs. A fetch
// of an entity with sub-entities hands out objects of their classes (`Person` → `Employee`,
// `Student`). Each iteration of the results runs the fetch again, over the context as it is then.

extension KeelContext {
    /// FETCH: the objects, streamed as they come.
    public func fetch<E: KeelObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sorts: TypedSort<E>..., limit: Int? = nil,
        offset: Int = 0, includesSubentities: Bool = true, including: [any IncludableKey<E>] = []
    ) -> FetchResults<E> {
        fetch(
            KeelFetchRequest(
                type, where: predicate, sortedBy: sorts, limit: limit, offset: offset, includesSubentities: includesSubentities,
                including: including))
    }

    /// FETCH with a request value.
    public func fetch<E: KeelObject>(_ request: KeelFetchRequest<E>) -> FetchResults<E> {
        let core = store
        return FetchResults(backend: backend, request: request.json()) { (json) throws(KeelError) -> E in
            try KeelObject.make(json, as: E.self, check: core.check)
        }
    }

    /// FETCH with `result: ids`: the IDs, streamed.
    public func fetchIDs<E: KeelObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sorts: TypedSort<E>..., limit: Int? = nil,
        offset: Int = 0, includesSubentities: Bool = true
    ) -> FetchResults<KeelID<E>> {
        fetchIDs(KeelFetchRequest(type, where: predicate, sortedBy: sorts, limit: limit, offset: offset, includesSubentities: includesSubentities))
    }

    /// FETCH of a request with `result: ids`: the IDs, streamed.
    public func fetchIDs<E: KeelObject>(_ request: KeelFetchRequest<E>) -> FetchResults<KeelID<E>> {
        FetchResults(backend: backend, request: request.json(result: "ids")) { (json) throws(KeelError) -> KeelID<E> in
            KeelID(unchecked: try KeelObjectID(parsing: json["$id"] ?? .null, "a FETCH row's $id"))
        }
    }

    /// The first object the fetch gives (limit 1), or nil.
    public func first<E: KeelObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sorts: TypedSort<E>...,
        isolation: isolated (any Actor)? = #isolation
    ) async throws(KeelError) -> E? {
        var iterator = fetch(KeelFetchRequest(type, where: predicate, sortedBy: sorts, limit: 1)).makeAsyncIterator()
        return try await iterator.next(isolation: isolation)
    }

    /// COUNT: how many objects the fetch would give (after offset, at most limit).
    public func count<E: KeelObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, includesSubentities: Bool = true
    ) async throws(KeelError) -> Int {
        try store.check(E.self)
        return try await backend.count(KeelFetchRequest(type, where: predicate, includesSubentities: includesSubentities).json())
    }

    /// COUNT of a request.
    public func count<E: KeelObject>(_ request: KeelFetchRequest<E>) async throws(KeelError) -> Int {
        try store.check(E.self)
        return try await backend.count(request.json())
    }

    /// EXPLAIN: how the fetch would run (which index, which filter), in words.
    public func explain<E: KeelObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sorts: TypedSort<E>..., limit: Int? = nil
    ) async throws(KeelError) -> String {
        try await explain(KeelFetchRequest(type, where: predicate, sortedBy: sorts, limit: limit))
    }

    /// EXPLAIN of a request.
    public func explain<E: KeelObject>(_ request: KeelFetchRequest<E>) async throws(KeelError) -> String {
        try store.check(E.self)
        return try await backend.explain(request.json())
    }
}
