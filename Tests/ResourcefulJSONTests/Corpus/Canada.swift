/// `canada.json` (the outline of Canada as GeoJSON): about 111,000 coordinate pairs, numbers with
/// up to 17 significant digits, decoded as `Double`.
struct Canada: Codable, Equatable, Sendable {
    struct Feature: Codable, Equatable, Sendable {
        var type: String
        var properties: [String: String]
        var geometry: Geometry
    }

    struct Geometry: Codable, Equatable, Sendable {
        var type: String
        var coordinates: [[[Double]]]
    }

    var type: String
    var features: [Feature]
}
