// Everything keeld is told at start (spec/cli.md, "keeld"), and what keelctl reads to find the
// same data folder, model and socket: the configuration file
// (`config/keeld.json` documents every key with its default), then the command-line flags over
// it. Relative paths are relative to the daemon's working directory.
//
// The file is one JSON object; keys starting with `//` are comments and ignored; any other
// unknown key refuses the file (a misspelt key must not silently fall back to a default).
// Reading: ServerConfiguration+Loading.swift.

public import KeelStorage
public import Logging

public struct ServerConfiguration: Sendable {
    /// The Unix socket the daemon listens on.
    public var socketPath: String = ".keel/keeld.sock"
    /// The socket file's permission bits, applied through the umask at bind (never chmod after).
    public var socketMode: UInt32 = 0o660
    /// Peers allowed besides the daemon's own uid and root.
    public var allowedUIDs: [UInt32] = []
    /// Peers that may run admin commands; nil: the daemon's own uid and root.
    public var adminUIDs: [UInt32]? = nil
    /// The data folder: one store file per model configuration (`<Configuration>.keel`), and
    /// the lock file `keeld.lock` that keeps a second daemon out.
    public var dataDirectory: String = ".keel/data"
    /// The model file the daemon serves (spec/model.md).
    public var modelPath: String = "config/model.json"
    /// Page cache per store file, in bytes.
    public var pageCacheBytes: Int = 64 << 20
    /// `full` (fsync before every acknowledgement; the default), `normal` or `off`.
    public var syncMode: SyncMode = .full
    /// Log bytes after which a store checkpoints on its own.
    public var checkpointThresholdBytes: UInt64 = 32 << 20
    /// Whether the checkpoint a SAVE triggers runs on each store's background checkpointer
    /// (true, as an embedded ObjectStore does) or on the thread of the SAVE that triggered it.
    public var checkpointInBackground: Bool = true
    /// History records kept (HISTORY's transactions): the oldest are pruned in each save beyond
    /// this many; nil keeps every one. HISTORY after a pruned one is `EXPIRED`.
    public var historyRetention: Int? = nil
    public var limits = ServerLimits()
    /// Where BACKUP writes its copies (a BACKUP `path` is a name under it).
    public var backupDirectory: String = ".keel/backups"
    /// swift-log level: trace, debug, info, notice, warning, error, critical.
    public var logLevel: Logger.Level = .info
    /// NIO event loop threads; 0: one per core.
    public var eventLoopThreads: Int = 0
    /// After SIGTERM/SIGINT, how long requests under way may take before their connections are
    /// closed anyway (a save already running always completes).
    public var shutdownGraceSeconds: Int = 30

    public init() {}

    /// Whether `uid` may connect: the daemon's own uid, root, or a listed one.
    public func allows(uid: UInt32, daemonUID: UInt32) -> Bool {
        uid == 0 || uid == daemonUID || allowedUIDs.contains(uid)
    }

    /// Whether `uid` may run admin commands.
    public func isAdmin(uid: UInt32, daemonUID: UInt32) -> Bool {
        if let adminUIDs { return adminUIDs.contains(uid) }
        return uid == 0 || uid == daemonUID
    }

    /// The engine settings of every store file.
    public var storeOptions: StoreOptions {
        var options = StoreOptions(syncMode: syncMode)
        options.cacheSizeBytes = pageCacheBytes
        options.checkpointThresholdBytes = checkpointThresholdBytes
        options.checkpointInBackground = checkpointInBackground
        return options
    }
}
