import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

/// Step 4 of a call: a 2xx response decodes to the request's `ResourceType`, anything else
/// becomes an ``APIError`` with the decoded `ErrorResponse`.
enum ResponseValidator {
    /// Validates `response`, whose body collected is `body`.
    static func validate<Request: ResourceRequest>(
        _ response: TransportResponse,
        body: ByteBuffer,
        for request: Request,
        decoder: any ResponseDecoder
    ) throws(APIError) -> APIResponse<Request.ResourceType> {
        if body.readableBytes > 0, let encoding = response.headerFields[.contentEncoding], !isIdentity(encoding) {
            // The transport did not decode it (an encoding it does not know, or decompression off).
            throw APIError(
                kind: .unsupportedContentEncoding,
                status: response.status,
                detail: "the body is encoded as \(commonEncoding(encoding) ?? "something other than gzip or deflate"), which is not decoded"
            ).at(.validatingResponse)
        }
        guard response.status.kind == .successful else {
            var error = APIError(kind: response.status == .unauthorized ? .unauthorized : .unacceptableStatus, status: response.status)
                .at(.validatingResponse)
            if body.readableBytes > 0 {
                if Request.ErrorResponse.self != Empty.self {
                    error.errorResponse = try? decode(Request.ErrorResponse.self, from: body, decoder: decoder)
                } else if response.headerFields[.contentType].map({ MediaType.essence(of: $0) == "application/problem+json" }) == true {
                    error.errorResponse = try? decode(ProblemDetails.self, from: body, decoder: JSONDecoder())
                }
            }
            throw error
        }
        let value: Request.ResourceType
        if Request.ResourceType.self == Empty.self, let empty = Empty() as? Request.ResourceType {
            value = empty
        } else {
            do {
                value = try decode(Request.ResourceType.self, from: body, decoder: decoder)
            } catch {
                var failure = APIError(kind: .decodingFailed, underlying: error).at(.decodingBody)
                failure.status = response.status
                if let decoding = error as? DecodingError {
                    failure.codingPath = APIError.codingPath(of: decoding)
                    failure.detail = body.readableBytes == 0 ? "the body is empty" : APIError.reason(of: decoding)
                }
                if let type = response.headerFields[.contentType], !MediaType.isJSON(type), body.readableBytes > 0 {
                    // The server's media type is response text: named only when it is a common one.
                    failure.detail = "the body is \(Self.commonMediaType(type) ?? "of another media type"), not JSON"
                }
                throw failure
            }
        }
        return APIResponse(value: value, status: response.status, headerFields: response.headerFields)
    }

    static func isIdentity(_ encoding: String) -> Bool {
        encoding.split(separator: ",").allSatisfy { $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity" }
    }

    /// `encoding` when it is a registered content coding, else `nil` (it is response text).
    private static func commonEncoding(_ encoding: String) -> String? {
        let name = encoding.trimmingCharacters(in: .whitespaces).lowercased()
        return ["br", "zstd", "compress", "gzip", "deflate", "x-gzip", "exi", "pack200-gzip", "dcb", "dcz"].contains(name) ? name : nil
    }

    /// `contentType`'s media type when it is one of a few well-known ones, else `nil`.
    static func commonMediaType(_ contentType: String) -> String? {
        let type = String(MediaType.essence(of: contentType))
        let known: Set<String> = ["text/html", "text/plain", "text/xml", "application/xml", "application/octet-stream", "application/x-www-form-urlencoded"]
        return known.contains(type) ? type : nil
    }


    private static func decode<T: Decodable>(_ type: T.Type, from body: ByteBuffer, decoder: any ResponseDecoder) throws -> T {
        try decoder.decode(type, from: Data(buffer: body, byteTransferStrategy: .noCopy))
    }
}
