// The model keelctl's tests use: authors and their books (an ordered to-many with a required
// inverse, a unique name, an index), and a relationship without an inverse — the cases an
// import has to order and complete.

import KeelModel
import Testing

/// A model of the tests, from its text (which must load).
func load(_ text: String) -> Model {
    do {
        return try ModelLoader.load(text: text)
    } catch {
        fatalError("a test model does not load: \(error)")
    }
}

enum LibraryModel {
    static let text = """
        { "name": "Library", "version": 1, "entities": [
          { "name": "Author",
            "attributes": [
              { "name": "name", "type": "string", "optional": false },
              { "name": "born", "type": "int16", "minValue": 0 } ],
            "relationships": [
              { "name": "books", "destination": "Book", "inverse": "author", "toMany": true, "ordered": true, "deleteRule": "cascade" } ],
            "uniqueConstraints": [ ["name"] ] },
          { "name": "Book",
            "attributes": [
              { "name": "title", "type": "string", "optional": false, "indexed": true },
              { "name": "year", "type": "int32" },
              { "name": "notes", "type": "string" },
              { "name": "inPrint", "type": "bool", "defaultValue": true } ],
            "relationships": [
              { "name": "author", "destination": "Author", "inverse": "books", "optional": false },
              { "name": "related", "destination": "Book", "toMany": true } ] }
        ] }
        """

    static let model = load(text)

    static var author: Entity { model.entity(named: "Author")! }  // safe: in the text above
    static var book: Entity { model.entity(named: "Book")! }  // safe: in the text above

    static func field(_ entity: Entity, _ name: String) -> Int { entity.field(named: name)! }  // safe: names from the text above

    /// Inserts `authors` authors with `booksEach` books each (one save per author); returns the IDs.
    @discardableResult
    static func fill(_ store: ObjectStore, authors: Int, booksEach: Int, notes: String = "") throws -> [ObjectID] {
        var ids: [ObjectID] = []
        for a in 0..<authors {
            let author = try store.newObjectID(for: Self.author.id)
            var changes: [Change] = [.insert(author, values: [field(Self.author, "name"): .string("Author \(a)"), field(Self.author, "born"): .int(1900 + Int64(a % 100))])]
            ids.append(author)
            for b in 0..<booksEach {
                let book = try store.newObjectID(for: Self.book.id)
                changes.append(.insert(book, values: [
                    field(Self.book, "title"): .string("Book \(a)-\(b)"), field(Self.book, "year"): .int(Int64(1950 + b)),
                    field(Self.book, "notes"): .string(notes), field(Self.book, "inPrint"): .bool(b % 2 == 0),
                    field(Self.book, "author"): .object(author),
                ]))
                ids.append(book)
            }
            _ = try store.save(ChangeSet(changes: changes))
        }
        return ids
    }
}
