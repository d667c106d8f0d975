// Decoding only some fields of a row (the layout is RowCodec.swift's): the others are skipped
// by their tag without building a value. A scan with a filter on the object's own attributes
// decodes what the filter reads, and the whole row only for the objects that pass — a decimal
// or a string the filter does not look at costs a length skip, not a parse.

import KeelStorage

extension RowCodec {
    /// The row of `id` with only the fields where `wanted` is true decoded (the rest `.null`).
    static func decode(_ bytes: UnsafeRawBufferPointer, id: ObjectID, fieldCount: Int, wanted: [Bool]) throws(KeelError) -> StoredObject {
        var values = [Value](filling: .null, count: fieldCount)
        let version = try walkFields(bytes, fieldCount: fieldCount) { (field, tag, reader) throws(KeelError) in
            if field < wanted.count, wanted[field] {
                values[field] = try decodeValue(tag: tag, &reader)
            } else {
                try skipValue(tag: tag, &reader)
            }
        }
        return StoredObject(id: id, version: version, values: values)
    }

    /// Decodes the `wanted` fields of a row into `values` (every wanted field reset first; the
    /// others left as they are), returning the version: the scratch-buffer form of the above
    /// for scans, which reuse one array for every row.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, into values: inout [Value], fieldCount: Int, wanted: [Bool]
    ) throws(KeelError) -> UInt64 {
        for f in 0..<min(fieldCount, wanted.count, values.count) where wanted[f] { values[f] = .null }
        return try walkFields(bytes, fieldCount: fieldCount) { (field, tag, reader) throws(KeelError) in
            if field < wanted.count, field < values.count, wanted[field] {
                values[field] = try decodeValue(tag: tag, &reader)
            } else {
                try skipValue(tag: tag, &reader)
            }
        }
    }

    /// Skips the payload of a field whose tag has been read.
    static func skipValue(tag: UInt8, _ r: inout ByteReader) throws(KeelError) {
        switch tag {
        case Tag.int, Tag.date: _ = try r.varint()
        case Tag.double: r.offset += 8
        case Tag.decimal, Tag.string, Tag.binary, Tag.uri, Tag.json: r.offset += try r.length()
        case Tag.false, Tag.true: break
        case Tag.uuid: r.offset += 16
        case Tag.object: r.offset += KeyEncoding.objectKeySize
        default:
            // Any other tag (a binary decimal, a reference, a tag added later): decoded and
            // dropped, so this skip never has to know every layout.
            _ = try decodeValue(tag: tag, &r)
        }
        guard r.offset <= r.bytes.count else { throw r.damage("truncated") }
    }
}
