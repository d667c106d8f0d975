// `Entity/N` IDs have one spelling: N in decimal from 1, without a sign or a leading zero. Other
// spellings are BAD_REQUEST, not aliases of an existing object; an unknown entity name (not an
// empty one) is NO_SUCH_ENTITY.

import KeelModel
import KeelProtocol
import Testing

@Suite("Object IDs as text")
struct ObjectIDTextTests {
    static let model: Model = {
        do {
            return try ModelLoader.load(text: #"{ "name": "M", "version": 1, "entities": [ { "name": "Employee", "attributes": [ { "name": "name", "type": "string" } ] } ] }"#)
        } catch {
            fatalError("the test model loads: \(error)")
        }
    }()

    @Test("Employee/N with N from 1 in plain decimal; nothing else", arguments: [
        ("Employee/1", UInt64?(1)), ("Employee/18446744073709551615", UInt64.max),
        ("Employee/01", nil), ("Employee/+1", nil), ("Employee/0", nil), ("Employee/-1", nil), ("Employee/1a", nil),
        ("Employee/ 1", nil), ("Employee/", nil), ("Employee/١", nil), ("Employee/18446744073709551616", nil), ("/1", nil),
    ])
    func spellings(_ text: String, _ number: UInt64?) {
        #expect(Self.model.objectID(text)?.number == number, "\(text)")
    }

    @Test("the protocol's reading: BAD_REQUEST for a spelling that is not an ID, NO_SUCH_ENTITY for an unknown entity")
    func errors() {
        for text in ["Employee/01", "Employee/+1", "/1", "Employee", "7"] {
            do {
                _ = try ContextTerms.objectID(text, in: Self.model)
                Issue.record("\(text) was read as an ID")
            } catch {
                #expect(error.code == .badRequest, "\(text): \(error)")
            }
        }
        do {
            _ = try ContextTerms.objectID("Nobody/3", in: Self.model)
            Issue.record("Nobody/3 was read as an ID")
        } catch {
            #expect(error.code == .noSuchEntity && error.message.hasPrefix("no entity Nobody in model M"), "\(error)")
        }
    }
}
