// Upsert on unique constraints (spec/model.md: under `objectTrumps` or `storeTrumps` a new
// object whose unique key is already held is merged into the holder, as Core Data does).
//
// For each clash of exactly one existing object E with objects I inserted by this save:
//   attributes: objectTrumps — each value I has replaces E's; storeTrumps — I's values only
//               fill E's nulls;
//   to-one:     I's target moves to E (objectTrumps, or when E has none); I is detached either way;
//   to-many:    I's members move to E (added to E's, inverses kept in step);
//   then I (now detached) is deleted, and reported in SaveResult.merged as I → E.
// Only properties E's entity also has are merged (both are in the constraint's family). Any
// other clash (two existing objects, or only inserted ones) stays a CONSTRAINT failure.

enum Upsert {
    static func run(_ session: SaveSession, policy: MergePolicy, insertedHere: Set<ObjectID>) throws(KeelError) -> [ObjectID: ObjectID] {
        var merged: [ObjectID: ObjectID] = [:]
        var editor = session
        let model = session.model
        for clash in try SaveValidator.uniqueClashes(session, touched: SaveValidator.touched(session)) {
            let existing = clash.holders.filter { session.rows[$0]?.inserted != true }
            let fresh = clash.holders.filter { session.rows[$0]?.inserted == true && insertedHere.contains($0) }
            guard existing.count == 1, let e = existing.first, !fresh.isEmpty, fresh.count + 1 == clash.holders.count else { continue }
            for i in fresh where merged[i] == nil {
                guard let source = try session.current(i) else { continue }
                let from = model[i.entity]
                let to = model[e.entity]
                for (field, p) in from.properties.enumerated() {
                    guard field < to.properties.count, to.properties[field].name == p.name else { continue }
                    switch p {
                    case .attribute(let a):
                        if a.isTransient { continue }
                        let v = source.values[field]
                        if v.isNull { continue }
                        let eNull = try session.value(of: e, field: field).isNull
                        if policy == .objectTrumps || eNull {
                            try session.write(e, field: field, value: v)
                        }
                    case .relationship(let r) where !r.isToMany:
                        guard let target = source.values[field].objectID else { continue }
                        try GraphRules.setToOne(&editor, i, field: field, to: nil)
                        let eNull = try session.value(of: e, field: field).isNull
                        if policy == .objectTrumps || eNull, try session.exists(target) {
                            try GraphRules.setToOne(&editor, e, field: field, to: target)
                        }
                    case .relationship:
                        let members = try session.members(of: i, field: field)
                        if members.isEmpty { continue }
                        try GraphRules.remove(&editor, i, field: field, members: members)
                        try GraphRules.add(&editor, e, field: field, members: members.filter { $0 != e }, at: nil)
                    }
                }
                _ = try GraphRules.delete(&editor, i)
                merged[i] = e
            }
        }
        return merged
    }
}
