// Pass 1 of the loader, continued: attributes and relationships, each checked on its own (the
// rules that need other entities are in ModelLoader+Checking.swift).
//
// Attribute values (`defaultValue`, `minValue`, `maxValue`) are decoded with the value codec, so
// a default is written exactly as a client would send the value. Bounds are values of the
// attribute's type for numbers and dates, and non-negative integer lengths for `string`
// (characters, Swift's `String.count`) and `binary` (bytes); other types take no bounds. A default
// must itself satisfy the bounds and the regex: a default that can never be saved is a model bug.
//
// Keys that apply only to one kind of relationship (`ordered`, `minCount`, `maxCount` to to-many;
// `optional` to to-one) are accepted on the other kind only with their default value, so the
// canonical form (which writes every key) loads back.

extension ModelLoader {
    static func readAttribute(_ json: JSON, path: String, entity: String, _ problems: inout ProblemList) -> RawAttribute? {
        guard var r = KeyedReader(json, path: path, &problems) else { return nil }
        let name = readPropertyName(&r, &problems)
        let typeName = r.string("type", required: true, &problems)
        let type = typeName.flatMap(AttributeType.init(rawValue:))
        if let typeName, type == nil {
            let all = AttributeType.allCases.map(\.rawValue).joined(separator: ", ")
            problems.add("\(path).type", "\(quoted(typeName)) is not an attribute type (\(all))")
        }
        let isOptional = r.bool("optional", &problems) ?? true
        let isTransient = r.bool("transient", &problems) ?? false
        let isIndexed = r.bool("indexed", &problems) ?? false
        let defaultJSON = r.any("defaultValue")
        let minJSON = r.any("minValue")
        let maxJSON = r.any("maxValue")
        let regex = r.string("regex", &problems)
        let renaming = r.string("renamingIdentifier", &problems)
        r.finish(&problems)
        guard let name, let type else { return nil }

        var a = RawAttribute(path: path, name: name, type: type)
        a.isOptional = isOptional
        a.isTransient = isTransient
        a.isIndexed = isIndexed
        a.regex = regex
        a.renamingIdentifier = renaming
        let owner = "\(entity).\(name)"
        if isTransient && isIndexed {
            problems.add("\(path).indexed", "a transient attribute is never stored, so it cannot be indexed")
        }
        if let defaultJSON {
            do throws(KeelError) {
                a.defaultValue = try ValueCodec.decode(defaultJSON, as: type, owner: owner)
            } catch {
                problems.add("\(path).defaultValue", error.message)
            }
        }
        a.minValue = readBound(minJSON, key: "minValue", type: type, owner: owner, path: path, &problems)
        a.maxValue = readBound(maxJSON, key: "maxValue", type: type, owner: owner, path: path, &problems)
        if let lo = a.minValue, let hi = a.maxValue, Value.compare(lo, hi) == .orderedDescending {
            problems.add("\(path).maxValue", "maxValue \(describe(hi, type)) is below minValue \(describe(lo, type))")
        }
        var compiled: CompiledRegex?
        if let regex {
            if type != .string {
                problems.add("\(path).regex", "regex applies to string attributes, not \(type.rawValue)")
            } else {
                // ICU's syntax, as MATCHES and as Core Data's own regex validation.
                compiled = try? CompiledRegex(regex, caseInsensitive: false, position: SourcePosition(0))
                if compiled == nil {
                    problems.add("\(path).regex", "\(quoted(regex)) is not a valid regular expression: \(CompiledRegex.refusal(of: regex))")
                }
            }
        }
        if let d = a.defaultValue {
            checkDefault(d, a, compiled, path: "\(path).defaultValue", &problems)
        }
        return a
    }

    private static func readBound(
        _ json: JSON?, key: String, type: AttributeType, owner: String, path: String, _ problems: inout ProblemList
    ) -> Value? {
        guard let json else { return nil }
        let p = "\(path).\(key)"
        switch type {
        case .int16, .int32, .int64, .double, .float, .decimal, .date:
            do throws(KeelError) {
                let v = try ValueCodec.decode(json, as: type, owner: owner)
                if case .double(let d) = v, d.isNaN {
                    problems.add(p, "a bound must be a number, not NaN")
                    return nil
                }
                return v
            } catch {
                problems.add(p, error.message)
                return nil
            }
        case .string, .binary:
            guard case .int(let n) = json, n >= 0 else {
                problems.add(p, "for \(type.rawValue) attributes \(key) is a length: a non-negative integer, found \(ValueCodec.describe(json))")
                return nil
            }
            return .int(n)
        case .bool, .uuid, .uri, .json:
            problems.add(p, "\(key) applies to numbers, dates, strings and binary, not \(type.rawValue)")
            return nil
        }
    }

