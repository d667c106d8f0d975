// What an engine provides for the object workloads (issue 3, "Figures"; Docs/Performance.md,
// "Object layer"). Keel goes through KeelModel's ObjectStore, SQLite through its C API with the
// same tables, indexes and foreign keys. Each method is one engine-level operation; the harness
// (ObjectRunner.swift) prepares the inputs untimed and times the calls.

protocol ObjectBenchEngine {
    static var name: String { get }
    /// Opens (creating) a fresh store in `directory` (empty, its own) and creates the
    /// departments of `data` (untimed), one transaction.
    /// `plan.keelInlineCheckpoints`: Keel checkpoints on the committing thread (the engine's
    /// default) instead of on the background checkpointer (the object store's), for before/after
    /// runs of the same binary.
    static func open(directory: String, data: EmployeeSet, plan: Plan) throws -> any ObjectBenchStore
}

/// One store of the object workloads. Every method is called from one thread.
protocol ObjectBenchStore: AnyObject {
    /// Builds the inputs of the next `batchInsert` or `saveInserts` from employees `range`, in
    /// the form the engine's API takes (untimed). Keel: one `[field: Value]` per object (the
    /// salary a `Decimal`); SQLite: the salary as its decimal text (names, ints and dates are
    /// bound from the data set as they are).
    func prepare(_ data: EmployeeSet, _ range: Range<Int>)
    /// The prepared employees as one batch: one durable transaction. Keel:
    /// `ObjectStore.batchInsert`; SQLite: BEGIN, one INSERT per row (explicit rowid i+1), COMMIT.
    func batchInsert() throws
    /// The prepared employees through a context: one insert per object, then one durable save.
    /// Keel: `ObjectContext.insert(entity:typedValues:)` per object, then `save()` (one context,
    /// reused from save to save); SQLite: BEGIN, one INSERT per row with the rowid assigned by
    /// SQLite, COMMIT.
    func saveInserts() throws
    /// The same without the context: the change set a context would hand the store. Keel:
    /// `newObjectID` per object, then `ObjectStore.save(ChangeSet)`; SQLite: as `saveInserts`.
    func storeSaveInserts() throws
    /// Fetches employees by their insertion indices (in this order), in one read transaction,
    /// materialising every attribute and the department of each.
    func fetch(_ indices: [Int32]) throws -> ObjectTally
    /// The salary of each employee given by index, as the canonical decimal text (untimed check).
    func salaries(_ indices: [Int32]) throws -> [String]
    /// Whatever a delete needs read first (untimed): Keel reads the department's row, as the
    /// context that deletes it would have it in its snapshot.
    func prepareDelete(_ d: Int) throws
    /// Deletes department `d` with its employees (cascade) in one durable transaction; returns
    /// how many employees the engine says it deleted (-1: it does not say).
    func deleteDepartment(_ d: Int) throws -> Int
    /// How many employees the store holds (untimed check).
    func employeeCount() throws -> Int
    /// How many employees department `d` has (untimed check).
    func employeeCount(department d: Int) throws -> Int
    /// Moves the log into the store file (untimed, before the reads).
    func checkpoint() throws
    /// Waits until work that the last call left running in the background has finished (Keel:
    /// the background checkpointer, `ObjectStore.waitForBackgroundCheckpoints`; SQLite has none).
    /// The insert calls wait for it themselves, inside their timing; after a cascade the harness
    /// calls this untimed, before the other engine's turn, and reports how long it took.
    func waitForBackgroundWork() throws
    var directory: String { get }
    func close() throws
}
