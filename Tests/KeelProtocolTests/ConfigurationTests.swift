// keeld's configuration file (ServerConfiguration+Loading.swift): keys reach the store settings,
// a wrong kind of value is refused with the key's name, unknown keys are refused.

import KeelModel
import KeelStorage
import Testing

@testable import KeelProtocol

@Suite("keeld configuration")
struct ConfigurationTests {
    static func load(_ text: String) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        try configuration.apply(try JSON.parse(Array(text.utf8)), source: "test.json")
        return configuration
    }

    @Test("the store settings come from the file; background checkpoints are on unless turned off")
    func storeSettings() throws {
        let defaults = ServerConfiguration().storeOptions
        #expect(defaults.checkpointInBackground)
        #expect(defaults.syncMode == .full && defaults.checkpointThresholdBytes == 32 << 20)

        let set = try Self.load(#"{"checkpointInBackground": false, "checkpointThresholdBytes": 65536, "syncMode": "normal", "pageCacheBytes": 1048576}"#)
        let options = set.storeOptions
        #expect(!options.checkpointInBackground)
        #expect(options.checkpointThresholdBytes == 65536 && options.syncMode == .normal && options.cacheSizeBytes == 1 << 20)
        #expect(try Self.load(#"{"checkpointInBackground": true}"#).storeOptions.checkpointInBackground)
    }

    @Test("historyRetention: null keeps every record (the default), a count from 0 keeps that many, anything else is refused")
    func historyRetention() throws {
        #expect(ServerConfiguration().historyRetention == nil)
        #expect(try Self.load(#"{"historyRetention": null}"#).historyRetention == nil)
        #expect(try Self.load(#"{"historyRetention": 0}"#).historyRetention == 0)
        #expect(try Self.load(#"{"historyRetention": 100000}"#).historyRetention == 100_000)
        for bad in [#"-1"#, #""ten""#, #"1.5"#, #"true"#] {
            do {
                _ = try Self.load(#"{"historyRetention": "# + bad + "}")
                Issue.record("historyRetention \(bad) was accepted")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("historyRetention must be an integer from 0"), "\(error.message)")
            }
        }
    }

    @Test("every bad value is named in one error, and nothing is applied from a refused file")
    func badValues() throws {
        do {
            _ = try Self.load(#"{"checkpointInBackground": "yes", "checkpointThresholdBytes": 12, "colour": 1, "//note": "fine"}"#)
            Issue.record("a bad configuration was accepted")
        } catch let error as ConfigurationError {
            #expect(error.message.hasPrefix("test.json: "))
            #expect(error.message.contains("checkpointInBackground must be true or false"))
            #expect(error.message.contains("checkpointThresholdBytes must be an integer from 65536 up"))
            #expect(error.message.contains("unknown key \"colour\""))
        }
    }
}
