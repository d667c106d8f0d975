// What the generated classes do (the golden fixture, Tests/KeelCodegenFixture): new objects start
// at the model's defaults exactly (every attribute type's literal), the metadata says what the
// model says, inheritance is the model's, typed keys are inherited and escaped, and keyword names
// work.

import Foundation
import KeelCodegenFixture
import KeelModel
import Testing

@testable import KeelClient

@Suite("Generated code")
struct GeneratedCodeTests {
    static let model: Model = {
        do {
            return try ModelLoader.load(path: CodegenFixtureTests.root + "/Tests/KeelCodegenTests/Models/golden.json")
        } catch {
            fatalError("golden.json does not load: \(error)")
        }
    }()

    @Test("a new object holds every default of the model, exactly, in each attribute type")
    func defaults() throws {
        let widget = Widget(required: 1.5)
        var values = KeelValues()
        widget.encode(into: &values)
        var checked = 0
        for property in Widget.entity.properties {
            guard let expected = property.defaultValue else { continue }
            #expect(values[property.name] == expected, "\(property.name)")
            checked += 1
        }
        #expect(checked == 14)
        #expect(widget.price == Decimal(string: "-12345678901234567890.1234"))
        #expect(widget.small == Decimal(string: "0.05"))
        #expect(widget.ratio == -.infinity)
        #expect(widget.label == "say \"hi\"\n\t☃\\")
        #expect(widget.version_ == Int32.max)
        #expect(widget.`default` == -7)
        #expect(widget.`in` == nil)
    }

    @Test("the metadata is the model's: every property with its kind, declaring entity and default")
    func metadata() throws {
        let classes: [KeelObject.Type] = [Thing.self, Gadget.self, Widget.self, Tag.self]
        for type in classes {
            let description = type.entity
            let entity = try #require(Self.model.entity(named: description.name))
            #expect(description.isAbstract == entity.isAbstract)
            #expect(description.parent == entity.parent.map { Self.model[$0].name })
            #expect(description.family == entity.family.map { Self.model[$0].name })
            #expect(description.properties == entity.properties.map { KeelPropertyDescription(property: $0, in: Self.model) })
            #expect(description.fetchedProperties.map(\.name) == entity.fetchedProperties.map(\.name))
            try description.check(against: Self.model)
        }
    }

    @Test("classes mirror the inheritance; a parent's class finds its sub-entities' classes")
    func inheritance() {
        let widget: Thing = Widget(required: 0)
        #expect(widget is Gadget)
        #expect(Thing.concreteType(forEntity: "Widget") == Widget.self)
        #expect(Thing.concreteType(forEntity: "Gadget") == Gadget.self)
        #expect(Thing.concreteType(forEntity: "Thing") == nil, "abstract: no object is exactly a Thing")
        #expect(Gadget.concreteType(forEntity: "Tag") == nil)
        #expect(Widget.entity.parent == "Gadget")
        #expect(Gadget.entity.family == ["Gadget", "Widget"])
    }

    @Test("typed keys are inherited, typed by the class they are read on, and escaped in predicates")
    func keys() {
        let label: AttributeKey<Widget, String> = Widget.label
        #expect(label.path == ["label"])
        #expect(Widget.version_.path == ["version"])
        #expect(Gadget.`in`.predicateText == "#in")
        #expect((Widget.`default` > 3).format == "default > %@")
        #expect((Widget.tags.count > 1).format == "tags.@count > %@")
        #expect(Widget.owner.name.predicateText == "owner.name")
        #expect(Tag.sameName.name == "sameName")
        #expect(TypedSort<Widget>.descending(\.size).key == "size")
    }

    @Test("to-many accessors keep order, skip duplicates and take objects not inserted yet")
    func accessors() {
        let tag = Tag(name: "red")
        let a = Widget(required: 1)
        let b = Gadget(required: 2)
        tag.addToOwned(a)
        tag.addToOwned([b, a])
        #expect(tag.owned.isEmpty, "neither is inserted yet: no IDs to show")
        #expect((tag.members["owned"] ?? []).count == 2)
        tag.removeFromOwned(a)
        #expect((tag.members["owned"] ?? []).count == 1)
        let id = KeelID<Gadget>("Gadget/4")!
        tag.addToOwned(id)
        tag.addToOwned(id)
        #expect(tag.owned == [id])
        tag.owned = []
        #expect(tag.members["owned"]?.isEmpty == true)
    }
}
