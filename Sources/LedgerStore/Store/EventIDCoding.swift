import Formats

/// How event ids are stored: a canonical lower-case UUID as its 16 bytes, any other id as its text. An id in an
/// app's namespace (`app` U+001F `id`, see `Namespaced`) whose id is a canonical UUID is the UUID's 16 bytes
/// followed by the app's UTF-8 bytes, so the unique index keeps ids unique per app.
///
/// Only the canonical spelling is packed, so reading a row back always yields the exact id that was
/// appended (the id is part of the hash chain).
enum StoredEventID: Hashable {
    case uuid([UInt8])
    case text(String)

    init(_ id: String) {
        let (app, bare) = Namespaced.split(id)
        if var bytes = CanonicalUUID.bytes(bare) {
            bytes.append(contentsOf: app.utf8)
            self = .uuid(bytes)
        } else {
            self = .text(id)
        }
    }

    /// The stored bytes of an id back in the client's spelling (a 16-byte UUID, lower-case with dashes).
    static func format(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.count >= 16 else { return Hex.encode(bytes) }
        guard bytes.count == 16 else {
            let app = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[16...]), as: UTF8.self)
            return Namespaced.qualify(format(UnsafeRawBufferPointer(rebasing: bytes[..<16])), app: app)
        }
        return CanonicalUUID.format(bytes)
    }
}
