public import ResourcefulJSON
import Foundation

extension FastJSONDecoder: ResponseDecoder {}

extension FastJSONDecoder {
    /// A decoder with the key and date strategies of `coding`, as the live dependencies make it.
    package init(coding: APIConfig.Coding) {
        let foundation = JSONDecoder(coding: coding)
        self.init(keyDecodingStrategy: foundation.keyDecodingStrategy, dateDecodingStrategy: foundation.dateDecodingStrategy)
    }
}
