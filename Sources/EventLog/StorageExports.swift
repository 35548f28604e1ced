// The log is read and written through `Storage`'s file system: its callers name `FileSystem`,
// `StorageFile` and `StorageError` with the log's other types.
@_exported import Storage
