import Foundation
import HTTPTypes
import ProcessTestSupport
@testable import Resourceful
import ResourcefulTesting
import Testing

/// Masking fails closed: a multipart or form body that cannot be masked with certainty is left
/// out, never shown as it is; names are matched as servers parse them. What is shown is checked
/// against real parsers (Python's `email` package for multipart, PHP's `parse_str` for forms):
/// nothing they read holds the secret.
@Suite struct FailClosedMaskingTests {
    static let secret = "S3CR3T-VALUE"
    static let redactor = Redactor(settings: APIConfig.LogSettings())

    /// A multipart body and whether it can be masked (its secret replaced) or must be left out.
    struct MultipartCase: CustomTestStringConvertible, Sendable {
        var label: String
        var contentType = "multipart/form-data; boundary=b0undary"
        var body: String
        var masks: Bool
        var testDescription: String { label }
    }

    static let multipartCases: [MultipartCase] = [
        MultipartCase(
            label: "no closing delimiter",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"client_secret\"\r\n\r\n\(secret)\r\n", masks: false
        ),
        MultipartCase(
            label: "cut in a part",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--b0undary\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n\(secret)",
            masks: false
        ),
        MultipartCase(
            label: "upper-case NAME",
            body: "--b0undary\r\nContent-Disposition: form-data; NAME=\"password\"\r\n\r\n\(secret)\r\n--b0undary--\r\n", masks: true
        ),
        MultipartCase(
            label: "unquoted name",
            body: "--b0undary\r\nContent-Disposition: form-data; name=password\r\n\r\n\(secret)\r\n--b0undary--\r\n", masks: true
        ),
        MultipartCase(
            label: "RFC 5987 name*",
            body: "--b0undary\r\nContent-Disposition: form-data; name*=UTF-8''pass%77ord\r\n\r\n\(secret)\r\n--b0undary--\r\n", masks: true
        ),
        MultipartCase(
            label: "upper-case header name",
            body: "--b0undary\r\nCONTENT-DISPOSITION: form-data; name=\"api_key\"\r\n\r\n\(secret)\r\n--b0undary--", masks: true
        ),
        MultipartCase(
            label: "LF-only line ends",
            body: "--b0undary\nContent-Disposition: form-data; name=\"password\"\n\n\(secret)\n--b0undary--\n", masks: false
        ),
        MultipartCase(
            label: "an LF-only part hidden in a kept one",
            body:
                "--b0undary\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\n--b0undary\nContent-Disposition: form-data; name=\"password\"\n\n\(secret)\r\n--b0undary--\r\n",
            masks: false
        ),
        MultipartCase(
            label: "boundary not the Content-Type's",
            body: "--other\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n\(secret)\r\n--other--\r\n", masks: false
        ),
        MultipartCase(
            label: "a preamble",
            body: "password=\(secret)\r\n--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--b0undary--\r\n", masks: false
        ),
        MultipartCase(
            label: "an epilogue",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--b0undary--\r\npassword=\(secret)", masks: false
        ),
        MultipartCase(
            label: "no boundary in the Content-Type", contentType: "multipart/form-data",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n\(secret)\r\n--b0undary--\r\n", masks: false
        ),
        MultipartCase(
            label: "a credential field in a part",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\nX-Api-Key: \(secret)\r\n\r\nx\r\n--b0undary--\r\n", masks: false
        ),
        MultipartCase(
            label: "a nested multipart part",
            body:
                "--b0undary\r\nContent-Disposition: form-data; name=\"files\"\r\nContent-Type: multipart/mixed; boundary=in\r\n\r\n--in\r\n\r\n\(secret)\r\n--in--\r\n--b0undary--\r\n",
            masks: false
        ),
        // A part's content is masked by its own type.
        MultipartCase(
            label: "a JSON part",
            body:
                "--b0undary\r\nContent-Disposition: form-data; name=\"metadata\"\r\nContent-Type: application/json\r\n\r\n{\"client_secret\":\"\(secret)\",\"n\":1}\r\n--b0undary--\r\n",
            masks: true
        ),
        MultipartCase(
            label: "a form part",
            body:
                "--b0undary\r\nContent-Disposition: form-data; name=\"form\"\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\npassword=\(secret)\r\n--b0undary--\r\n",
            masks: true
        ),
        MultipartCase(
            label: "a plain part that is JSON",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"meta\"\r\n\r\n {\"password\":\"\(secret)\"}\r\n--b0undary--\r\n", masks: true
        ),
        MultipartCase(
            label: "a plain part holding a URL's userinfo",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"db\"\r\n\r\npostgres://app:\(secret)@db/prod\r\n--b0undary--\r\n", masks: true
        ),
        MultipartCase(
            label: "a JSON part that is not JSON",
            body:
                "--b0undary\r\nContent-Disposition: form-data; name=\"metadata\"\r\nContent-Type: application/json\r\n\r\n{client_secret: \(secret)}\r\n--b0undary--\r\n",
            masks: false
        ),
        MultipartCase(
            label: "a part of a type the rules cannot mask",
            body:
                "--b0undary\r\nContent-Disposition: form-data; name=\"blob\"\r\nContent-Type: application/octet-stream\r\n\r\nclient_secret \(secret)\r\n--b0undary--\r\n",
            masks: false
        ),
        MultipartCase(
            label: "a URL with userinfo in a part's field",
            body:
                "--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"https://u:\(secret)@h/x\"\r\n\r\nx\r\n--b0undary--\r\n",
            masks: false
        ),
        MultipartCase(
            label: "a part in base64",
            body:
                "--b0undary\r\nContent-Disposition: form-data; name=\"form\"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Transfer-Encoding: base64\r\n\r\ncGFzc3dvcmQ9UzNDUjNULVZBTFVF\r\n--b0undary--\r\n",
            masks: false
        ),
        // RFC 2231 continuations, read as Django and Python read them.
        MultipartCase(
            label: "name*0 and name*1",
            body: "--b0undary\r\nContent-Disposition: form-data; name*0=\"pass\"; name*1=\"word\"\r\n\r\n\(secret)\r\n--b0undary--\r\n", masks: true
        ),
        MultipartCase(
            label: "encoded continuations",
            body: "--b0undary\r\nContent-Disposition: form-data; name*0*=UTF-8''pass; name*1*=%77ord\r\n\r\n\(secret)\r\n--b0undary--\r\n", masks: true
        ),
        MultipartCase(
            label: "a continuation missing",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"a\"; name*0=\"pass\"; name*2=\"word\"\r\n\r\n\(secret)\r\n--b0undary--\r\n",
            masks: false
        ),
        MultipartCase(
            label: "a name* parameter that cannot be read",
            body: "--b0undary\r\nContent-Disposition: form-data; name=\"a\"; name*x=\"password\"\r\n\r\n\(secret)\r\n--b0undary--\r\n", masks: false
        ),
    ]

