// A predicate resolved against a model for one entity (PredicateBinder.swift): key paths are
// field numbers and relationship hops, `%@` and `$VAR` are typed `Value`s, string patterns are
// folded and regexes compiled. This is what evaluation (BoundPredicate+Evaluate.swift) runs per
// object and what the planner inspects: a comparison `.field(f) op .constant(v)` on the fetched
// entity is the shape an index can serve.
//
// Field numbers are valid for the bound entity and for every entity below it (fields are
// numbered once per hierarchy), so a predicate bound for `Person` evaluates `Employee` rows.

/// A predicate ready to evaluate on objects of `entity` (and its sub-entities).
public struct BoundPredicate: Sendable {
    /// The entity the predicate was bound for.
    public let entity: EntityID
    public let root: BoundNode
    /// The parsed predicate it came from (for EXPLAIN and errors).
    public let source: KeelPredicate
    /// How many SUBQUERY variables evaluation keeps at once.
    let slotCount: Int

    init(entity: EntityID, root: BoundNode, source: KeelPredicate, slotCount: Int) {
        self.entity = entity
        self.root = root
        self.source = source
        self.slotCount = slotCount
    }
}

/// Only `not` is boxed: every other case holds one reference or less, so a comparison (a class)
/// or a conjunction (a list) is stored as it is, not in a box allocated per bound node — a
/// prepared request binds its comparisons per call, and freed each with its box.
public enum BoundNode: Sendable {
    case constant(Bool)
    indirect case not(BoundNode)
    case and([BoundNode])
    case or([BoundNode])
    case comparison(BoundComparison)
}

/// A class (immutable), so that evaluation per object passes a reference instead of copying the
/// comparison's operands.
public final class BoundComparison: Sendable {
    public let modifier: ComparisonModifier
    public let left: BoundExpression
    public let op: ComparisonOperator
    public let options: StringOptions
    public let right: BoundExpression
    public let position: SourcePosition
    /// The right side prepared once when it is a constant string (folded, LIKE, regex).
    let pattern: StringPattern?

    init(
        modifier: ComparisonModifier, left: BoundExpression, op: ComparisonOperator, options: StringOptions,
        right: BoundExpression, position: SourcePosition, pattern: StringPattern?
    ) {
        self.modifier = modifier
        self.left = left
        self.op = op
        self.options = options
        self.right = right
        self.position = position
        self.pattern = pattern
    }
}

public indirect enum BoundExpression: Sendable {
    /// A typed constant: a literal, an argument, a variable, or `$FETCH_SOURCE.key` resolved.
    case constant(Value)
    /// A constant list (`{…}`, an array argument), for IN and BETWEEN.
    case list([Value])
    /// An attribute of the evaluated object itself: read from its row, no lookups.
    case field(Int)
    /// Anything else: through relationships, to-many, aggregates, SUBQUERY, SELF.
    case path(BoundKeyPath)

    /// The constant, when this side is one.
    public var constant: Value? {
        if case .constant(let v) = self { return v }
        return nil
    }
}

public struct BoundKeyPath: Sendable {
    public indirect enum Base: Sendable {
        /// The evaluated object (or, inside a SUBQUERY, the element).
        case object
        /// A SUBQUERY variable, by slot.
        case variable(Int)
        case subquery(BoundSubquery)
    }

    public enum Step: Sendable, Hashable {
        case attribute(Int)
        case toOne(Int)
        case toMany(Int)
    }

    public let base: Base
    /// Hops from the base; after a `toMany` the path yields a collection.
    public let steps: [Step]
    /// `@count`/`@sum`/… over the collection the steps yield, with the key path (`tail`) read
    /// on each element (`employees.@avg.salary`: steps `[toMany employees]`, tail `[salary]`).
    public let aggregate: (function: AggregateFunction, tail: [Step])?
    /// Whether the path yields a collection (before any aggregate).
    public let isCollection: Bool
    /// The key path as parsed; `text` writes it out (for messages and EXPLAIN only).
    let source: PredicateKeyPath

    /// The key path as written.
    public var text: String { source.description }
}

public struct BoundSubquery: Sendable {
    /// The collection, a to-many key path.
    public let collection: BoundKeyPath
    /// The variable's slot.
    public let slot: Int
    /// Evaluated with the element as the object (and in the slot).
    public let predicate: BoundNode
}
