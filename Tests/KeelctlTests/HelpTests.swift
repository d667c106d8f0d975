// keelctl's help text, exactly: the root command (every command, offline and online, exit
// codes) and one command's (import, with its format). An operator keeps a store healthy with
// this and Docs/Operations.md; a change to it is a change to what they read.

import Testing

@Suite("keelctl help")
struct HelpTests {
    @Test("keelctl --help lists every command, offline and online work and the exit codes")
    func root() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let run = try w.keelctl("--help")
        #expect(run.status == 0 && run.stderr.isEmpty)
        #expect(run.stdout == #"""
            OVERVIEW: Administers Keel data folders: compaction, checkpoints, verification,
            statistics, backup and restore, import and export, models, queries; generates
            typed Swift from a model.

            Commands that read or change a store work offline on a data folder (--data DIR,
            default: the dataDirectory of config/keeld.json, else ./.keel/data; refused
            while a keeld holds the folder) or online through a running keeld (--socket
            PATH), with the admin commands of the protocol. Long work shows progress on a
            terminal and stays quiet when standard error is not one.

            Exit codes: 0 success, 1 the operation failed (the reason on standard error;
            for verify: faults were found), 2 bad usage. Docs/Operations.md explains each
            command.

            USAGE: keelctl <subcommand>

            OPTIONS:
              -h, --help              Show help information.

            SUBCOMMANDS:
              compact                 Rewrites every store file without free pages and with
                                      fresh compression; prints bytes before and after.
              checkpoint              Moves every store file's log into its page file and
                                      truncates the log; prints the log bytes before and
                                      after.
              verify                  Checks every page checksum, B+tree invariant, index
                                      against its rows, relationship against its inverse
                                      and unique constraint.
              salvage                 Opens a data folder whose log is damaged, keeping the
                                      transactions before the damage; prints what was
                                      dropped.
              stats                   Prints objects per entity, pages used and free, file
                                      and log bytes, and the compression ratio.
              backup                  Writes a consistent copy of every store file into one
                                      backup file (LZ4-compressed, checksummed).
              restore                 Restores a backup file into an empty data folder and
                                      verifies it before it finishes.
              import                  Inserts the objects of a JSON array or JSON lines
                                      file; relationships refer to objects of the same file
                                      by key.
              export                  Writes every object as JSON lines, to standard output
                                      or --out; `keelctl import` reads them back.
              model                   Validates a model file, or says whether a model
                                      change is a lightweight migration.
              query                   Runs a FETCH and prints the objects as a table.
              history                 Prints the transactions committed after one: when,
                                      and the objects inserted, updated and deleted.
              watch                   Prints each transaction keeld commits, as it happens:
                                      the objects inserted, updated and deleted (online
                                      only).
              codegen                 Writes typed Swift for KeelClient, one file per
                                      entity of a model.

              See 'keelctl help <subcommand>' for detailed help.

            """#)
        #expect(try w.keelctl("help").stdout == run.stdout)
    }

    @Test("keelctl import --help gives the import format and the guarantees")
    func importHelp() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let run = try w.keelctl("import", "--help")
        #expect(run.status == 0 && run.stderr.isEmpty)
        #expect(run.stdout == #"""
            OVERVIEW: Inserts the objects of a JSON array or JSON lines file; relationships
            refer to objects of the same file by key.

            Each object is a JSON object: "$entity" names its entity (else --entity), the
            key field (--key, default "$id") holds its key (a string or an integer, unique
            within its entity hierarchy), attributes take their wire values, a to-one
            relationship takes the key of another object of the file (or null), a to-many
            an array of keys; either side of a link may be written. References go only to
            objects of the same file. What `keelctl export` writes is such a file.

            Everything is checked before anything is written; each problem is named by its
            line and field. Objects are then inserted in saves of --chunk objects (those
            that others require first), with a progress bar. If a save fails, the saves
            already made are undone and the error names the lines of the objects it
            concerns: nothing is left half-imported. FILE "-" reads standard input. Online
            (--socket), inserts go through keeld's BATCH.INSERT, one entity per save; a
            cycle of required relationships must then be imported offline.

            USAGE: keelctl import [--config <file>] [--data <dir>] [--socket <path>] [--model <file>] [--entity <name>] [--key <field>] [--chunk <n>] <file>

            ARGUMENTS:
              <file>                  The file to import (a JSON array of objects, or one
                                      object per line).

            OPTIONS:
              --config <file>         keeld's configuration file; keelctl takes the data
                                      folder, model, socket and store settings from it
                                      (default: config/keeld.json when it exists).
              --data <dir>            Work offline on this data folder (default: the
                                      configuration's dataDirectory, .keel/data). Refused
                                      while a keeld holds it.
              --socket <path>         Work online through the keeld listening on this
                                      socket.
              --model <file>          Offline: the model to open the data folder with
                                      (default: the configuration's modelPath,
                                      config/model.json, when that file exists; else the
                                      model the folder was created with).
              --entity <name>         The entity of objects without "$entity".
              --key <field>           The member holding each object's key: "$id" (not
                                      stored), or an attribute's name (stored too).
                                      (default: $id)
              --chunk <n>             Objects per save. (default: 5000)
              -h, --help              Show help information.


            """#)
        #expect(try w.keelctl("help", "import").stdout == run.stdout)
    }
}
