// KeelClient re-exports KeelModel: an application that imports KeelClient names `KeelError`,
// `JSON`, `Model`, `MergePolicy` and the attribute types without a second import (and the
// generated entity files need only `import KeelClient`).

@_exported public import KeelModel
