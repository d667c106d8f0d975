// A plain-text outline of a model, stored in the primary's `$meta model.summary` next to the
// hash, so that opening a folder with another model can name what differs without parsing the
// stored canonical JSON. One line per entity:
//   Name|parent|abstract|configuration|prop:kind:type,...
// where kind is `a` (attribute, type = attribute type) or `r` (relationship, type =
// destination name, `*` appended when to-many).

enum ModelSummary {
    static func text(_ model: Model) -> String {
        model.entities.map { e in
            let props = e.properties.map { p -> String in
                switch p {
                case .attribute(let a): "\(a.name):a:\(a.type.rawValue)\(a.isOptional ? "" : "!")"
                case .relationship(let r): "\(r.name):r:\(model[r.destination].name)\(r.isToMany ? "*" : "")"
                }
            }.joined(separator: ",")
            let parent = e.parent.map { model[$0].name } ?? ""
            return "\(e.name)|\(parent)|\(e.isAbstract ? 1 : 0)|\(e.configuration)|\(props)"
        }.joined(separator: "\n")
    }

    /// Differences between a stored summary and the model being opened, first ones first.
    static func differences(stored: String, current: Model) -> [String] {
        func parse(_ text: String) -> [(name: String, line: String, props: [String])] {
            text.split(separator: "\n").map { line in
                let parts = line.split(separator: "|", omittingEmptySubsequences: false)
                let props = parts.count > 4 ? parts[4].split(separator: ",").map(String.init) : []
                return (String(parts.first ?? ""), String(line), props)
            }
        }
        let old = parse(stored)
        let new = parse(text(current))
        let oldByName = Dictionary(old.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let newByName = Dictionary(new.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var out: [String] = []
        for e in old where newByName[e.name] == nil { out.append("entity \(e.name) removed") }
        for e in new {
            guard let o = oldByName[e.name] else {
                out.append("entity \(e.name) added")
                continue
            }
            if o.line == e.line { continue }
            let oldProps = Dictionary(o.props.map { (String($0.prefix { $0 != ":" }), $0) }, uniquingKeysWith: { a, _ in a })
            let newProps = Dictionary(e.props.map { (String($0.prefix { $0 != ":" }), $0) }, uniquingKeysWith: { a, _ in a })
            for p in o.props { let n = String(p.prefix { $0 != ":" }); if newProps[n] == nil { out.append("\(e.name).\(n) removed") } }
            for p in e.props {
                let n = String(p.prefix { $0 != ":" })
                if let q = oldProps[n] {
                    if q != p { out.append("\(e.name).\(n) changed (\(q) → \(p))") }
                } else {
                    out.append("\(e.name).\(n) added")
                }
            }
            if o.props == e.props { out.append("entity \(e.name) changed (parent, abstract or configuration)") }
        }
        return out
    }
}
