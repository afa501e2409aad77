import Benchmark
import Foundation
import Logging
import Resourceful
@_spi(Benchmarking) import ResourcefulJSON

/// A GitHub-style issue list and a Stripe-style list of charges (see `Realistic/`), served by the
/// benchmark server, called through `api.call` with the decoder each configuration chooses
/// (`FastJSONDecoder` by default) and with `JSONDecoder`, and by raw AsyncHTTPClient.
struct RealisticAPI: Sendable {
    static let gitHubPath = "/repos/acme/widgets/issues"
    static let stripePath = "/v1/charges"
    static let gitHubQuery = "?state=all&page=1"
    static let stripeQuery = "?limit=50"

    /// Default keys and ISO 8601 dates, as GitHub needs.
    let gitHub: API
    let gitHubJSONDecoder: API
    /// Snake-case keys and ISO 8601 dates.
    let stripe: API
    let stripeJSONDecoder: API
    /// Foundation's decoders with the same strategies, for raw AsyncHTTPClient.
    let gitHubDecoder: JSONDecoder
    let stripeDecoder: JSONDecoder

    init(baseURL: URL, storage: any AuthenticationStorage, transport: any HTTPTransport, logger: Logger) {
        func apis(_ coding: APIConfig.Coding) -> (API, API, JSONDecoder) {
            var config = APIConfig(baseURL: baseURL, service: Fixtures.service)
            config.coding = coding
            var dependencies = APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport, logger: logger)
            let configured = API(dependencies: dependencies)
            let foundation = Self.foundationDecoder(coding)
            dependencies.responseDecoder = foundation
            return (configured, API(dependencies: dependencies), foundation)
        }
        (gitHub, gitHubJSONDecoder, gitHubDecoder) = apis(APIConfig.Coding())
        (stripe, stripeJSONDecoder, stripeDecoder) = apis(APIConfig.Coding(keyStrategy: .snakeCase))
    }

    /// Foundation's decoder with the key strategy of `coding` and ISO 8601 dates.
    static func foundationDecoder(_ coding: APIConfig.Coding) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        if coding.keyStrategy == .snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
        return decoder
    }

    /// Writes the two payloads where the benchmark server serves them from.
    static func write(to directory: URL) {
        do {
            try RealisticPayloads.gitHubIssues.write(to: directory.appendingPathComponent("github-issues.json"))
            try RealisticPayloads.stripeCharges.write(to: directory.appendingPathComponent("stripe-charges.json"))
        } catch {
            preconditionFailure("cannot write the realistic payloads: \(error)")
        }
    }
}


struct ListIssues: ResourceRequest {
    typealias ResourceType = [GitHubIssue]
    struct Parameters: Encodable, Sendable { var state = "all"; var page = 1 }
    let verb = ResourceVerb.index
    let path: ResourcePath = "repos/acme/widgets/issues"
    let parameters = Parameters()
}

struct ListCharges: ResourceRequest {
    typealias ResourceType = StripeList<StripeCharge>
    struct Parameters: Encodable, Sendable { var limit = 50 }
    let verb = ResourceVerb.index
    let path: ResourcePath = "v1/charges"
    let parameters = Parameters()
}

/// The realistic benchmarks, registered with the others.
func registerRealisticBenchmarks(_ fixtures: Fixtures) {
    let realistic = fixtures.realistic
    let fastGitHub = FastJSONDecoder(dateDecodingStrategy: .iso8601)
    let fastStripe = FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase, dateDecodingStrategy: .iso8601)
    // Each decoding pair also times the fast decoder's scan alone (stage one and the structure
    // walk onto the tape) and stage one alone, in the same iterations.
    let decoding = ["JSONDecoder", "FastJSONDecoder", "FastJSONDecoder scan", "FastJSONDecoder stage one"]
    Paired(names: decoding) { variant in
        let json = RealisticPayloads.gitHubIssues
        switch variant {
        case 0: blackHole(try realistic.gitHubDecoder.decode([GitHubIssue].self, from: json))
        case 1: blackHole(try fastGitHub.decode([GitHubIssue].self, from: json))
        case 2: blackHole(try FastJSONDecoder.scan(json))
        default: blackHole(FastJSONDecoder.stageOne(json))
        }
    }.register("decode GitHub issues paired", maxDuration: .seconds(4))
    Paired(names: decoding) { variant in
        let json = RealisticPayloads.stripeCharges
        switch variant {
        case 0: blackHole(try realistic.stripeDecoder.decode(StripeList<StripeCharge>.self, from: json))
        case 1: blackHole(try fastStripe.decode(StripeList<StripeCharge>.self, from: json))
        case 2: blackHole(try FastJSONDecoder.scan(json))
        default: blackHole(FastJSONDecoder.stageOne(json))
        }
    }.register("decode Stripe charges paired", maxDuration: .seconds(4))
    registerCorpusBenchmarks(decoding)

    for concurrency in [1, 32] {
        Paired(names: ["raw AsyncHTTPClient", "api.call default decoder", "api.call JSONDecoder"]) { client in
            try await batch(concurrency) {
                switch client {
                case 0:
                    let path = RealisticAPI.gitHubPath + RealisticAPI.gitHubQuery
                    blackHole(try await fixtures.raw(path, as: [GitHubIssue].self, decoder: realistic.gitHubDecoder))
                case 1: blackHole(try await realistic.gitHub.call(ListIssues()))
                default: blackHole(try await realistic.gitHubJSONDecoder.call(ListIssues()))
                }
            }
        }.register("GitHub issues C=\(concurrency) paired", repeats: concurrency == 1 ? 4 : 1, maxDuration: .seconds(10))
        Paired(names: ["raw AsyncHTTPClient", "api.call default decoder", "api.call JSONDecoder"]) { client in
            try await batch(concurrency) {
                switch client {
                case 0:
                    let path = RealisticAPI.stripePath + RealisticAPI.stripeQuery
                    blackHole(try await fixtures.raw(path, as: StripeList<StripeCharge>.self, decoder: realistic.stripeDecoder))
                case 1: blackHole(try await realistic.stripe.call(ListCharges()))
                default: blackHole(try await realistic.stripeJSONDecoder.call(ListCharges()))
                }
            }
        }.register("Stripe charges C=\(concurrency) paired", repeats: concurrency == 1 ? 4 : 1, maxDuration: .seconds(10))
    }
}
