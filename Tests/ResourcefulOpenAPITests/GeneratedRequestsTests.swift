import Foundation
import HTTPTypes
import OpenAPIGolden
import Resourceful
import ResourcefulTesting
import Testing

/// The golden `Users` requests, called through `api.call` against a server on loopback: each
/// sends the method, path, query, headers and body its operation describes, and decodes what
/// the document says it answers.
@Suite struct GeneratedRequestsTests {
    static let userJSON = #"{"id": 7, "name": "Ada", "email": null, "created_at": "2026-01-02T03:04:05Z", "role": "admin"}"#

    @Test func indexSendsItsQueryWithArraysRepeated() async throws {
        try await GeneratedAPIHarness.run { api, server in
            server.stub(.get, "/v1/users", .json(raw: "[\(Self.userJSON)]"))
            let users = try await api.call(Users.ListUsers(tag: ["a", "b c"], limit: 5, sortOrder: .desc))
            #expect(users.map(\.name) == ["Ada"])
            #expect(users.first?.role == .admin)
            #expect(users.first?.createdAt == Date(timeIntervalSince1970: 1_767_323_045))
            let sent = try #require(server.requests.last)
            #expect(sent.method == .get)
            #expect(sent.queryItems.map { "\($0.name)=\($0.value)" }.sorted() == ["limit=5", "sort_order=desc", "tag=a", "tag=b c"])
            #expect(sent.headerFields[.authorization] == GeneratedAPIHarness.credential)
        }
    }

    @Test func showInterpolatesThePathAsOneSegmentAndSendsItsHeader() async throws {
        try await GeneratedAPIHarness.run { api, server in
            server.stub(.get, "/v1/users/42", .json(raw: Self.userJSON))
            let user = try await api.call(Users.ShowUser(id: 42, xRequestId: "req-1"))
            #expect(user.id == 7)
            #expect(server.requests.last?.headerFields[HTTPField.Name("X-Request-ID")!] == "req-1")

            server.stub(.get, "/v1/reports/a%2Fb", .status(.ok))
            _ = try await api.call(Users.ShowReport(kind: .unknown("a/b")))
            #expect(server.requests.last?.path == "/v1/reports/a%2Fb")

            // Parameters named `self` and `verb` take other Swift names and keep their wire names.
            server.stub(.get, "/v1/reports/weekly", .status(.ok))
            _ = try await api.call(Users.ShowReport(kind: .weekly, verb2: "audit", self2: "me"))
            let sent = try #require(server.requests.last)
            #expect(sent.query == "self=me")
            #expect(sent.headerFields[HTTPField.Name("verb")!] == "audit")
        }
    }

    @Test func createSendsItsBodyAndQueryTogether() async throws {
        try await GeneratedAPIHarness.run { api, server in
            server.stub(.post, "/v1/users", .json(raw: Self.userJSON, status: .created))
            let created = try await api.call(Users.CreateUser(parameters: Users.NewUser(name: "Ada", role: .unknown("owner")), dryRun: true))
            #expect(created.name == "Ada")
            let sent = try #require(server.requests.last)
            #expect(sent.method == .post)
            #expect(sent.query == "dry_run=true")
            let body = try #require(try JSONSerialization.jsonObject(with: sent.body) as? [String: String])
            #expect(body == ["name": "Ada", "role": "owner"])
        }
    }

    @Test func updatesUsePutOrPatchAsTheDocumentSays() async throws {
        try await GeneratedAPIHarness.run { api, server in
            server.stub(.put, "/v1/users/3", .json(raw: Self.userJSON))
            server.stub(.patch, "/v1/users/3", .json(raw: #"{"id": 3, "name": "Grace"}"#))
            _ = try await api.call(Users.ReplaceUser(id: 3, parameters: Users.NewUser(name: "Ada")))
            #expect(server.requests.last?.method == .put)
            let renamed = try await api.call(Users.RenameUser(id: 3, parameters: .init(name: "Grace")))
            #expect(renamed == Users.RenameUser.Response(id: 3, name: "Grace"))
            #expect(server.requests.last?.method == .patch)
        }
    }

    @Test func deleteDecodesEitherErrorBody() async throws {
        try await GeneratedAPIHarness.run { api, server in
            server.stub(
                .delete, "/v1/users/9",
                .status(.noContent),
                .json(raw: #"{"title": "Not Found", "status": 404}"#, status: .notFound),
                .json(raw: #"{"reason": "has invoices"}"#, status: .conflict)
            )
            let deleted: Empty = try await api.call(Users.DeleteUser(id: 9))
            #expect(deleted == Empty())
            for expected in [404, 409] {
                let error = try await #require(throws: APIError.self) { try await api.call(Users.DeleteUser(id: 9)) }
                #expect(error.status?.code == expected)
                switch error.errorResponse(as: Users.DeleteUser.Errors.self) {
                case .status404(let problem): #expect(expected == 404 && problem.title == "Not Found")
                case .status409(let conflict): #expect(expected == 409 && conflict.reason == "has invoices")
                case nil: Issue.record("the \(expected) body was not decoded")
                }
            }
        }
    }

    @Test func formAndMultipartBodiesAreSentAsTheirMediaTypes() async throws {
        try await GeneratedAPIHarness.run { api, server in
            server.stub(.post, "/v1/sessions", .json(raw: #"{"token": "s3ss10n", "expires_at": "2026-11-23T10:00:00Z"}"#))
            server.stub(.post, "/v1/users/5/avatar", .status(.noContent))
            let session = try await api.call(Users.LogIn(parameters: .init(username: "ada", password: "pa55")))
            #expect(session.token == "s3ss10n")
            let login = try #require(server.requests.last)
            #expect(login.headerFields[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true)
            #expect(login.bodyText == "password=pa55&username=ada" || login.bodyText == "username=ada&password=pa55")

            let file = MultipartFile(filename: "me.png", contentType: "image/png", data: Data([0x89, 0x50, 0x4E, 0x47]))
            _ = try await api.call(Users.UploadAvatar(id: 5, parameters: .init(file: file, caption: "me")))
            let upload = try #require(server.requests.last)
            #expect(upload.headerFields[.contentType]?.hasPrefix("multipart/form-data; boundary=") == true)
            #expect(upload.body.range(of: Data([0x89, 0x50, 0x4E, 0x47])) != nil)
            #expect(upload.bodyText.contains(#"filename="me.png""#))
        }
    }

    @Test func anAPIKeySchemeIsSentInItsHeaderFromTheStorageAndMasked() async throws {
        try await GeneratedAPIHarness.run(configure: { $0.authentication.headerName = "X-API-Key" }) { api, server in
            server.stub(.get, "/v1/reports/daily", .status(.ok))
            _ = try await api.call(Users.ShowReport(kind: .daily))
            let sent = try #require(server.requests.last)
            #expect(sent.headerFields[HTTPField.Name("X-API-Key")!] == GeneratedAPIHarness.credential)
            #expect(sent.headerFields[.authorization] == nil)
            let curl = try await api.curl(for: Users.ShowReport(kind: .daily))
            #expect(curl.contains("--header 'X-API-Key: ***'"))
            #expect(!curl.contains("gen-t0ken"))
        }
    }
}
