import HTTPTypes
import Hummingbird
import LedgerWeb
import NIOCore

/// The incident view (SPEC §7 "Web page"): the page at `/`, at every deep link (`/activities/<id>?at=…`,
/// `/updates/<event>`), and its two assets, all from the binary. They need no key: the page holds no data;
/// the script reads the API with the key the user types.
enum WebRoutes {
    static func add(to router: Router<BasicRequestContext>, routes: DeclaredRoutes) {
        let page = asset(IncidentPage.shell, type: "text/html; charset=utf-8")
        for path in ["/", "/activities/{activity}", "/updates/{event}"] {
            routes.add(method: .get, path: path)
            router.get(RouterPath(path)) { _, _ in page }
        }
        let script = asset(IncidentPage.script, type: "text/javascript; charset=utf-8")
        let stylesheet = asset(IncidentPage.stylesheet, type: "text/css; charset=utf-8")
        routes.add(method: .get, path: "/assets/incident.js")
        routes.add(method: .get, path: "/assets/incident.css")
        router.get("/assets/incident.js") { _, _ in script }
        router.get("/assets/incident.css") { _, _ in stylesheet }
    }

    private static func asset(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.contentSecurityPolicy] = IncidentPage.contentSecurityPolicy
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
