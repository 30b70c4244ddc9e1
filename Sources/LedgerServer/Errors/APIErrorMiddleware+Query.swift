internal import Foundation
import HTTPTypes
import Ledger
internal import OpenAPIRuntime

/// The generated decoders refuse a bad query parameter with an error that does not name it (an empty coding
/// path, or the runtime's "missing required query parameter"). The contract promises errors that name the
/// parameter, so the middleware finds it in the request's query.
extension APIErrorMiddleware {
    /// The 400 naming the query parameter `error` is about, or nil when `error` is not about one.
    static func queryParameterError(for error: any Error, query: String?) -> APIError? {
        // The ledger refusing a value the request gave as a query parameter (a window backwards, a token prefix
        // that is not hex, a cursor it did not hand out): the request's mistake in that parameter, not an event's.
        if let refusal = (error as? LedgerError) ?? ((error as? ServerError)?.underlyingError as? LedgerError),
            refusal.code == .badInput, let field = refusal.field,
            queryItems(query)?.contains(where: { $0.name == field }) == true
        {
            return APIError(status: .badRequest, code: "invalidParameter", message: refusal.message, field: field)
        }
        guard let serverError = error as? ServerError else { return nil }
        let underlying = serverError.underlyingError
        let missingPrefix = "Missing required query parameter named: "
        let described = String(describing: underlying)
        if described.hasPrefix(missingPrefix) {
            let name = String(described.dropFirst(missingPrefix.count))
            return .invalidParameter(name, "missing; this query parameter is required")
        }
        guard let decoding = underlying as? DecodingError, let items = queryItems(query), !items.isEmpty else {
            return nil
        }
        switch decoding {
        case .typeMismatch(let type, let context) where context.codingPath.isEmpty:
            let integral = type == Int.self || type == Int64.self
            let wanted = integral ? "an integer" : "a number"
            let bad = items.first { item in
                guard let value = item.value else { return true }
                return integral ? Int64(value) == nil : Double(value) == nil
            }
            guard let bad, type == Int.self || type == Int64.self || type == Double.self else { return nil }
            return .invalidParameter(bad.name, "expected \(wanted), got '\(bad.value ?? "")'")
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            // "Cannot initialize Phase from invalid String value bogus"
            guard let range = context.debugDescription.range(of: "invalid String value ") else { return nil }
            let value = String(context.debugDescription[range.upperBound...])
            guard let bad = items.first(where: { $0.value == value }) else { return nil }
            return .invalidParameter(bad.name, unknownEnumValue(context.debugDescription) ?? "got '\(value)'")
        default:
            return nil
        }
    }

    /// The generated decoders' "Cannot initialize Phase from invalid String value asleep", said the way the
    /// ledger says it (SPEC §2: an unknown enum value is refused like a wrong type, naming what is allowed).
    static func unknownEnumValue(_ description: String) -> String? {
        let prefix = "Cannot initialize ", middle = " from invalid String value "
        guard description.hasPrefix(prefix), let range = description.range(of: middle) else { return nil }
        let type = description[description.index(description.startIndex, offsetBy: prefix.count)..<range.lowerBound]
        let value = description[range.upperBound...]
        let allowed: [String]
        switch type {
        case "EventType": allowed = Components.Schemas.EventType.allCases.map(\.rawValue)
        case "Source": allowed = Components.Schemas.Source.allCases.map(\.rawValue)
        case "Phase": allowed = Components.Schemas.Phase.allCases.map(\.rawValue)
        default: return "unknown value \"\(value)\""
        }
        return "expected one of \(allowed.joined(separator: ", ")), got \"\(value)\""
    }

    /// Name/value pairs of a raw query, decoded as the generated decoders read it — `+` is a space (form
    /// encoding), then percent escapes where they are valid — never trapping on bad input. (Found: `?after=+3`
    /// was refused by the generated decoder as `" 3"` but looked like `+3`, a valid integer, here, so the 400
    /// named no parameter.)
    private static func queryItems(_ query: String?) -> [URLQueryItem]? {
        guard let query, !query.isEmpty else { return nil }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = QueryText.decode
            return URLQueryItem(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : nil)
        }
    }
}
