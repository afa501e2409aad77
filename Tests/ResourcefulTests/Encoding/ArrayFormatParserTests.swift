import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Each array format, written by the request builder and read by the parsers of real server
/// stacks (Debian's packages): PHP's `parse_str`, Rack's `parse_nested_query`, the `qs` package
/// that Express uses, and Python's `parse_qs` (FastAPI, Django). What each reads is what the
/// QueryStrings guide says.
@Suite struct ArrayFormatParserTests {
    struct Item: Encodable, Sendable { var id: Int }
    struct Nested: Encodable, Sendable {
        var tags = ["a", "b,c"]
        var items = [Item(id: 1), Item(id: 2)]
    }
    struct Flat: Encodable, Sendable { var tags = ["a", "b,c"] }

    /// The query a call would send.
    private func query(_ parameters: some Encodable & Sendable, _ format: ArrayFormat) async throws -> String {
        let config = APIConfig(baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s", coding: .init(arrayFormat: format))
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: StubTransport { _ in .init(status: .ok) }))
        let request = try await api.transportRequest(for: AdHocRequest<Empty, _>(.index, "x", parameters: parameters))
        return String(request.url.split(separator: "?", maxSplits: 1).last ?? "")
    }

    /// What `parser` reads from `query`, as JSON.
    private func parse(_ parser: String, _ query: String) async throws -> String {
        let arguments: [String]
        switch parser {
        case "php": arguments = ["php", "-r", "parse_str($argv[1], $o); echo json_encode($o);", query]
        case "rack": arguments = ["ruby", "-rrack", "-rjson", "-e", "print JSON.generate(Rack::Utils.parse_nested_query(ARGV[0]))", query]
        case "qs": arguments = ["node", "-e", "process.stdout.write(JSON.stringify(require('qs').parse(process.argv[1])))", query]
        case "qs-comma":
            arguments = ["node", "-e", "process.stdout.write(JSON.stringify(require('qs').parse(process.argv[1], {comma: true})))", query]
        default: arguments = ["python3", "-c", "import sys, json, urllib.parse; print(json.dumps(urllib.parse.parse_qs(sys.argv[1]), separators=(',', ':')), end='')", query]
        }
        // Debian's node packages (qs and what it requires) live under /usr/share/nodejs.
        let result = try await Command.run("/usr/bin/env", arguments, environment: ["NODE_PATH": "/usr/share/nodejs:/usr/lib/nodejs"])
        guard result.status == 0 else { throw Command.Failed(result: result) }
        return result.output
    }

    @Test func bracketsAreAListEverywhereButArraysOfObjectsAreAHashInRack() async throws {
        let query = try await query(Nested(), .brackets)
        #expect(query == "tags%5B%5D=a&tags%5B%5D=b%2Cc&items%5B0%5D%5Bid%5D=1&items%5B1%5D%5Bid%5D=2")
        let list = #"{"tags":["a","b,c"],"items":[{"id":"1"},{"id":"2"}]}"#
        #expect(try await parse("php", query) == list)
        #expect(try await parse("qs", query) == list)
        #expect(try await parse("rack", query) == #"{"tags":["a","b,c"],"items":{"0":{"id":"1"},"1":{"id":"2"}}}"#)
    }

    @Test func indicesAreAListInPHPAndQsAndAHashInRack() async throws {
        let query = try await query(Flat(), .indices)
        #expect(query == "tags%5B0%5D=a&tags%5B1%5D=b%2Cc")
        #expect(try await parse("php", query) == #"{"tags":["a","b,c"]}"#)
        #expect(try await parse("qs", query) == #"{"tags":["a","b,c"]}"#)
        #expect(try await parse("rack", query) == #"{"tags":{"0":"a","1":"b,c"}}"#)
    }

    @Test func repeatedNamesAreAListInPythonAndTheLastValueInPHP() async throws {
        let query = try await query(Flat(), .repeated)
        #expect(query == "tags=a&tags=b%2Cc")
        #expect(try await parse("python", query) == #"{"tags":["a","b,c"]}"#)
        #expect(try await parse("qs", query) == #"{"tags":["a","b,c"]}"#)
        #expect(try await parse("php", query) == #"{"tags":"b,c"}"#)
    }

    @Test func commaSeparatedValuesKeepTheirOwnCommasInQs() async throws {
        let query = try await query(Flat(), .comma)
        #expect(query == "tags=a,b%2Cc")
        #expect(try await parse("qs-comma", query) == #"{"tags":["a","b,c"]}"#)
        #expect(try await parse("python", query) == #"{"tags":["a,b,c"]}"#)
    }

    @Test(arguments: [ArrayFormat.repeated, .comma])
    func formatsWithoutNamesForElementsRefuseArraysOfObjects(format: ArrayFormat) async throws {
        let error = await #expect(throws: APIError.self) { _ = try await query(Nested(), format) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.detail?.contains("items") == true)
    }

    @Test func aRequestChoosesItsOwnFormat() async throws {
        let config = APIConfig(baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s")
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: StubTransport { _ in .init(status: .ok) }))
        var request = AdHocRequest<Empty, Flat>(.index, "x", parameters: Flat())
        request.arrayFormat = .repeated
        #expect(try await api.transportRequest(for: request).url.hasSuffix("?tags=a&tags=b%2Cc"))
    }
}
