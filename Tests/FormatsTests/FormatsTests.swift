import Formats
import Foundation
import Testing

@Suite("Hex, UUIDs and JSON strings")
struct FormatsTests {
    @Test("hex is two lower-case digits a byte and reads back in either case")
    func hexRoundTrips() {
        let bytes = (0...255).map { UInt8($0) }
        let hex = Hex.encode(bytes)
        #expect(hex == bytes.map { String(format: "%02x", $0) }.joined())
        #expect(Hex.decode(hex) == bytes)
        #expect(Hex.decode(hex.uppercased()) == bytes)
        #expect(Hex.encode([UInt8]()) == "")
        for refused in ["a", "0g", "abc", " 00", "0x00"] { #expect(Hex.decode(refused) == nil, "\(refused)") }
        #expect(Hex.isDigits("00ABCdef99".utf8) && !Hex.isDigits("xyz".utf8))
    }

    @Test("a UUID is spelled lower-case 8-4-4-4-12, and only that spelling parses")
    func uuidSpelling() {
        for _ in 0..<200 {
            let uuid = UUID()
            let canonical = uuid.uuidString.lowercased()
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(CanonicalUUID.format(bytes) == canonical)
            #expect(CanonicalUUID.bytes(canonical) == bytes)
            #expect(CanonicalUUID.bytes(uuid.uuidString) == nil || !uuid.uuidString.contains(where: \.isLetter))
        }
        for refused in ["", "0123456789abcdef0123456789abcdef", "01234567-89ab-cdef-0123-456789abcdeg",
            "01234567+89ab-cdef-0123-456789abcdef", "01234567-89ab-cdef-0123-456789abcdef0",
            "0123456-789ab-cdef-0123-456789abcdef", "01234567-89AB-cdef-0123-456789abcdef",
            "01234567-89ab-cdef-0123x456789abcdef", "01234567-89ab-cdef-0123-456789abcde-"]
        {
            #expect(CanonicalUUID.bytes(refused) == nil, "\(refused)")
        }
        let inLine = "id=01234567-89ab-cdef-0123-456789abcdef;"
        #expect(CanonicalUUID.bytes(inLine.dropFirst(3).dropLast()) == Hex.decode("0123456789abcdef0123456789abcdef"))
        var generator = SystemRandomNumberGenerator()
        let random = CanonicalUUID.random(using: &generator)
        #expect(UUID(uuidString: random) != nil)
        #expect(Array(random.utf8)[14] == UInt8(ascii: "4"))
        #expect(CanonicalUUID.make(version: 8, from: [UInt8](repeating: 0xFF, count: 20))
            == "ffffffff-ffff-8fff-bfff-ffffffffffff")
        // Version 7: the Unix milliseconds in the first 48 bits (RFC 9562's example time), so later sorts after.
        let ordered = CanonicalUUID.timeOrdered(milliseconds: 0x017F_22E2_79B0, using: &generator)
        #expect(ordered.hasPrefix("017f22e2-79b0-7"), "\(ordered)")
        #expect("89ab".contains(Array(ordered)[19]), "\(ordered)")
        let times: [Int64] = [0, 1, 255, 256, 1_764_000_000_000, 1_764_000_000_001, 0xFFFF_FFFF_FFFF]
        let ids = times.map { CanonicalUUID.timeOrdered(milliseconds: $0, using: &generator) }
        #expect(ids == ids.sorted(), "\(ids)")
        #expect(ids.allSatisfy { CanonicalUUID.bytes($0) != nil })
    }

    @Test("a UUID made of ordered fields keeps their order, as text and as bytes, and every field's bits")
    func orderedFields() throws {
        var generator = SystemRandomNumberGenerator()
        let widths = [32, 32, 58]
        var made: [(fields: [UInt64], id: String)] = []
        for round in 0..<2_000 {
            // Small ranges as well as whole ones, so that equal leading fields are common.
            let fields = widths.map { bits in
                let limit: UInt64 = round % 2 == 0 ? 3 : (bits == 64 ? .max : (1 << UInt64(bits)) - 1)
                return UInt64.random(in: 0...limit, using: &generator)
            }
            let id = CanonicalUUID.make(version: 8, orderedBits: Array(zip(fields, widths)))
            let bytes = try #require(CanonicalUUID.bytes(id))
            #expect(bytes[6] >> 4 == 8 && bytes[8] >> 6 == 0b10, "\(id)")
            // Every bit comes back from where it was put, around the version's and the variant's.
            var bits = bytes.flatMap { byte in (0..<8).map { byte >> (7 - $0) & 1 } }
            bits.removeSubrange(64..<66)
            bits.removeSubrange(48..<52)
            var offset = 0
            for (field, width) in zip(fields, widths) {
                let read = bits[offset..<(offset + width)].reduce(UInt64(0)) { $0 << 1 | UInt64($1) }
                #expect(read == field, "\(id)")
                offset += width
            }
            made.append((fields, id))
        }
        let byFields = made.sorted { $0.fields.lexicographicallyPrecedes($1.fields) }.map(\.id)
        #expect(byFields == made.map(\.id).sorted())
    }

    @Test("JSON strings escape quote, backslash and controls only, and read back as the same text")
    func jsonStrings() throws {
        #expect(JSONString.quoted("a\"b\\c/d\u{7F}é😀") == "\"a\\\"b\\\\c/d\u{7F}é😀\"")
        #expect(JSONString.quoted("\u{8}\u{9}\u{A}\u{C}\u{D}\u{0}\u{1F}") == #""\b\t\n\f\r\u0000\u001f""#)
        var texts = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        texts += ["", "plain", "caf\u{E9} \u{2028} \u{1F600}", String(repeating: "\"\\\n", count: 50)]
        for text in texts {
            let quoted = JSONString.quoted(text)
            #expect(JSONString.size(of: text.utf8) == quoted.utf8.count, "\(quoted)")
            #expect(try JSONDecoder().decode(String.self, from: Data(quoted.utf8)) == text, "\(quoted)")
        }
        // Contiguous text is copied a run at a time; any other sequence byte by byte: the same literal.
        for text in texts + ["x\"", "\"x", "ab\ncd\u{1}ef\u{1F}", "\u{0}", "é\u{7}é"] {
            var runs: [UInt8] = []
            JSONString.append(text.utf8, to: &runs)
            var bytes: [UInt8] = []
            JSONString.append(text.utf8.lazy.map { $0 }, to: &bytes)
            #expect(runs == bytes, "\(text.debugDescription)")
            #expect(runs == Array(JSONString.quoted(text).utf8))
        }
    }
}
