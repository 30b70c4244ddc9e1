import ActivityModel
import Ledger

/// The incident view (SPEC §7 "Web page"): an HTML shell, one stylesheet and one script, embedded in the binary.
///
/// `serve` answers `/`, `/activities/<id>` and `/updates/<event>` with ``shell`` (the script routes on the path
/// and reads the HTTP API with the key the user types), and `/assets/…` with the two assets. ``report(_:)`` is the
/// same view as one self-contained file: the stylesheet, the script and the ``IncidentReport`` JSON inlined, and a
/// Content-Security-Policy that forbids every network request, so it opens from `file://` with no server.
public enum IncidentPage: Sendable {
    /// What `serve` sends with the shell and its assets: scripts and styles from this origin only, API calls to it
    /// only, no framing, no referrer.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// The page for every view path (the script decides what it shows).
    public static let shell = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>ActivityLedger · incident view</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/assets/incident.css">
        </head>
        <body>
        <header><a class="brand" href="/">ActivityLedger · incident view</a><div id="tools"></div></header>
        <div id="status" role="status" aria-live="polite"></div>
        <main id="view"></main>
        <script src="/assets/incident.js" defer></script>
        </body>
        </html>

        """

    /// `activity-ledger report`: the view of `report` as one HTML file that needs nothing else.
    public static func report(_ report: IncidentReport) -> [UInt8] {
        let note =
            "\(report.activity), \(report.from.rfc3339) → \(report.to.rfc3339), generated \(report.generatedAt.rfc3339) (offline copy)"
        var html: [UInt8] = []
        html.append(contentsOf: """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <link rel="icon" href="data:,">
            <title>\(escape(report.activity)) · incident report</title>
            <style>
            \(stylesheet)</style>
            </head>
            <body>
            <header><span class="brand">ActivityLedger · incident report</span><span class="report-note">\(escape(note))</span></header>
            <div id="status" role="status" aria-live="polite"></div>
            <main id="view"></main>
            <script type="application/json" id="incident-data">
            """.utf8)
        // `<` only occurs inside JSON strings, where \u003c means the same: the data cannot close its element.
        for byte in report.json.compactBytes {
            if byte == UInt8(ascii: "<") {
                html.append(contentsOf: "\\u003c".utf8)
            } else {
                html.append(byte)
            }
        }
        html.append(contentsOf: "</script>\n<script>\n\(script)</script>\n</body>\n</html>\n".utf8)
        return html
    }

    /// Text for HTML element content and attribute values.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
