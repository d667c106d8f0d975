// Binding one comparison: which sides may be collections (ANY/ALL/NONE, IN, CONTAINS on a
// to-many), which operators read text, and the constant sides converted to the type of the key
// path they meet (PredicateBinder+Values.swift). Constant strings on the right are folded by
// the options once here, so evaluation folds only the object's side.

extension PredicateBinder {
    func bindComparison(_ c: Comparison, _ scope: Scope, _ state: inout BindingState) throws(KeelError) -> BoundComparison {
        let left = try bindOperand(c.left, scope, &state)
        let right = try bindOperand(c.right, scope, &state)
        return try finishComparison(c, left, right)
    }

    /// The comparison of two bound operands: the checks of what may be a collection or text, the
    /// constant sides converted, patterns prepared. A prepared request's template
    /// (PreparedFetchCache.swift) comes here with its key-path sides kept from an earlier binding.
    func finishComparison(_ c: Comparison, _ left: Operand, _ right: Operand) throws(KeelError) -> BoundComparison {
        let leftIsCollection = left.isCollection
        let membership = c.modifier == .direct && c.op == .contains && leftIsCollection

        if c.modifier != .direct, !leftIsCollection {
            throw PredicateError.at(
                c.left.position, expected: "a to-many key path or a {list} after \(c.modifier.rawValue)", found: "\(c.left)")
        }
        if c.modifier == .direct, leftIsCollection, !membership {
            throw PredicateError.at(
                c.left.position, expected: "ANY, ALL, NONE or an aggregate (@count…) before the to-many key path \(c.left)",
                found: "\(c.left)")
        }
        if case .typed(_, _, true, _) = right, c.op != .in {
            throw PredicateError.at(
                c.right.position, expected: "a single value on the right of \(c.op.rawValue) (a to-many key path only after IN)",
                found: "\(c.right)")
        }
        if c.op.isStringOperator, !membership {
            try requireText(left, c.left.position, c.op)
            try requireText(right, c.right.position, c.op)
        }

        // The type each constant side is converted to.
        let leftType = left.type, rightType = right.type
        let boundLeft: BoundExpression
        let boundRight: BoundExpression
        switch (left, right) {
        case (.typed(let l, _, _, _), .typed(let r, _, _, _)):
            boundLeft = l
            boundRight = r
        case (.typed(let l, _, _, _), .raw(let raw)):
            boundLeft = l
            boundRight = try rightConstant(raw, c, typedBy: c.op.isStringOperator && !membership ? .attribute(.string) : leftType)
        case (.raw(let raw), .typed(let r, _, _, _)):
            boundLeft = try convert(raw, to: c.op.isStringOperator ? .attribute(.string) : rightType, allowList: c.modifier != .direct)
            boundRight = r
        case (.raw(let l), .raw(let r)):
            boundLeft = try convert(l, to: c.op.isStringOperator ? .attribute(.string) : .unknown, allowList: c.modifier != .direct || c.op == .contains)
            boundRight = try rightConstant(r, c, typedBy: c.op.isStringOperator && !membership ? .attribute(.string) : l.naturalType)
        }

        // Prepared patterns: folded text, LIKE segments, compiled regexes.
        var pattern: StringPattern? = nil
        let patternOp = (c.op.isStringOperator && !membership) || (!c.options.isEmpty && (c.op == .equal || c.op == .notEqual))
        if patternOp, case .constant(let value) = boundRight {
            switch value {
            case .string(let s), .uri(let s): pattern = try StringPattern(c.op, s, options: c.options, position: c.right.position)
            default: break
            }
        }
        if c.op == .matches, pattern == nil, !(boundRight.constant?.isNull ?? false) {
            throw PredicateError.at(c.right.position, expected: "a constant pattern string after MATCHES", found: "\(c.right)")
        }
        return BoundComparison(
            modifier: c.modifier, left: boundLeft, op: c.op, options: c.options,
            right: Self.prefolded(boundRight, c.options), position: c.position, pattern: pattern)
    }

    /// The right side's constant: a {low, high} list for BETWEEN, a list or one value for IN,
    /// one value otherwise.
    private func rightConstant(_ raw: RawConstant, _ c: Comparison, typedBy type: OperandType) throws(KeelError) -> BoundExpression {
        switch c.op {
        case .between:
            guard case .list(let elements) = raw.kind, elements.count == 2 else {
                throw PredicateError.at(raw.position, expected: "{low, high} after BETWEEN", found: raw.described)
            }
            return try convert(raw, to: type, allowList: true)
        case .in:
            let bound = try convert(raw, to: type, allowList: true)
            switch bound {
            case .list, .constant(.string): return bound  // membership; a substring test
            default:
                // `age IN 5` is not a membership test (Foundation raises on it): say so rather
                // than read it as `==`.
                throw PredicateError.at(raw.position, expected: "a list ({a, b}), an array argument or text after IN", found: raw.described)
            }
        default:
            return try convert(raw, to: type, allowList: false)
        }
    }

    private func requireText(_ operand: Operand, _ position: SourcePosition, _ op: ComparisonOperator) throws(KeelError) {
        guard case .typed(_, let type, _, let path) = operand else { return }
        switch type {
        case .attribute(.string), .attribute(.uri), .unknown: return
        case .attribute(let t):
            throw PredicateError.at(position, expected: "a string key path for \(op.rawValue)", found: "\(path), a \(t.rawValue) attribute")
        case .object(let e):
            throw PredicateError.at(position, expected: "a string key path for \(op.rawValue)", found: "\(path), a \(model[e].name)")
        }
    }

    /// Constant strings folded once by `[c]`/`[d]`, so evaluation folds only the object's side.
    private static func prefolded(_ expression: BoundExpression, _ options: StringOptions) -> BoundExpression {
        guard !options.isEmpty else { return expression }
        switch expression {
        case .constant(.string(let s)): return .constant(.string(TextFolding.fold(s, options)))
        case .list(let values):
            return .list(values.map { if case .string(let s) = $0 { .string(TextFolding.fold(s, options)) } else { $0 } })
        default: return expression
        }
    }
}

extension PredicateBinder.Operand {
    var isCollection: Bool {
        switch self {
        case .typed(_, _, let isCollection, _): isCollection
        case .raw(let raw):
            if case .list = raw.kind { true } else { false }
        }
    }

    var type: OperandType {
        switch self {
        case .typed(_, let type, _, _): type
        case .raw(let raw): raw.naturalType
        }
    }
}
