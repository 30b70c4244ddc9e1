/// Aligned columns for terminal output.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: String...) { self.header = header }

    mutating func add(_ cells: String...) { rows.append(cells) }

    var rendered: String {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }
}

/// Compact JSON of a value, cut to `width` characters for a table cell.
func compact(_ value: JSONValue, width: Int = 60) -> String {
    var writer = JSONWriter()
    writer.write(value)
    let text = String(decoding: writer.bytes, as: UTF8.self)
    return text.count <= width ? text : String(text.prefix(width - 1)) + "…"
}

/// Shows the start and end of a token or hash, never the whole secret-ish value.
func short(_ text: String, keep: Int = 8) -> String {
    text.count <= keep * 2 ? text : "\(text.prefix(keep))…\(text.suffix(4))"
}

import ActivityModel
import Foundation
