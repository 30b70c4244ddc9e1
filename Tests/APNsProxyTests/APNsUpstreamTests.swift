import Testing

@testable import APNsProxy

@Suite("Where the proxy and the client send")
struct APNsUpstreamTests {
    @Test("production and sandbox name Apple's hosts; any https URL without a path is taken")
    func names() throws {
        #expect(try APNsUpstream(parsing: "production").baseURL == "https://api.push.apple.com")
        #expect(try APNsUpstream(parsing: "sandbox").baseURL == "https://api.sandbox.push.apple.com")
        #expect(try APNsUpstream(parsing: "https://127.0.0.1:8443/").baseURL == "https://127.0.0.1:8443")
    }

    @Test("cleartext, a path, a query, credentials or nonsense are refused naming the option", arguments: [
        "http://api.push.apple.com", "https://h/3/device", "https://h?x=1", "https://u:p@h", "api.push.apple.com", "",
        "https://",
    ])
    func refused(_ text: String) {
        #expect(throws: APNsProxyError.self) { try APNsUpstream(parsing: text) }
        do {
            _ = try APNsUpstream(parsing: text)
        } catch {
            #expect(error.message.hasPrefix("--apns-upstream:"))
        }
    }

    @Test("paths: a device token or a broadcast bundle; anything else is not the provider API")
    func paths() {
        #expect(PushTarget(path: "/3/device/abc") == .device("abc"))
        #expect(PushTarget(path: "/4/broadcasts/apps/com.example") == .broadcast("com.example"))
        #expect(PushTarget(path: "/4/broadcasts/apps/") == nil)
        #expect(PushTarget(path: "/4/broadcasts/apps/a/b") == nil)
        #expect(PushTarget(path: "/v1/events") == nil)
        #expect(APNsProxyGate.isToken("a0F9"))
        #expect(!APNsProxyGate.isToken(""))
        #expect(!APNsProxyGate.isToken("zz"))
        #expect(!APNsProxyGate.isToken(Substring(String(repeating: "a", count: 201))))
    }
}
