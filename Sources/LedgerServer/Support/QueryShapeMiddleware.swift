import ActivityModel
internal import Foundation
import HTTPTypes
import Hummingbird

/// One pass over a request's query before anything runs, for what the generated decoders get wrong or say
/// badly (each found by a probe):
/// - a parameter given twice is refused, naming it (the decoders took the first: `?expectedVersion=0&
///   expectedVersion=5` appended as if only 0 were sent);
/// - a bare name (`?after`, `?foo`) or a pair with no name (`?=3`) is refused naming it (the decoders answered
///   400 "Unknown"); empty items (`?after=0&&limit=1`, a leading `&`) are dropped, as a trailing one already was;
/// - a numeric parameter must be a JSON number literal, an integer one a JSON integer (`wait=0x2`,
///   `wait=1%00junk` and `after=%2B3` were taken: Swift's number parsing reads hex, stops at a NUL, takes a `+`).
///   `numericParameters` lists them; a test holds it equal to the schema's integer and number query parameters.
struct QueryShapeMiddleware<Context: RequestContext>: RouterMiddleware {
    enum Numeric { case integer, number }
    static var numericParameters: [String: Numeric] {
        ["after": .integer, "expectedVersion": .integer, "limit": .integer, "wait": .number]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let query = request.uri.query, !query.isEmpty else { return try await next(request, context) }
        let items = query.split(separator: "&", omittingEmptySubsequences: false)
        try Self.check(items)
        guard items.dropLast().contains(where: \.isEmpty) else { return try await next(request, context) }
        var head = request.head
        head.path = request.uri.path + "?" + items.filter { !$0.isEmpty }.joined(separator: "&")
        return try await next(Request(head: head, body: request.body), context)
    }

    /// Refuses the first item of a query that is not a `name=value` pair the API can read (see the type).
    static func check(_ items: [Substring]) throws(APIError) {
        var seen = Set<[UInt8]>()
        for item in items where !item.isEmpty {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = QueryText.decode(parts[0])
            guard parts.count == 2 else { throw .invalidParameter(name, "no value; send \(name)=VALUE") }
            guard !name.isEmpty else {
                throw APIError(
                    status: .badRequest, code: "invalidParameter",
                    message: "query: a parameter without a name ('\(item)')", field: "query")
            }
            if !seen.insert(Array(name.utf8)).inserted {
                throw .invalidParameter(name, "given more than once; send it once")
            }
            if let numeric = numericParameters[name] {
                let value = QueryText.decode(parts[1])
                // An empty value is the generated decoder's to name ("expected an integer, got ''").
                if !value.isEmpty, let problem = numberProblem(value, numeric) { throw .invalidParameter(name, problem) }
            }
        }
    }

    /// Why `value` is not a number of that kind in JSON's grammar, or nil.
    static func numberProblem(_ value: String, _ kind: Numeric) -> String? {
        let wanted = kind == .integer ? "an integer" : "a number"
        // JSON allows whitespace around a value; a query value has none to allow.
        guard let first = value.first, first == "-" || (first.isASCII && first.isNumber),
            value.last?.isWhitespace == false, case .number(let number)? = try? JSONParser.parse(value),
            kind == .number || number.description.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") })
        else { return "expected \(wanted), got '\(value)'" }
        return nil
    }
}

enum QueryText {
    /// A query name or value as the generated decoders read it: `+` is a space, then percent escapes where valid.
    static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
