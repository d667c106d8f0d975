// The redo record of a multi-store save (Decision 0004): the key-level operations of every
// store except the one that holds the record, written in that store's commit, the first of the
// save. Value of `$intents` key u64 BE save id.
//
// | size   | field                                                        |
// | 1      | format, 0x01                                                 |
// | varint | operation count                                              |
// |        | each operation:                                              |
// | varint |   target store (position in Model.configurations)            |
// | varint |   tree name length, then the UTF-8 name                      |
// | varint |   key length, then the key                                   |
// | 1      |   0x01 put (then varint value length and the value), 0x00 delete |
// Replaying an intent is idempotent (whole-key puts and deletes, in order).

struct KeyOp: Sendable {
    var store: Int
    var tree: String
    var key: [UInt8]
    /// nil: delete.
    var value: [UInt8]?
}

enum IntentRecord {
    static func encode(_ ops: [KeyOp]) -> [UInt8] {
        var out: [UInt8] = [1]
        RowCodec.appendVarint(UInt64(ops.count), to: &out)
        for op in ops {
            RowCodec.appendVarint(UInt64(op.store), to: &out)
            RowCodec.appendBytes(op.tree.utf8, to: &out)
            RowCodec.appendVarint(UInt64(op.key.count), to: &out)
            out.append(contentsOf: op.key)
            if let value = op.value {
                out.append(1)
                RowCodec.appendVarint(UInt64(value.count), to: &out)
                out.append(contentsOf: value)
            } else {
                out.append(0)
            }
        }
        return out
    }

    static func decode(_ bytes: [UInt8], storeCount: Int) throws(KeelError) -> [KeyOp] {
        let result: Result<[KeyOp], KeelError> = bytes.withUnsafeBytes { b in
            Result { () throws(KeelError) -> [KeyOp] in
                var r = ByteReader(bytes: b)
                guard try r.byte() == 1 else { throw r.damage("unknown intent format") }
                let count = try r.length()
                var ops: [KeyOp] = []
                for _ in 0..<count {
                    let store = try r.varint()
                    guard store < UInt64(storeCount) else { throw r.damage("intent names store \(store)") }
                    let tree = try r.string()
                    let key = try r.bytes(try r.length())
                    let kind = try r.byte()
                    let value: [UInt8]?
                    switch kind {
                    case 1: value = try r.bytes(try r.length())
                    case 0: value = nil
                    default: throw r.damage("unknown intent operation")
                    }
                    ops.append(KeyOp(store: Int(store), tree: tree, key: key, value: value))
                }
                return ops
            }
        }
        return try result.get()
    }
}
