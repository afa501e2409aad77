/// `citm_catalog.json` (a concert hall's catalogue, pretty-printed): dictionaries keyed by ids,
/// long arrays of small objects, many nulls; keys in camel case, read with the default keys.
struct CITMCatalog: Codable, Equatable, Sendable {
    struct Event: Codable, Equatable, Sendable {
        var description: String?
        var id: Int
        var logo: String?
        var name: String
        var subTopicIds: [Int]
        var subjectCode: String?
        var subtitle: String?
        var topicIds: [Int]
    }

    struct Performance: Codable, Equatable, Sendable {
        var eventId: Int
        var id: Int
        var logo: String?
        var name: String?
        var prices: [Price]
        var seatCategories: [SeatCategory]
        var seatMapImage: String?
        var start: Int64
        var venueCode: String
    }

    struct Price: Codable, Equatable, Sendable {
        var amount: Int
        var audienceSubCategoryId: Int
        var seatCategoryId: Int
    }

    struct SeatCategory: Codable, Equatable, Sendable {
        var areas: [Area]
        var seatCategoryId: Int
    }

    struct Area: Codable, Equatable, Sendable {
        var areaId: Int
        var blockIds: [Int]
    }

    var areaNames: [String: String]
    var audienceSubCategoryNames: [String: String]
    var blockNames: [String: String]
    var events: [String: Event]
    var performances: [Performance]
    var seatCategoryNames: [String: String]
    var subTopicNames: [String: String]
    var subjectNames: [String: String]
    var topicNames: [String: String]
    var topicSubTopics: [String: [Int]]
    var venueNames: [String: String]
}
