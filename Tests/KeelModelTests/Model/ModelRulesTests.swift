// Every rule of spec/model.md, broken one at a time: the model is refused with INVALID_MODEL and
// the problem names the exact JSON path.

import Testing

@testable import KeelModel

/// A valid two-entity model (Dept ↔ Emp, one-to-many) as building blocks.
private let dept = #"{"name":"Dept","attributes":[{"name":"title","type":"string"}],"relationships":[{"name":"staff","destination":"Emp","toMany":true,"inverse":"dept"}]}"#
private let emp = #"{"name":"Emp","attributes":[{"name":"pay","type":"int16"}],"relationships":[{"name":"dept","destination":"Dept","inverse":"staff"}]}"#

private func one(_ entity: String) -> String { ModelFixture.model(entities: entity) }
private func attribute(_ json: String) -> String { one(#"{"name":"Dept","attributes":["# + json + "]}") }

struct RuleCase: CustomTestStringConvertible, Sendable {
    let rule: String
    let model: String
    let problem: String
    var testDescription: String { rule }
}

private let cases: [RuleCase] = [
    // Model shape.
    .init(rule: "entities is required", model: #"{"name":"T"}"#, problem: "entities: is required"),
    .init(rule: "a model needs an entity", model: #"{"name":"T","entities":[]}"#, problem: "entities: a model needs at least one entity"),
    .init(rule: "name is required", model: #"{"entities":[{"name":"A"}]}"#, problem: "name: is required"),
    .init(rule: "version is a positive integer", model: #"{"name":"T","version":0,"entities":[{"name":"A"}]}"#, problem: "version: the version must be a positive integer, found 0"),
    .init(rule: "an entity is an object", model: ModelFixture.model(entities: "3"), problem: "entities[0]: expected an object, found a number"),
    // Entities.
    .init(rule: "entity names are upper camel case", model: one(#"{"name":"dept"}"#), problem: #"entities[0].name: "dept" is not an entity name: upper camel case, [A-Z][A-Za-z0-9_]*"#),
    .init(rule: "entity names are unique", model: ModelFixture.model(entities: #"{"name":"A"},{"name":"A"}"#), problem: #"entities[1].name: "A" is already the name of entities[0]"#),
    .init(rule: "abstract is a boolean", model: one(#"{"name":"A","abstract":"yes"}"#), problem: "entities[0].abstract: expected true or false, found a string"),
    .init(rule: "the parent exists", model: one(#"{"name":"A","parent":"Nope"}"#), problem: #"entities[0].parent: "Nope" is not an entity of the model"#),
    .init(rule: "an entity is not its own parent", model: one(#"{"name":"A","parent":"A"}"#), problem: "entities[0].parent: an entity cannot be its own parent"),
    .init(rule: "parents have no cycles", model: ModelFixture.model(entities: #"{"name":"A","parent":"B"},{"name":"B","parent":"A"}"#), problem: "entities[1].parent: the parents form a cycle: B → A → B"),
    .init(rule: "unknown keys are refused", model: one(#"{"name":"A","abstrct":true}"#), problem: "entities[0].abstrct: unknown key (known here: abstract, attributes, fetchedProperties, indexes, name, parent, relationships, uniqueConstraints, userInfo)"),
    // Property names.
    .init(rule: "property names are lower camel case", model: attribute(#"{"name":"Title","type":"string"}"#), problem: #"entities[0].attributes[0].name: "Title" is not a property name: lower camel case, [a-z][A-Za-z0-9_]*, never starting with $"#),
    .init(rule: "property names never start with $", model: attribute(#"{"name":"$id","type":"string"}"#), problem: #"entities[0].attributes[0].name: "$id" is not a property name: lower camel case, [a-z][A-Za-z0-9_]*, never starting with $"#),
    .init(rule: "property names are unique in an entity", model: one(#"{"name":"Dept","attributes":[{"name":"title","type":"string"}],"relationships":[{"name":"title","destination":"Dept","inverse":"title"}]}"#), problem: #"entities[0].relationships[0].name: "title" is already a property of Dept (entities[0].attributes[0])"#),
    .init(rule: "property names are unique along the inheritance chain", model: ModelFixture.model(entities: #"{"name":"P","attributes":[{"name":"title","type":"string"}]},{"name":"C","parent":"P","attributes":[{"name":"title","type":"int16"}]}"#), problem: #"entities[1].attributes[0].name: "title" is already a property of P, which C inherits from"#),
    // Attributes.
    .init(rule: "an attribute has a type", model: attribute(#"{"name":"n"}"#), problem: "entities[0].attributes[0].type: is required"),
    .init(rule: "attribute types are the spec's", model: attribute(#"{"name":"n","type":"integer"}"#), problem: #"entities[0].attributes[0].type: "integer" is not an attribute type (int16, int32, int64, double, float, decimal, string, bool, date, binary, uuid, uri, json)"#),
    .init(rule: "optional is a boolean", model: attribute(#"{"name":"n","type":"string","optional":"no"}"#), problem: "entities[0].attributes[0].optional: expected true or false, found a string"),
    .init(rule: "a misspelt attribute key is refused", model: attribute(#"{"name":"n","type":"string","optinal":false}"#), problem: "entities[0].attributes[0].optinal: unknown key (known here: defaultValue, indexed, maxValue, minValue, name, optional, regex, renamingIdentifier, transient, type)"),
    .init(rule: "a default fits its type's range", model: attribute(#"{"name":"n","type":"int16","defaultValue":70000}"#), problem: "entities[0].attributes[0].defaultValue: Dept.n is int16: 70000 is out of range -32768…32767"),
    .init(rule: "a default has its type's kind", model: attribute(#"{"name":"n","type":"date","defaultValue":12}"#), problem: #"entities[0].attributes[0].defaultValue: Dept.n is date: expected a date string like "2026-11-21T09:30:00.000Z", found a number 12"#),
    .init(rule: "a default respects the bounds", model: attribute(#"{"name":"n","type":"int32","defaultValue":3,"minValue":5}"#), problem: "entities[0].attributes[0].defaultValue: the default is below minValue: 3 < 5"),
    .init(rule: "a string default respects the length bounds", model: attribute(#"{"name":"n","type":"string","defaultValue":"abcdef","maxValue":3}"#), problem: "entities[0].attributes[0].defaultValue: the default is above maxValue: its length 6 > 3"),
    .init(rule: "a string default matches the regex", model: attribute(#"{"name":"n","type":"string","defaultValue":"x","regex":"[a-c]+"}"#), problem: #"entities[0].attributes[0].defaultValue: the default "x" does not match the regex"#),
    .init(rule: "bounds only for numbers, dates, strings and binary", model: attribute(#"{"name":"n","type":"bool","minValue":0}"#), problem: "entities[0].attributes[0].minValue: minValue applies to numbers, dates, strings and binary, not bool"),
    .init(rule: "bounds have the attribute's type", model: attribute(#"{"name":"n","type":"date","maxValue":"yesterday"}"#), problem: #"entities[0].attributes[0].maxValue: Dept.n is date: "yesterday" is not an RFC 3339 date-time like "2026-11-21T09:30:00.000Z""#),
    .init(rule: "string bounds are lengths", model: attribute(#"{"name":"n","type":"string","minValue":-1}"#), problem: "entities[0].attributes[0].minValue: for string attributes minValue is a length: a non-negative integer, found -1"),
    .init(rule: "minValue is not above maxValue", model: attribute(#"{"name":"n","type":"double","minValue":5,"maxValue":1.5}"#), problem: "entities[0].attributes[0].maxValue: maxValue 1.5 is below minValue 5.0"),
    .init(rule: "regex only for strings", model: attribute(#"{"name":"n","type":"int16","regex":"[0-9]"}"#), problem: "entities[0].attributes[0].regex: regex applies to string attributes, not int16"),
    .init(rule: "a transient attribute is not indexed", model: attribute(#"{"name":"n","type":"string","transient":true,"indexed":true}"#), problem: "entities[0].attributes[0].indexed: a transient attribute is never stored, so it cannot be indexed"),
    // Relationships.
    .init(rule: "a relationship has a destination", model: one(#"{"name":"Dept","relationships":[{"name":"r"}]}"#), problem: "entities[0].relationships[0].destination: is required"),
    .init(rule: "the destination exists", model: one(#"{"name":"Dept","relationships":[{"name":"r","destination":"Nope"}]}"#), problem: #"entities[0].relationships[0].destination: "Nope" is not an entity of the model"#),
    .init(rule: "the inverse exists on the destination", model: ModelFixture.model(entities: dept.replacingOccurrences(of: #""inverse":"dept""#, with: #""inverse":"dpt""#) + "," + emp), problem: #"entities[0].relationships[0].inverse: "dpt" is not a relationship of Emp"#),
    .init(rule: "the inverse is a relationship", model: ModelFixture.model(entities: dept.replacingOccurrences(of: #""inverse":"dept""#, with: #""inverse":"pay""#) + "," + emp), problem: #"entities[0].relationships[0].inverse: "pay" is an attribute of Emp, not a relationship"#),
    .init(rule: "the inverse names this relationship back", model: ModelFixture.model(entities: dept + "," + emp.replacingOccurrences(of: #""relationships":[{"name":"dept","destination":"Dept","inverse":"staff"}]"#, with: #""relationships":[{"name":"dept","destination":"Dept","inverse":"staff"},{"name":"boss","destination":"Dept"}]"#).replacingOccurrences(of: #""inverse":"staff""#, with: #""inverse":"staff2""#)), problem: #"entities[0].relationships[0].inverse: Emp.dept names "staff2" as its inverse, not "staff""#),
    .init(rule: "the inverse leads back to this entity", model: ModelFixture.model(entities: dept + "," + emp.replacingOccurrences(of: #""destination":"Dept""#, with: #""destination":"Emp""#)), problem: "entities[0].relationships[0].inverse: Emp.dept leads to Emp, not back to Dept"),
    .init(rule: "delete rules are the spec's", model: ModelFixture.model(entities: dept.replacingOccurrences(of: #""toMany":true"#, with: #""toMany":true,"deleteRule":"delete""#) + "," + emp), problem: #"entities[0].relationships[0].deleteRule: "delete" is not a delete rule (nullify, cascade, deny, noAction)"#),
    .init(rule: "ordered is for to-many", model: ModelFixture.model(entities: dept + "," + emp.replacingOccurrences(of: #""inverse":"staff""#, with: #""inverse":"staff","ordered":true"#)), problem: "entities[1].relationships[0].ordered: ordered applies to to-many relationships only"),
    .init(rule: "counts are for to-many", model: ModelFixture.model(entities: dept + "," + emp.replacingOccurrences(of: #""inverse":"staff""#, with: #""inverse":"staff","maxCount":2"#)), problem: "entities[1].relationships[0].maxCount: maxCount applies to to-many relationships; a to-one one uses optional"),
    .init(rule: "optional is for to-one", model: ModelFixture.model(entities: dept.replacingOccurrences(of: #""toMany":true"#, with: #""toMany":true,"optional":false"#) + "," + emp), problem: "entities[0].relationships[0].optional: optional applies to to-one relationships; a to-many one uses minCount"),
    .init(rule: "minCount is not above maxCount", model: ModelFixture.model(entities: dept.replacingOccurrences(of: #""toMany":true"#, with: #""toMany":true,"minCount":5,"maxCount":2"#) + "," + emp), problem: "entities[0].relationships[0].maxCount: maxCount 2 is below minCount 5"),
    .init(rule: "counts are not negative", model: ModelFixture.model(entities: dept.replacingOccurrences(of: #""toMany":true"#, with: #""toMany":true,"minCount":-1"#) + "," + emp), problem: "entities[0].relationships[0].minCount: minCount must be 0 (no bound) or more, found -1"),
    // Fetched properties.
    .init(rule: "a fetched property's destination exists", model: one(#"{"name":"A","fetchedProperties":[{"name":"f","destination":"Nope","predicate":"x == 1"}]}"#), problem: #"entities[0].fetchedProperties[0].destination: "Nope" is not an entity of the model"#),
    .init(rule: "a fetched property has a predicate", model: one(#"{"name":"A","fetchedProperties":[{"name":"f","destination":"A"}]}"#), problem: "entities[0].fetchedProperties[0].predicate: is required"),
    .init(rule: "sort keys are attributes of the destination", model: one(#"{"name":"A","attributes":[{"name":"n","type":"int16"}],"fetchedProperties":[{"name":"f","destination":"A","predicate":"n > 1","sort":[{"key":"rating"}]}]}"#), problem: #"entities[0].fetchedProperties[0].sort[0].key: "rating" is not an attribute of A"#),
    // A fetched property's predicate is bound at load, as a read of the property binds it.
    .init(rule: "a fetched property's predicate parses", model: one(#"{"name":"A","attributes":[{"name":"n","type":"int16"}],"fetchedProperties":[{"name":"f","destination":"A","predicate":"n >"}]}"#), problem: "entities[0].fetchedProperties[0].predicate: predicate error at position 3: expected a key, a value, %@, $VARIABLE, SELF, SUBQUERY or a {list}, found the end of the predicate"),
    .init(rule: "a fetched property's predicate names keys of its destination", model: ModelFixture.model(entities: #"{"name":"A","attributes":[{"name":"n","type":"int16"}],"fetchedProperties":[{"name":"f","destination":"B","predicate":"n == $FETCH_SOURCE.n"}]},{"name":"B","attributes":[{"name":"m","type":"int16"}]}"#), problem: #"entities[0].fetchedProperties[0].predicate: predicate error at position 0: expected a property of B, found "n""#),
    .init(rule: "$FETCH_SOURCE keys are properties of the declaring entity", model: ModelFixture.model(entities: #"{"name":"A","attributes":[{"name":"n","type":"int16"}],"fetchedProperties":[{"name":"f","destination":"B","predicate":"m == $FETCH_SOURCE.m"}]},{"name":"B","attributes":[{"name":"m","type":"int16"}]}"#), problem: #"entities[0].fetchedProperties[0].predicate: predicate error at position 19: expected a property of A, found "m""#),
    .init(rule: "$FETCH_SOURCE is followed by keys, not aggregates", model: one(#"{"name":"A","attributes":[{"name":"n","type":"int16"}],"fetchedProperties":[{"name":"f","destination":"A","predicate":"n == $FETCH_SOURCE.@count"}]}"#), problem: "entities[0].fetchedProperties[0].predicate: predicate error at position 19: expected a property of A, found @count"),
    .init(rule: "a fetched property's predicate takes no %@ arguments", model: one(#"{"name":"A","attributes":[{"name":"n","type":"int16"}],"fetchedProperties":[{"name":"f","destination":"A","predicate":"n == %@"}]}"#), problem: "entities[0].fetchedProperties[0].predicate: predicate error at position 5: expected an argument for %@ number 1 in args, found 0 arguments"),
    // Indexes and unique constraints.
    .init(rule: "unique constraints name properties", model: one(#"{"name":"A","uniqueConstraints":[["nope"]]}"#), problem: #"entities[0].uniqueConstraints[0][0]: "nope" is not a property of A"#),
    .init(rule: "indexes name properties", model: one(#"{"name":"A","attributes":[{"name":"n","type":"int16"}],"indexes":[["n","m"]]}"#), problem: #"entities[0].indexes[0][1]: "m" is not a property of A"#),
    .init(rule: "indexes do not take to-many relationships", model: ModelFixture.model(entities: dept.replacingOccurrences(of: "]}", with: #"],"indexes":[["staff"]]}"#) + "," + emp), problem: "entities[0].indexes[0][0]: Dept.staff is a to-many relationship; an index takes attributes and to-one relationships"),
    .init(rule: "unique constraints do not take transient attributes", model: one(#"{"name":"A","attributes":[{"name":"n","type":"int16","transient":true}],"uniqueConstraints":[["n"]]}"#), problem: "entities[0].uniqueConstraints[0][0]: A.n is transient (never stored), so it cannot be in a unique constraint"),
    .init(rule: "an index lists a property once", model: one(#"{"name":"A","attributes":[{"name":"n","type":"int16"}],"indexes":[["n","n"]]}"#), problem: #"entities[0].indexes[0][1]: "n" is listed twice"#),
    .init(rule: "an index is declared once", model: one(#"{"name":"A","attributes":[{"name":"n","type":"int16"}],"indexes":[["n"],["n"]]}"#), problem: "entities[0].indexes[1]: the same as entities[0].indexes[0]"),
    // Configurations.
    .init(rule: "every entity is in a configuration", model: ModelFixture.model(entities: #"{"name":"A"},{"name":"B"}"#, configurations: #"{"One":["A"]}"#), problem: "configurations: B is in no configuration; every entity belongs to exactly one"),
    .init(rule: "an entity is in one configuration only", model: ModelFixture.model(entities: #"{"name":"A"}"#, configurations: #"{"One":["A"],"Two":["A"]}"#), problem: "configurations.Two[0]: A is already in configurations.One[0]; an entity belongs to exactly one configuration"),
    .init(rule: "configurations list entities of the model", model: ModelFixture.model(entities: #"{"name":"A"}"#, configurations: #"{"One":["A","Nope"]}"#), problem: #"configurations.One[1]: "Nope" is not an entity of the model"#),
    .init(rule: "a hierarchy stays in one configuration", model: ModelFixture.model(entities: #"{"name":"P"},{"name":"C","parent":"P"}"#, configurations: #"{"One":["P"],"Two":["C"]}"#), problem: "configurations.Two[0]: C is in Two but its parent P is in One; an inheritance hierarchy stays in one configuration"),
    .init(rule: "relationships do not cross configurations", model: ModelFixture.model(entities: dept + "," + emp, configurations: #"{"One":["Dept"],"Two":["Emp"]}"#), problem: "entities[0].relationships[0].destination: Emp is in configuration Two and Dept in One; relationships never cross configurations (use a fetched property)"),
    .init(rule: "configuration names are file-safe", model: ModelFixture.model(entities: #"{"name":"A"}"#, configurations: #"{"../x":["A"]}"#), problem: "configurations.../x: configuration names match [A-Za-z][A-Za-z0-9_]* (they name store files)"),
]

@Suite("Model rules: each violation is reported at its JSON path")
struct ModelRulesTests {
    @Test("the building blocks load", arguments: [ModelFixture.model(entities: dept + "," + emp)])
    func valid(model: String) {
        #expect(ModelFixture.problems(model) == [])
    }

    @Test("a broken rule is reported with its path", arguments: cases)
    func rule(_ c: RuleCase) {
        let problems = ModelFixture.problems(c.model)
        #expect(problems.contains(c.problem), "got \(problems)")
    }

    @Test("a model with several problems reports every one of them")
    func several() throws {
        let text = ModelFixture.model(
            entities: #"{"name":"a"},{"name":"B","parent":"Nope","attributes":[{"name":"n","type":"int16","defaultValue":"x"}]},"#
                + #"{"name":"C","relationships":[{"name":"r","destination":"B","inverse":"back"}]}"#)
        do {
            _ = try ModelLoader.load(text: text)
            Issue.record("the model loaded")
        } catch {
            #expect(error.code == .invalidModel)
            let problems = error.details?["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(problems == [
                #"entities[0].name: "a" is not an entity name: upper camel case, [A-Z][A-Za-z0-9_]*"#,
                #"entities[1].attributes[0].defaultValue: B.n is int16: expected an integer, found a string "x""#,
                #"entities[1].parent: "Nope" is not an entity of the model"#,
                #"entities[2].relationships[0].inverse: "back" is not a relationship of B"#,
            ])
            #expect(error.message.hasPrefix("the model has 4 problems: entities[0].name"))
        }
    }

    @Test("an invalid regex is reported at its path")
    func regex() {
        let problems = ModelFixture.problems(attribute(#"{"name":"n","type":"string","regex":"(a"}"#))
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix(#"entities[0].attributes[0].regex: "(a" is not a valid regular expression"#) == true)
    }

    @Test("a relationship without an inverse loads with a warning")
    func warning() throws {
        let model = try ModelLoader.load(text: one(#"{"name":"A","relationships":[{"name":"next","destination":"A"}]}"#))
        #expect(model.warnings == ["entities[0].relationships[0]: A.next has no inverse; Keel cannot keep the other side in step or check it"])
    }

    @Test("an abstract entity without sub-entities loads with a warning")
    func abstractWarning() throws {
        let model = try ModelLoader.load(text: one(#"{"name":"A","abstract":true}"#))
        #expect(model.warnings == ["entities[0]: A is abstract and has no sub-entities, so no object can ever be one"])
    }

    @Test("a file that is not JSON is a PARSE error with an offset")
    func notJSON() {
        #expect {
            _ = try ModelLoader.load(text: #"{"name": "T", "entities": [}"#)
        } throws: { error in
            (error as? KeelError)?.code == .parse && (error as? KeelError)?.message.contains("offset 27") == true
        }
    }

    @Test("a missing model file is an IO error naming the path")
    func missingFile() {
        #expect {
            _ = try ModelLoader.load(path: "/nonexistent/model.json")
        } throws: { error in
            (error as? KeelError)?.code == .io && (error as? KeelError)?.message.contains("/nonexistent/model.json") == true
        }
    }
}