    @Test func aFilePartIsKeptAndItsTypeMasked() throws {
        let png = "--b0undary\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\nPNGDATA\r\n--b0undary--\r\n"
        let kept = try #require(Self.redactor.maskedBody(Data(png.utf8), contentType: "multipart/form-data; boundary=b0undary"))
        #expect(String(decoding: kept, as: UTF8.self) == png)
        let key = "--b0undary\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"sa.json\"\r\nContent-Type: application/json\r\n\r\n{\"private_key\":\"\(Self.secret)\"}\r\n--b0undary--\r\n"
        let masked = try #require(Self.redactor.maskedBody(Data(key.utf8), contentType: "multipart/form-data; boundary=b0undary"))
        #expect(String(decoding: masked, as: UTF8.self).contains(#"{"private_key":"***"}"#))
    }

    @Test(arguments: multipartCases)
    func multipartBodiesAreMaskedOrLeftOut(_ item: MultipartCase) async throws {
        let masked = Self.redactor.maskedBody(Data(item.body.utf8), contentType: item.contentType)
        if item.masks {
            let text = try #require(masked.map { String(decoding: $0, as: UTF8.self) })
            #expect(!text.contains(Self.secret))
            #expect(text.contains("***"))
        } else {
            #expect(masked == nil, "a body that cannot be masked with certainty is left out")
        }
        // What a lenient parser reads from what is shown holds no secret.
        if let masked {
            let read = try await Self.pythonMultipart(masked, contentType: item.contentType)
            #expect(!read.contains(Self.secret), "Python read: \(read)")
        }
    }

