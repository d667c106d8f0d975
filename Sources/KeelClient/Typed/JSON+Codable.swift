// A `json` attribute holding a Codable value — Core Data's transformable attribute, in JSON:
//
//     computer.specs = try JSON(encoding: Specs(cpu: "x86", cores: 8))
//     let specs = try computer.specs?.decode(Specs.self)
//
// Foundation's JSONEncoder and JSONDecoder do the coding; KeelModel's JSON parser reads the bytes,
// so what is stored is exactly the JSON the encoder wrote.

public import Foundation

extension JSON {
    /// The JSON of an `Encodable` value. `TYPE` when it cannot be encoded.
    public init<T: Encodable>(encoding value: T, encoder: JSONEncoder = JSONEncoder()) throws(KeelError) {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw KeelError(.type, "cannot encode \(T.self) as JSON: \(error)")
        }
        self = try JSON.parse([UInt8](data))
    }

    /// The value this JSON encodes. `TYPE` when it does not decode as `T`.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws(KeelError) -> T {
        do {
            return try decoder.decode(T.self, from: Data(serialized().utf8))
        } catch {
            throw KeelError(.type, "cannot decode \(T.self) from \(serialized().prefix(60)): \(error)")
        }
    }
}
