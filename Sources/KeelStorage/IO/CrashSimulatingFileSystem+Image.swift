// Building the disk image a crash leaves: drop, keep or torn, as the model in
// CrashSimulatingFileSystem.swift describes.

extension CrashSimulatingFileSystem {
    /// What the disk holds after a crash now (or at the armed crash, once it has happened), as a
    /// fresh in-memory file system. `seed` chooses what survives in `.torn` mode and is ignored
    /// otherwise. Does not change this file system; call it as often as wanted.
    public func crashedImage(mode: CrashMode, seed: UInt64 = 0) -> InMemoryFileSystem {
        let files = state.withLock { s in Self.image(of: s, mode: mode, seed: seed) }
        return InMemoryFileSystem(files: files)
    }

    /// The surviving files, path → contents.
    static func image(of s: CrashSimulationState, mode: CrashMode, seed: UInt64) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        switch mode {
        case .keep:
            for (path, inode) in s.liveNames { files[path] = s.inodes[inode]?.live.bytes ?? [] }
        case .drop:
            for (path, inode) in s.durableNames { files[path] = s.inodes[inode]?.durable.bytes ?? [] }
        case .torn:
            var random = SeededRandom(seed: seed)
            var names = s.durableNames
            for entry in s.pendingDirectoryChanges where random.coin() {
                CrashSimulationState.apply(entry.change, to: &names)
            }
            // Files in creation order (inode numbers), so the coins fall the same way every time.
            let byInode = Dictionary(grouping: names.keys, by: { names[$0] ?? 0 })
            for inode in byInode.keys.sorted() {
                guard let node = s.inodes[inode] else { continue }
                let bytes = torn(node, using: &random).bytes
                for path in byInode[inode] ?? [] { files[path] = bytes }
            }
        }
        return files
    }

    /// A file's durable image with a random part of its pending changes applied.
    static func torn(_ node: CrashSimulationState.Inode, using random: inout SeededRandom) -> FileImage {
        var image = node.durable
        for change in node.pending {
            switch change {
            case .resize(let size):
                if random.coin() { image.resize(to: size) }
            case .write(let offset, let bytes):
                // Cut at the file's sector boundaries; each piece survives or not.
                var start = 0
                while start < bytes.count {
                    let position = offset + UInt64(start)
                    let sectorEnd = (position / UInt64(sectorSize) + 1) * UInt64(sectorSize)
                    let end = min(bytes.count, start + Int(sectorEnd - position))
                    if random.coin() { image.write(Array(bytes[start..<end]), at: position) }
                    start = end
                }
            }
        }
        return image
    }
}

extension SeededRandom {
    /// A fair coin.
    mutating func coin() -> Bool { next() & 1 == 1 }
}