    @Test func aWellFormedBodyKeepsItsOrdinaryParts() throws {
        let body = "--b0undary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello\r\n--b0undary\r\nContent-Disposition: form-data; name=\"db_pass\"\r\n\r\n\(Self.secret)\r\n--b0undary--\r\n"
        let masked = try #require(Self.redactor.maskedBody(Data(body.utf8), contentType: "multipart/form-data; boundary=\"b0undary\""))
        #expect(
            String(decoding: masked, as: UTF8.self)
                == "--b0undary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello\r\n--b0undary\r\nContent-Disposition: form-data; name=\"db_pass\"\r\n\r\n***\r\n--b0undary--\r\n"
        )
    }

    /// Form bodies, as PHP reads them with `&` and with `&;` as separators.
    static let formBodies = [
        "password=\(secret)", "user=a;password=\(secret)", "user=a&password=\(secret)&x=1", "user%5Bpassword%5D=\(secret)",
        "password[0]=\(secret)", "pass%77ord=\(secret)", "PASSWORD=\(secret)", "pass+word=\(secret)", "pass.word=\(secret)",
        "db_pass=\(secret)", #"{"password":"\#(secret)"}"#, "a=1\r\npassword=\(secret)", "code=\(secret)&state=x",
    ]

    @Test(arguments: formBodies)
    func formBodiesAreMaskedAsParsersReadThem(_ body: String) async throws {
        let masked = Self.redactor.maskedBody(Data(body.utf8), contentType: "application/x-www-form-urlencoded")
        guard let masked else { return }
        let text = String(decoding: masked, as: UTF8.self)
        #expect(!text.contains(Self.secret), "shown: \(text)")
        for separators in ["&", "&;"] {
            let read = try await Self.php(parsing: text, separators: separators)
            #expect(!read.contains(Self.secret), "PHP read: \(read)")
        }
    }

    @Test func formBodiesThatAreNotFormsAreLeftOut() {
        let form = "application/x-www-form-urlencoded"
        #expect(Self.redactor.maskedBody(Data(#"{"password": "\#(Self.secret)"}"#.utf8), contentType: form) == nil)
        #expect(Self.redactor.maskedBody(Data("a=1\npassword=\(Self.secret)".utf8), contentType: form) == nil)
        #expect(Self.redactor.maskedBody(Data([0x61, 0x3D, 0xFF]), contentType: form) == nil)
        let semicolons = Self.redactor.maskedBody(Data("user=a;password=S14".utf8), contentType: form)
        #expect(semicolons.map { String(decoding: $0, as: UTF8.self) } == "user=a;password=***")
        #expect(Self.redactor.query("user=a;password=S14&b=2") == "user=a;password=***&b=2")
        // JSON in a value, which a server may parse: masked as JSON, or replaced.
        let json = Self.redactor.query(#"filter=%7B%22password%22%3A%22S15%22%2C%22n%22%3A1%7D&page=2"#)
        #expect(!json.contains("S15") && json.hasSuffix("&page=2"), "\(json)")
        #expect(json.removingPercentEncoding?.contains(#"{"password":"***","n":1}"#) == true, "\(json)")
        #expect(Self.redactor.query("filter={password:S16}&page=2") == "filter=***&page=2")
        #expect(Self.redactor.query("ids=[1,2]&q=%7Bok") == "ids=[1,2]&q=%7Bok")
    }

    @Test func logLinesLeaveOutWhatCannotBeMasked() async throws {
        try await Harness.run { harness in
            harness.server.stub(
                .get, "/v1/upload",
                MockResponseFixture.body(
                    "--b0undary\r\nContent-Disposition: form-data; name=password\r\n\r\n\(Self.secret)\r\n",
                    contentType: "multipart/form-data; boundary=b0undary"
                )
            )
            harness.server.stub(.get, "/v1/form", MockResponseFixture.body(#"{"password":"\#(Self.secret)"}"#, contentType: "application/x-www-form-urlencoded"))
            _ = try? await harness.api.call(AdHocRequest<Empty, Empty>(.show, "upload"))
            _ = try? await harness.api.call(AdHocRequest<Empty, Empty>(.show, "form"))
            #expect(!harness.logText.contains(Self.secret))
            #expect(harness.logText.contains("left out: it cannot be masked"))
        }
    }

    /// The field values Python's `email` package reads from a multipart body.
    static func pythonMultipart(_ body: Data, contentType: String) async throws -> String {
        let script = """
            import sys, email, email.policy
            data = sys.stdin.buffer.read()
            message = email.message_from_bytes(b"Content-Type: " + sys.argv[1].encode() + b"\\r\\n\\r\\n" + data, policy=email.policy.HTTP)
            for part in message.walk():
                print(part.get_param("name", header="content-disposition"), repr(part.get_payload(decode=True)))
            print(repr(message.preamble), repr(message.epilogue))
            """
        let python = FileManager.default.currentDirectoryPath + "/.build/python/bin/python"
        let result = try await Command.run(python, ["-c", script, contentType], input: String(decoding: body, as: UTF8.self))
        try #require(result.status == 0, "\(result.output)")
        return result.output
    }

    /// What PHP's `parse_str` reads from a form body, as JSON.
    static func php(parsing body: String, separators: String) async throws -> String {
        let result = try await Command.run(
            "/usr/bin/php",
            ["-d", "arg_separator.input=\(separators)", "-r", #"parse_str(file_get_contents("php://stdin"), $o); echo json_encode($o);"#],
            input: body
        )
        try #require(result.status == 0, "\(result.output)")
        return result.output
    }
}

/// Mock responses with a body of a given type.
enum MockResponseFixture {
    static func body(_ text: String, contentType: String) -> ResourcefulTesting.MockResponse {
        ResourcefulTesting.MockResponse(status: .ok, headerFields: [.contentType: contentType], body: Data(text.utf8))
    }
}
