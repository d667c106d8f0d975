// Reading the configuration file: every key of `config/keeld.json`, each checked for its kind
// and range; every problem is reported at once, one line. keeld and keelctl read the same file
// (keelctl for the data folder, model, socket and store settings).

import Foundation
public import KeelModel
import KeelStorage
import Logging

/// Why a configuration file cannot be used: one line naming every problem.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension ServerConfiguration {
    /// The default configuration file, relative to the working directory.
    public static let defaultFile = "config/keeld.json"

    /// What keeld and keelctl start from: `file` when given, else `config/keeld.json` when it
    /// exists, else the defaults.
    public static func resolve(file: String?) throws(ConfigurationError) -> ServerConfiguration {
        if let file { return try load(path: file) }
        if FileManager.default.fileExists(atPath: defaultFile) { return try load(path: defaultFile) }
        return ServerConfiguration()
    }

    /// Reads `path` over the defaults. Throws a one-line `ConfigurationError` naming every problem.
    public static func load(path: String) throws(ConfigurationError) -> ServerConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError("cannot read the configuration file \(path): \(error.localizedDescription)")
        }
        let json: JSON
        do {
            json = try JSON.parse([UInt8](data))
        } catch {
            throw ConfigurationError("\(path): \(error.message)")
        }
        var configuration = ServerConfiguration()
        try configuration.apply(json, source: path)
        return configuration
    }

    /// Applies the keys of a configuration object over the current values.
    public mutating func apply(_ json: JSON, source: String) throws(ConfigurationError) {
        guard let members = json.objectValue else {
            throw ConfigurationError("\(source): the configuration must be a JSON object")
        }
        var problems = ProblemReport()
        func string(_ key: String, _ value: JSON) -> String? {
            if let s = value.stringValue, !s.isEmpty { return s }
            problems.add("\(key) must be a non-empty string")
            return nil
        }
        func integer(_ key: String, _ value: JSON, min: Int64, max: Int64 = Int64.max) -> Int64? {
            if let i = value.intValue, i >= min, i <= max { return i }
            problems.add("\(key) must be an integer from \(min)" + (max == Int64.max ? " up" : " to \(max)"))
            return nil
        }
        func uids(_ key: String, _ value: JSON) -> [UInt32]? {
            guard let items = value.arrayValue else {
                problems.add("\(key) must be an array of uids")
                return nil
            }
            var out: [UInt32] = []
            for item in items {
                guard let uid = item.intValue, uid >= 0, uid <= Int64(UInt32.max) else {
                    problems.add("\(key) must hold uids (integers from 0)")
                    return nil
                }
                out.append(UInt32(uid))
            }
            return out
        }
        for (key, value) in members where !key.hasPrefix("//") {
            switch key {
            case "socketPath":
                if let s = string(key, value) { socketPath = s }
            case "socketMode":
                if let s = value.stringValue, let mode = UInt32(s, radix: 8), mode <= 0o777 {
                    socketMode = mode
                } else {
                    problems.add("socketMode must be an octal string such as \"0660\"")
                }
            case "allowedUIDs":
                if let list = uids(key, value) { allowedUIDs = list }
            case "adminUIDs":
                if value.isNull { adminUIDs = nil } else if let list = uids(key, value) { adminUIDs = list }
            case "dataDirectory":
                if let s = string(key, value) { dataDirectory = s }
            case "modelPath":
                if let s = string(key, value) { modelPath = s }
            case "pageCacheBytes":
                if let i = integer(key, value, min: 1 << 16) { pageCacheBytes = Int(i) }
            case "syncMode":
                if let s = value.stringValue, let mode = SyncMode(rawValue: s) {
                    syncMode = mode
                } else {
                    problems.add("syncMode must be \"full\", \"normal\" or \"off\"")
                }
            case "checkpointThresholdBytes":
                if let i = integer(key, value, min: 1 << 16) { checkpointThresholdBytes = UInt64(i) }
            case "checkpointInBackground":
                if let b = value.boolValue { checkpointInBackground = b } else { problems.add("checkpointInBackground must be true or false") }
            case "historyRetention":
                if value.isNull { historyRetention = nil } else if let i = integer(key, value, min: 0, max: Int64(Int32.max)) { historyRetention = Int(i) }
            case "limits":
                applyLimits(value, &problems)
            case "backupDirectory":
                if let s = string(key, value) { backupDirectory = s }
            case "logLevel":
                if let s = value.stringValue, let level = Logger.Level(rawValue: s) {
                    logLevel = level
                } else {
                    let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                    problems.add("logLevel must be one of \(names)")
                }
            case "eventLoopThreads":
                if let i = integer(key, value, min: 0, max: 256) { eventLoopThreads = Int(i) }
            case "shutdownGraceSeconds":
                if let i = integer(key, value, min: 0, max: 86_400) { shutdownGraceSeconds = Int(i) }
            default:
                problems.add("unknown key \"\(key)\" (config/keeld.json lists every key)")
            }
        }
        guard problems.isEmpty else {
            throw ConfigurationError("\(source): " + problems.listing())
        }
    }

    private mutating func applyLimits(_ value: JSON, _ problems: inout ProblemReport) {
        guard let members = value.objectValue else {
            problems.add("limits must be an object")
            return
        }
        for (key, item) in members where !key.hasPrefix("//") {
            guard let path = ServerLimits.keys.first(where: { $0.0 == key })?.1 else {
                problems.add("unknown key \"limits.\(key)\" (config/keeld.json lists every key)")
                continue
            }
            guard let i = item.intValue, i >= 1, i <= Int64(Int32.max) else {
                problems.add("limits.\(key) must be a positive integer")
                continue
            }
            limits[keyPath: path] = Int(i)
        }
    }
}
