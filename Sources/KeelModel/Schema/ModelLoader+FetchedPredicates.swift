// Pass 4 of loading a model: each fetched property's predicate is parsed and bound against the
// built model, as it will be when the property is read — its keys against the destination,
// `$FETCH_SOURCE.key…` against the declaring entity (through its to-one relationships), constants
// typed by the key paths they meet, MATCHES patterns compiled — so a predicate that could never run
// refuses the model at load instead of failing every read of the property. The source is a stand-in
// object of the declaring entity whose values are all null, read through a graph that holds
// nothing: the binder checks paths and types, not values. A fetched property has no request to take
// `%@` arguments or `$NAME` variables from, so those are refused here as they would be at every
// read.

extension ModelLoader {
    /// Problems of the fetched properties' predicates of a built model, each at its JSON path.
    static func checkFetchedPredicates(_ raw: RawModel, _ model: Model, _ problems: inout ProblemList) {
        let graph = NothingGraph(model: model)
        for (i, rawEntity) in raw.entities.enumerated() {
            let source = StoredObject(
                id: ObjectID(entity: EntityID(i), number: 1), version: 0,
                values: Array(repeating: .null, count: model[EntityID(i)].properties.count))
            for f in rawEntity.fetchedProperties {
                guard let destination = model.entity(named: f.destination) else { continue }  // pass 2 reported it
                let binder = PredicateBinder(model: model, fetchSource: FetchSource(object: source, graph: graph))
                do throws(KeelError) {
                    _ = try binder.bind(f.predicate, to: destination.id)
                } catch {
                    problems.add("\(f.path).predicate", error.message)
                }
            }
        }
    }
}

/// The graph of a model without objects: what a fetched property's stand-in source reads.
private struct NothingGraph: ObjectGraphReading {
    let model: Model
    func object(_ id: ObjectID) throws(KeelError) -> StoredObject? { nil }
    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] { [] }
}
