import Foundation

/// What an API key may do. `admin` implies the others.
public enum APIScope: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    /// Append events, batches, APNs exchanges, resync snapshots.
    case ingest
    /// Query state, timelines, audits, activity lists, the feed.
    case read
    /// Run reconciliations, verify, digest.
    case admin

    /// Parses `ingest,read,admin`; nil names the first unknown scope via `unknown`.
    public static func parseList(_ list: String) -> (scopes: Set<APIScope>, unknown: String?) {
        var scopes: Set<APIScope> = []
        for part in list.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            guard let scope = APIScope(rawValue: name) else { return ([], name) }
            scopes.insert(scope)
        }
        return (scopes, nil)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A stored API key (never the secret itself, only its id and what it grants).
public struct APIKey: Sendable, Hashable, Codable {
    /// Public identifier, safe to log and to pass to `keys revoke`.
    public var id: String
    /// The app (bundle id) whose streams the key may touch.
    public var app: String
    public var scopes: Set<APIScope>
    public var createdAt: Date
    public var revokedAt: Date?

    public init(id: String, app: String, scopes: Set<APIScope>, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.app = app
        self.scopes = scopes
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// Whether the key grants `scope` (`admin` grants everything).
    public func allows(_ scope: APIScope) -> Bool {
        revokedAt == nil && (scopes.contains(scope) || scopes.contains(.admin))
    }
}

/// Why a key operation was refused.
public struct APIKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
