/// How commits reach the disk. Each mode says exactly what a crash can lose.
public enum SyncMode: String, Sendable, CaseIterable, Codable {
    /// The log is fdatasynced before `write { }` returns (commits share syncs: group commit).
    /// A crash of the process, the OS or the power loses nothing that was acknowledged. The default.
    case full
    /// Commits are written to the log but not synced; the log is synced before each checkpoint
    /// copies it into the page file. A process crash loses nothing (the OS has the data); an OS
    /// crash or power loss can lose the commits since the last checkpoint, never more, and the
    /// store stays consistent (a suffix of transactions is lost, none is torn).
    case normal
    /// Nothing is ever synced. A process crash loses nothing; an OS crash or power loss can lose
    /// any commit and can leave the page file damaged (verify finds it). For throwaway data.
    case off
}

/// Settings of a store, fixed when it is opened. `pageSize` matters only when a store is created.
public struct StoreOptions: Sendable {
    /// Page size for a new store: a power of two from 4096 to 65536. Existing stores keep theirs.
    public var pageSize: Int = 4096
    /// Upper bound of the page cache in bytes (clean pages; a writer's dirty pages and pages a
    /// live transaction holds are never evicted).
    public var cacheSizeBytes: Int = 64 << 20
    public var syncMode: SyncMode = .full
    /// A checkpoint runs after a commit once the log holds more than this many bytes of frames
    /// (while readers keep one from emptying the log, again only after every further quarter).
    public var checkpointThresholdBytes: UInt64 = 32 << 20
    /// When the log holds more than this and a reader's old snapshot blocks the checkpoint, that
    /// reader is cut off (`snapshotTooOld`) so the log cannot grow without bound (the automatic
    /// checkpoint that does it runs within a quarter of `checkpointThresholdBytes` past it).
    public var maxLogBytes: UInt64 = 512 << 20
    /// Run the automatic checkpoint on a background thread (BackgroundCheckpointer.swift): the
    /// commit that passes the threshold returns once it is durable, and the checkpoint follows on
    /// another thread (commits wait for it only if they come while it runs: it holds the writer
    /// lock). Off: the committer runs it before its `write` returns. Off by default for the engine
    /// (its tests step through checkpoints one file operation at a time); the object store and
    /// keeld turn it on (`ObjectStoreOptions`, keeld's `checkpointInBackground` setting).
    public var checkpointInBackground = false
    /// The log file grows in steps of this many bytes (allocated and zero-filled up front).
    public var logPreallocationBytes: UInt64 = 8 << 20
    /// Compress log frames with LZ4 when that saves at least 1/8 of a page. Off by default: LZ4
    /// runs at about 400 MB/s on one core of the development machines, slower than their disks
    /// take the log (500–800 MB/s with fdatasync), so compressing a page costs more than the
    /// write it saves — measured on the object workloads (Docs/Performance.md, "Object layer").
    /// Turn it on for slow devices (network storage, disks); frames carry their own flag, so a
    /// log may mix both and either setting reads any log.
    public var compressLog = false
    /// Open without writing anything; write transactions throw `.readOnly`.
    public var readOnly = false
    /// Open a store whose log is damaged in the middle (frames after the damage record that
    /// later transactions had been made durable, so the open otherwise fails with `CORRUPT`) by
    /// keeping the transactions before the damage: the ones after it are lost. For `keelctl
    /// salvage`; `Store.logDamage` says what was dropped. Nothing is dropped from a sound log.
    public var salvageLog = false
    /// The file layer (the real one by default; tests pass in-memory, fault-injecting and
    /// crash-simulating ones).
    public var fileSystem: any FileSystem = PosixFileSystem()

    public init() {}

    public init(syncMode: SyncMode) { self.syncMode = syncMode }
}
