import ActivityModel
internal import Foundation
import NIOCore

/// The body of `POST /v1/events` or `POST /v1/batches`, parsed once with the ledger's own JSON parser, when
/// it plainly passes everything the generated OpenAPI decoder and the handler check before the ledger: the
/// `Event`/`Batch` schemas (required members present and not null, string and enum types, `data` an object,
/// `expectedVersions` non-negative integers) and the `at` rule of ``LedgerAPI/checkTime(_:field:)``.
///
/// nil means "not plainly valid", never "invalid": the caller then hands the request to the generated
/// handler, which refuses it with today's exact 400 (or accepts an unusual but valid form). So this check
/// may be stricter than the schema — an exponent in `at`, a key given twice go the slow way —
/// but must never be looser.
struct RawAppendBody: Sendable {
    /// One interchange object per event, in request order, as the client sent it.
    var events: [ActivityModel.JSONValue]
    var expectedVersions: [String: Int64]

    /// `POST /v1/events` with an optional, already validated `?expectedVersion=`.
    static func single(_ document: ActivityModel.JSONValue?, expectedVersion: Int64?) -> RawAppendBody? {
        guard let event = document, isPlainEvent(event), case .string(let stream)? = event["stream"] else {
            return nil
        }
        return RawAppendBody(events: [event], expectedVersions: expectedVersion.map { [stream: $0] } ?? [:])
    }

    /// `POST /v1/batches`.
    /// How many events a batch body holds, when it is an object with an `events` array (our parser: linear).
    static func eventCount(_ document: ActivityModel.JSONValue?) -> Int? {
        guard case .object(let root)? = document, case .array(let events)? = root["events"] else { return nil }
        return events.count
    }

    static func batch(_ document: ActivityModel.JSONValue?) -> RawAppendBody? {
        guard case .object(let root)? = document, !hasDuplicateKeys(root) else { return nil }
        guard case .array(let events)? = root["events"], !events.isEmpty, events.count <= LedgerAPI.maxBatchEvents,
            events.allSatisfy(isPlainEvent),
            root.members.allSatisfy({ $0.key == "events" || isPlainValue($0.value, depth: 1) })
        else { return nil }
        var expectedVersions: [String: Int64] = [:]
        switch root["expectedVersions"] {
        case nil, .null?:
            break
        case .object(let versions)?:
            guard !hasDuplicateKeys(versions) else { return nil }
            for member in versions.members {
                guard case .number(let number) = member.value, let version = plainInteger(number.text), version >= 0
                else { return nil }
                expectedVersions[member.key] = version
            }
        default:
            return nil
        }
        return RawAppendBody(events: events, expectedVersions: expectedVersions)
    }

    /// A query's `expectedVersion` when the query is exactly that one plain non-negative integer (or empty:
    /// `.some(nil)`); anything else is nil, for the generated handler to judge.
    static func expectedVersion(query: String?) -> Int64?? {
        guard let query, !query.isEmpty else { return .some(nil) }
        let prefix = "expectedVersion="
        guard query.hasPrefix(prefix), let version = plainInteger(String(query.dropFirst(prefix.count))),
            version >= 0
        else { return nil }
        return .some(version)
    }

    /// The request body as the ledger's parser reads it (``RawAppendMiddleware``), for the generated handler of the
    /// same request: it appends these values, not the generated types written back out by `JSONEncoder`, which
    /// sorted keys and re-formatted numbers (`1.5e3` was stored as `1500`, so `contentHash` over the JSON as
    /// sent no longer matched, and an event read back otherwise than `import` stores it).
    @TaskLocal static var sentDocument: ActivityModel.JSONValue?

    /// `body` parsed by the ledger's parser, or why it is not JSON and where (`unpaired surrogate at byte 21`):
    /// the generated decoder says only "The given data was not valid JSON."
    static func parsed(_ body: ByteBuffer) -> Result<ActivityModel.JSONValue, JSONParseError> {
        body.withUnsafeReadableBytes { bytes in Result { () throws(JSONParseError) in try JSONParser.parse(bytes) } }
    }

    /// The first `expectedVersions` entry that is not a non-negative 64-bit integer, as the 400 naming it (the
    /// generated decoder called `0.5` or `2^63` there malformed JSON).
    static func expectedVersionsProblem(_ document: ActivityModel.JSONValue?) -> (field: String, message: String)? {
        guard case .object(let root)? = document, case .object(let versions)? = root["expectedVersions"] else {
            return nil
        }
        for member in versions.members {
            // `1e2` or `5.0` included: integral and in range, left to the generated decoder to judge as it always did.
            if case .number(let number) = member.value, holdsInt64(number), number.doubleValue >= 0 { continue }
            let field = "expectedVersions['\(member.key)']"
            let found = member.value.numberValue?.text ?? member.value.kindName
            return (field, "field \(field): expected a stream version (an integer from 0 to 2^63-1), got \(found)")
        }
        return nil
    }

