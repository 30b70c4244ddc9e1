import PostgresNIO

/// What an append writes beside its events, in the same statement (`PostgresEventLog.append(_:alongside:)`): the
/// ledger's projection rows. Its SQL is a list of common table expressions, each starting with a comma
/// (`, name AS (…)`), appended after the log's own in the append's `WITH`; each must write only
/// `WHERE EXISTS (SELECT 1 FROM head)`, the condition the log's own parts write under (the head still the one
/// the batch was planned on). Its placeholders are numbered from the number given, in the order `bind` appends
/// their values.
package protocol PostgresWriteParts: Sendable {
    static func sql(placeholdersFrom first: Int) -> String
    func bind(into bindings: inout PostgresBindings) throws
    /// Called once the statement that wrote the parts has committed (an append outside any transaction), never
    /// for a write inside a transaction that may still roll back.
    func committed()
}

extension PostgresWriteParts {
    package func committed() {}
}

/// Nothing beside the events (the log alone).
struct NoWriteParts: PostgresWriteParts {
    static func sql(placeholdersFrom first: Int) -> String { "" }
    func bind(into bindings: inout PostgresBindings) throws {}
}
