/// Why the proxy or the APNs client could not do what was asked; an opaque code so that adding a case breaks
/// no caller, and a message a person can act on.
public struct APNsProxyError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// An option or file given to the proxy or the client is wrong (a URL, a certificate, a key).
        public static let configuration = Code("configuration")
        /// APNs (or what stands for it) could not be reached or answered nothing usable.
        public static let upstream = Code("upstream")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
