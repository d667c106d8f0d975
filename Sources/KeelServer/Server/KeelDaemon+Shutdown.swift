// The daemon's clean stop (the order is in KeelDaemon.swift's header).

import KeelModel
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension KeelDaemon {
    func shutdown() async {
        logger.info("shutting down")
        server.beginShutdown()
        try? await channel.close()

        // Requests already read finish; later ones are answered BUSY (by the loop or the thread).
        let links = server.liveConnections
        let grace = Duration.seconds(configuration.shutdownGraceSeconds)
        let timer = Task { [server, logger] in
            try await Task.sleep(for: grace)
            logger.warning("requests still running after the grace period; closing their connections")
            for link in server.liveConnections { link.close() }
        }
        await withTaskGroup(of: Void.self) { barriers in
            for link in links {
                barriers.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        link.worker.submit(.barrier(reached: { done.resume() }))
                    }
                }
            }
        }
        timer.cancel()
        for link in server.liveConnections { link.closeAfterPendingWrites() }
        // The store closes only when no connection thread can touch it any more.
        while server.runningSessionCount > 0 {
            try? await Task.sleep(for: .milliseconds(5))
        }
        await closeStore()
        server.descriptors.closeSpare()
        removeSocketFile()
        try? await group.shutdownGracefully()
        try? await blocking.shutdownGracefully()
        logger.info("stopped")
    }

    /// Checkpoints and closes the store, then unlocks the data folder, on the blocking pool.
    private func closeStore() async {
        server.events.detach()
        let folder = self.folder
        let logger = self.logger
        do {
            try await blocking.runIfActive {
                if let failure = try folder.close() {
                    logger.error("checkpoint at shutdown failed", metadata: ["error": "\(failure)"])
                }
            }
        } catch {
            logger.error("closing the store failed", metadata: ["error": "\(error)"])
        }
    }

    /// Removes the socket file if it is still the one this daemon bound.
    private func removeSocketFile() {
        let path = configuration.socketPath
        guard let socketInode, SocketPreparation.inode(of: path) == socketInode else { return }
        unlink(path)
    }
}
