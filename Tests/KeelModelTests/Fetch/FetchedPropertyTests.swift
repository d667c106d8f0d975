// Fetched properties (model `fetchedProperties`): Book.feedbackList is `bookUUID ==
// $FETCH_SOURCE.uuid` sorted by rating descending, with Book in store Default and Feedback in
// store Feedback. Evaluated when asked (GET or FETCH `include`), through the index on
// Feedback.bookUUID, and never cached: a save or a pending change shows at the next ask.

import Foundation
import Testing

@testable import KeelModel

@Suite("Fetched properties")
struct FetchedPropertyTests {
    @Test("evaluated across two stores on GET and FETCH include, not cached across saves")
    func acrossStores() throws {
        let data = try FetchTestData()
        #expect(data.model.configuration(of: data.model.id("Book")) != data.model.configuration(of: data.model.id("Feedback")))
        let c = data.context()
        func comments(_ object: ManagedObject?) -> [String] {
            (object?.included["feedbackList"] ?? []).compactMap { if case .string(let s)? = $0["comment"] { s } else { nil } }
        }
        #expect(comments(try c.get(data.books[0], include: ["feedbackList"])) == ["great", "long"])
        let rows = try c.fetch(FetchRequest(entity: "Book", sort: [KeelSortDescriptor(key: "title")], include: ["feedbackList"]))
        #expect(rows.map { comments($0.object) } == [["meh"], ["great", "long"]])
        #expect(rows[1].json(in: data.model)["feedbackList"]?.arrayValue?.first?["rating"] == 4.5)
        #expect(try c.explain(FetchRequest(entity: "Feedback", predicate: "bookUUID == %@", args: [.string(FetchTestData.u1)])).hasPrefix("INDEX Feedback.bookUUID"))

        // A pending feedback in the context is seen at once.
        _ = try c.insert(entity: "Feedback", values: ["bookUUID": .string(FetchTestData.u1), "rating": 5, "comment": "best"])
        #expect(comments(try c.get(data.books[0], include: ["feedbackList"])) == ["best", "great", "long"])
        // Another context saves one: seen after this context's next snapshot, nothing cached.
        let other = data.context()
        _ = try other.insert(entity: "Feedback", values: ["bookUUID": .string(FetchTestData.u1), "rating": 3.5, "comment": "fine"])
        try other.save()
        #expect(comments(try c.get(data.books[0], include: ["feedbackList"])) == ["best", "great", "long"])
        try c.save()
        #expect(comments(try c.get(data.books[0], include: ["feedbackList"])) == ["best", "great", "fine", "long"])
        expectKeelError(.noSuchProperty) { _ = try c.get(data.books[0], include: ["reviews"]) }
    }
}
