// keel-example: the flows of the classic Core Data tutorials (the seeds: Company / Department /
// Employee, a JSON import, delete rules, two stores linked by a fetched property), on the sample
// model config/model.json, through the typed client API. It runs against a running keeld
// (`--socket`, default .keel/keeld.sock: start `make run` in another terminal) or, with
// `--embedded DIR`, on a data folder in this process — the one line that differs is the one that
// opens the store (`open()` below); every flow is the same code.
//
// Each run first removes what an earlier run left (its company, departments, books), so it can
// run again and again against the same store.

import ArgumentParser
import Foundation
import KeelClient
import KeelSampleModel

@main
struct KeelExample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keel-example",
        abstract: "Runs the classic Core Data tutorial flows on Keel's sample model.",
        discussion: """
            Against a running keeld (start `make run` in another terminal), or embedded with \
            --embedded DIR (no daemon; DIR must not be served by a keeld at the same time).
            """)

    @Option(name: .long, help: "keeld's socket.")
    var socket = ".keel/keeld.sock"

    @Option(name: .long, help: "Open this data folder in this process instead of connecting to keeld.")
    var embedded: String?

    @Option(name: .long, help: "The model file (with --embedded; keeld serves its own).")
    var model = "config/model.json"

    @Option(name: .customLong("data-file"), help: "The departments and employees to import.")
    var dataFile = "config/examples/company.json"

    func run() async throws {
        let data: CompanyData
        do {
            data = try JSONDecoder().decode(CompanyData.self, from: Data(contentsOf: URL(fileURLWithPath: dataFile)))
        } catch {
            throw ExampleFailure("cannot read the data file \(dataFile): \(error)")
        }
        let store: KeelStore
        do {
            store = try await open()
        } catch {
            let hint = error.code == .unavailable ? " — is keeld running? (`make run` starts it; or use --embedded DIR)" : ""
            throw ExampleFailure("cannot open the store: \(error.message)\(hint)")
        }
        do {
            try await Flows(store: store, data: data).runAll()
            try await store.close()
        } catch {
            try? await store.close()
            throw ExampleFailure("\(error)")
        }
    }

    /// The one line that differs between embedded and daemon.
    private func open() async throws(KeelError) -> KeelStore {
        if let embedded {
            print("Opening \(embedded) embedded (model \(model))")
            return try await KeelStore.open(dataFolder: embedded, model: model)
        }
        print("Connecting to keeld at \(socket)")
        return try await KeelStore.connect(socket: socket, clientName: "keel-example")
    }
}

/// A failure of a flow: printed as one line, exit 1.
struct ExampleFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// config/examples/company.json.
struct CompanyData: Decodable {
    struct CompanyInfo: Decodable {
        let name: String
        let website: String?
        let founded: String?
    }

    struct DepartmentJSON: Decodable {
        let id: Int
        let name: String
    }

    struct EmployeeJSON: Decodable {
        let name: String
        let age: Int16
        let address: String?
        let salary: String
        /// 0: none.
        let department: Int
        let gender: String?
    }

    let company: CompanyInfo
    let departments: [DepartmentJSON]
    let employees: [EmployeeJSON]
}
