/// Names inside an app's namespace, as the store keeps them (SPEC §2 "Apps are namespaces").
///
/// A stream name or event id of app `A` is stored as `A` + U+001F + the name; the app-less namespace (plain CLI
/// imports) stores the name alone. U+001F can never occur in an app, a stream name or an id (control
/// characters are refused at every door), so the split is unambiguous and two apps' names never collide.
/// The chain hash covers the stored (qualified) form, except for rows before `namespaced_from` — rows written
/// before namespaces existed, whose hash covers the bare name (Schemas/sql/README.md).
public enum Namespaced {
    /// The byte between an app and a name.
    public static let separator: UInt8 = 0x1F

    /// `name` in `app`'s namespace; the app-less namespace is `""`.
    public static func qualify(_ name: String, app: String) -> String {
        app.isEmpty ? name : app + "\u{1F}" + name
    }

    /// The app and the bare name of a stored name.
    public static func split(_ stored: String) -> (app: String, name: String) {
        let bytes = stored.utf8
        // On the bytes themselves where the string has them in one piece (a native string always does): the
        // UTF-8 view's own search steps an index at a time (~2 % of a query's decoding, once per stored event).
        let offset = bytes.withContiguousStorageIfAvailable { $0.firstIndex(of: separator) }
        let found = offset.map { $0.map { bytes.index(bytes.startIndex, offsetBy: $0) } } ?? bytes.firstIndex(of: separator)
        guard let cut = found else { return ("", stored) }
        return (String(decoding: bytes[..<cut], as: UTF8.self), String(decoding: bytes[bytes.index(after: cut)...], as: UTF8.self))
    }

    /// The bare name of a stored name.
    public static func name(_ stored: String) -> String { split(stored).name }

    /// The app of a stored name (`""` for the app-less namespace).
    public static func app(_ stored: String) -> String { split(stored).app }

    /// True when `stored` is in `app`'s namespace.
    public static func belongs(_ stored: String, to app: String) -> Bool {
        let bytes = stored.utf8
        guard let cut = bytes.firstIndex(of: separator) else { return app.isEmpty }
        return !app.isEmpty && bytes[..<cut].elementsEqual(app.utf8)
    }

}
