import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

/// Step 4 of a call: a 2xx response decodes to the request's `ResourceType`, anything else
/// becomes an ``APIError`` with the decoded `ErrorResponse`.
enum ResponseValidator {
    static func validate<Request: ResourceRequest>(
        _ response: TransportResponse,
        for request: Request,
        decoder: any ResponseDecoder
    ) throws(APIError) -> APIResponse<Request.ResourceType> {
        guard response.status.kind == .successful else {
            var error = APIError(kind: response.status == .unauthorized ? .unauthorized : .unacceptableStatus, status: response.status)
            if response.body.readableBytes > 0 {
                if Request.ErrorResponse.self != Empty.self {
                    error.errorResponse = try? decode(Request.ErrorResponse.self, from: response.body, decoder: decoder)
                } else if response.headerFields[.contentType]?.lowercased().hasPrefix("application/problem+json") == true {
                    error.errorResponse = try? decode(ProblemDetails.self, from: response.body, decoder: JSONDecoder())
                }
            }
            throw error
        }
        let value: Request.ResourceType
        if Request.ResourceType.self == Empty.self, let empty = Empty() as? Request.ResourceType {
            value = empty
        } else {
            do {
                value = try decode(Request.ResourceType.self, from: response.body, decoder: decoder)
            } catch {
                var failure = APIError(kind: .decodingFailed, underlying: error)
                failure.status = response.status
                if let decoding = error as? DecodingError {
                    failure.codingPath = APIError.codingPath(of: decoding)
                    failure.detail = response.body.readableBytes == 0 ? "the body is empty" : APIError.reason(of: decoding)
                }
                if let type = response.headerFields[.contentType], !Self.isJSON(type), response.body.readableBytes > 0 {
                    failure.detail = "the body is \(type.split(separator: ";").first.map(String.init) ?? type), not JSON"
                }
                throw failure
            }
        }
        return APIResponse(value: value, status: response.status, headerFields: response.headerFields)
    }

    static func isJSON(_ contentType: String) -> Bool {
        let type = contentType.lowercased()
        return type.hasPrefix("application/json") || type.split(separator: ";").first?.hasSuffix("+json") == true
    }

    private static func decode<T: Decodable>(_ type: T.Type, from body: ByteBuffer, decoder: any ResponseDecoder) throws -> T {
        try decoder.decode(type, from: Data(buffer: body, byteTransferStrategy: .noCopy))
    }
}