    /// The integer members of an APNs exchange (`response.status`, `response.timestamp`) holding a number that is
    /// no integer the generated decoder can hold (`200.5`, `1e30`): it refused those with "The given data was not
    /// valid JSON.", naming nothing. Other types and ranges are left to it (it names those).
    static func apnsIntegerProblem(_ document: ActivityModel.JSONValue?) -> (field: String, message: String)? {
        guard case .object(let root)? = document, case .object(let response)? = root["response"] else { return nil }
        for name in ["status", "timestamp"] {
            guard case .number(let number)? = response[name], !holdsInt64(number) else { continue }
            let field = "response.\(name)"
            return (field, "field '\(field)': expected an integer, got \(number.text)")
        }
        return nil
    }

    /// Whether `number` is an integer an `Int64` holds, written plainly (`5`) or not (`1e2`, `5.0`).
    private static func holdsInt64(_ number: ActivityModel.JSONNumber) -> Bool {
        if Int64(number.text) != nil { return true }
        let value = number.doubleValue
        return value.rounded() == value && value >= -0x1p63 && value < 0x1p63
    }

    /// Members the generated `Event` decoder reads; others it ignores, and so does the ledger.
    private static func isPlainEvent(_ value: ActivityModel.JSONValue) -> Bool {
        guard case .object(let object) = value, !hasDuplicateKeys(object) else { return false }
        guard case .string? = object["stream"],
            case .string(let type)? = object["type"], Components.Schemas.EventType(rawValue: type) != nil,
            case .object? = object["data"], object.members.allSatisfy({ isPlainValue($0.value, depth: 1) })
        else { return false }
        switch object["at"] {
        case .string(let text)?:
            guard (try? LedgerAPI.checkTime(.case1(text), field: "at")) != nil else { return false }
        case .number(let number)?:
            guard let seconds = plainDouble(number.text),
                (try? LedgerAPI.checkTime(.case2(seconds), field: "at")) != nil
            else { return false }
        default:
            return false
        }
        switch object["id"] {
        case nil, .null?: break
        case .string(let id)? where LedgerAPI.isValidID(id): break
        default: return false
        }
        switch object["source"] {
        case nil, .null?: break
        case .string(let source)? where Components.Schemas.Source(rawValue: source) != nil: break
        default: return false
        }
        return true
    }

    /// `data` (and any member the decoder skips) holds any JSON; what `JSONDecoder` might read differently
    /// goes the slow way.
    /// Any JSON the generated decoder reads as "any value" (`data`): every depth the parser took (it stops at 512,
    /// as Foundation's decoder does) and every number a double holds. (Until a probe found it, nesting past 64 or an
    /// exponent went to the generated decoder, whose bound on work refused a small valid event that `import` stores.)
    private static func isPlainObject(_ object: JSONObject, depth: Int) -> Bool {
        guard !hasDuplicateKeys(object) else { return false }
        return object.members.allSatisfy { isPlainValue($0.value, depth: depth) }
    }

    private static func isPlainValue(_ value: ActivityModel.JSONValue, depth: Int) -> Bool {
        switch value {
        case .null, .bool, .string: return true
        case .number(let number): return number.doubleValue.isFinite
        case .object(let object): return isPlainObject(object, depth: depth + 1)
        case .array(let elements): return elements.allSatisfy { isPlainValue($0, depth: depth + 1) }
        }
    }

    private static func hasDuplicateKeys(_ object: JSONObject) -> Bool {
        let members = object.members
        if members.count <= 12 {
            for i in members.indices {
                for j in members.indices where j > i && members[i].key == members[j].key { return true }
            }
            return false
        }
        return Set(members.map(\.key)).count != members.count
    }

    /// Digits with an optional minus, fitting Int64: the form both decoders read alike.
    private static func plainInteger(_ text: String) -> Int64? {
        guard text.utf8.count <= 18, text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) })
        else { return nil }
        return Int64(text)
    }

    /// A finite number without exponent and of modest length (a JSON literal, already validated).
    private static func plainDouble(_ text: String) -> Double? {
        guard text.utf8.count <= 40, !text.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") })
        else { return nil }
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }
}