    /// The default must pass the attribute's own bounds and regex.
    private static func checkDefault(
        _ d: Value, _ a: RawAttribute, _ regex: CompiledRegex?, path: String, _ problems: inout ProblemList
    ) {
        let measured: Value
        switch d {
        case .string(let s): measured = .int(Int64(s.count))
        case .binary(let b): measured = .int(Int64(b.count))
        default: measured = d
        }
        let what = (a.type == .string || a.type == .binary) ? "its length \(describe(measured, .int64))" : describe(d, a.type)
        if let lo = a.minValue, let order = Value.compare(measured, lo), order == .orderedAscending {
            problems.add(path, "the default is below minValue: \(what) < \(describe(lo, a.type == .string || a.type == .binary ? .int64 : a.type))")
        }
        if let hi = a.maxValue, let order = Value.compare(measured, hi), order == .orderedDescending {
            problems.add(path, "the default is above maxValue: \(what) > \(describe(hi, a.type == .string || a.type == .binary ? .int64 : a.type))")
        }
        if let regex, case .string(let s) = d {
            do {
                if !(try regex.wholeMatch(s)) { problems.add(path, "the default \(quoted(s)) does not match the regex") }
            } catch {
                problems.add(path, "the default \(quoted(s)) makes the regex backtrack too much to check it")
            }
        }
    }

    static func describe(_ v: Value, _ type: AttributeType) -> String {
        ValueCodec.encode(v, as: type).serialized()
    }

    static func readRelationship(_ json: JSON, path: String, _ problems: inout ProblemList) -> RawRelationship? {
        guard var r = KeyedReader(json, path: path, &problems) else { return nil }
        let name = readPropertyName(&r, &problems)
        let destination = r.string("destination", required: true, &problems)
        let isToMany = r.bool("toMany", &problems) ?? false
        let isOrdered = r.bool("ordered", &problems)
        let inverse = r.string("inverse", &problems)
        let ruleName = r.string("deleteRule", &problems)
        let isOptional = r.bool("optional", &problems)
        let minCount = r.int("minCount", &problems)
        let maxCount = r.int("maxCount", &problems)
        let renaming = r.string("renamingIdentifier", &problems)
        r.finish(&problems)

        var rule = DeleteRule.nullify
        if let ruleName {
            if let parsed = DeleteRule(rawValue: ruleName) {
                rule = parsed
            } else {
                let all = DeleteRule.allCases.map(\.rawValue).joined(separator: ", ")
                problems.add("\(path).deleteRule", "\(quoted(ruleName)) is not a delete rule (\(all))")
            }
        }
        for (key, count) in [("minCount", minCount), ("maxCount", maxCount)] {
            if let count, count < 0 { problems.add("\(path).\(key)", "\(key) must be 0 (no bound) or more, found \(count)") }
        }
        if isToMany {
            if isOptional == false {
                problems.add("\(path).optional", "optional applies to to-one relationships; a to-many one uses minCount")
            }
            if let lo = minCount, let hi = maxCount, hi > 0, lo > hi {
                problems.add("\(path).maxCount", "maxCount \(hi) is below minCount \(lo)")
            }
        } else {
            if isOrdered == true { problems.add("\(path).ordered", "ordered applies to to-many relationships only") }
            for (key, count) in [("minCount", minCount), ("maxCount", maxCount)] where (count ?? 0) > 0 {
                problems.add("\(path).\(key)", "\(key) applies to to-many relationships; a to-one one uses optional")
            }
        }
        guard let name, let destination else { return nil }
        var rel = RawRelationship(path: path, name: name, destination: destination)
        rel.isToMany = isToMany
        rel.isOrdered = isToMany && isOrdered == true
        rel.inverse = inverse
        rel.deleteRule = rule
        rel.isOptional = isToMany ? true : (isOptional ?? true)
        rel.minCount = isToMany ? max(0, minCount ?? 0) : 0
        rel.maxCount = isToMany ? max(0, maxCount ?? 0) : 0
        rel.renamingIdentifier = renaming
        return rel
    }
}
