import Foundation

/// `twitter.json` (a search result of 100 statuses, much of it Japanese): keys in snake case,
/// read with `convertFromSnakeCase`; nested statuses, optional fields and 64-bit ids.
struct Twitter: Codable, Equatable, Sendable {
    var statuses: [TwitterStatus]
    var searchMetadata: TwitterSearchMetadata
}

struct TwitterSearchMetadata: Codable, Equatable, Sendable {
    var completedIn: Double
    var maxId: Int64
    var maxIdStr: String
    var nextResults: String
    var query: String
    var refreshUrl: String
    var count: Int
    var sinceId: Int64
    var sinceIdStr: String
}

struct TwitterStatus: Codable, Equatable, Sendable {
    struct Metadata: Codable, Equatable, Sendable {
        var resultType: String
        var isoLanguageCode: String
    }

    var metadata: Metadata
    var createdAt: String
    var id: Int64
    var idStr: String
    var text: String
    var source: String
    var truncated: Bool
    var inReplyToStatusId: Int64?
    var inReplyToStatusIdStr: String?
    var inReplyToUserId: Int64?
    var inReplyToUserIdStr: String?
    var inReplyToScreenName: String?
    var user: TwitterUser
    var geo: String?
    var coordinates: String?
    var place: String?
    var contributors: String?
    // A class box, so that a status can hold the status it retweets.
    var retweetedStatus: TwitterRetweet?
    var retweetCount: Int
    var favoriteCount: Int
    var entities: TwitterEntities
    var favorited: Bool
    var retweeted: Bool
    var possiblySensitive: Bool?
    var lang: String
}

/// The status a status retweets.
final class TwitterRetweet: Codable, Equatable, Sendable {
    let status: TwitterStatus

    init(from decoder: any Decoder) throws { status = try TwitterStatus(from: decoder) }
    func encode(to encoder: any Encoder) throws { try status.encode(to: encoder) }
    static func == (lhs: TwitterRetweet, rhs: TwitterRetweet) -> Bool { lhs.status == rhs.status }
}

struct TwitterUser: Codable, Equatable, Sendable {
    struct Entities: Codable, Equatable, Sendable {
        struct URLs: Codable, Equatable, Sendable { var urls: [TwitterURL] }
        var url: URLs?
        var description: URLs
    }

    var id: Int64
    var idStr: String
    var name: String
    var screenName: String
    var location: String
    var description: String
    var url: String?
    var entities: Entities
    var protected: Bool
    var followersCount: Int
    var friendsCount: Int
    var listedCount: Int
    var createdAt: String
    var favouritesCount: Int
    var utcOffset: Int?
    var timeZone: String?
    var geoEnabled: Bool
    var verified: Bool
    var statusesCount: Int
    var lang: String
    var contributorsEnabled: Bool
    var isTranslator: Bool
    var isTranslationEnabled: Bool
    var profileBackgroundColor: String
    var profileBackgroundImageUrl: String
    var profileBackgroundImageUrlHttps: String
    var profileBackgroundTile: Bool
    var profileImageUrl: String
    var profileImageUrlHttps: String
    var profileBannerUrl: String?
    var profileLinkColor: String
    var profileSidebarBorderColor: String
    var profileSidebarFillColor: String
    var profileTextColor: String
    var profileUseBackgroundImage: Bool
    var defaultProfile: Bool
    var defaultProfileImage: Bool
    var following: Bool
    var followRequestSent: Bool
    var notifications: Bool
}

struct TwitterEntities: Codable, Equatable, Sendable {
    struct Hashtag: Codable, Equatable, Sendable {
        var text: String
        var indices: [Int]
    }

    struct Mention: Codable, Equatable, Sendable {
        var screenName: String
        var name: String
        var id: Int64
        var idStr: String
        var indices: [Int]
    }

    struct Media: Codable, Equatable, Sendable {
        struct Size: Codable, Equatable, Sendable {
            var w: Int
            var h: Int
            var resize: String
        }

        var id: Int64
        var idStr: String
        var indices: [Int]
        var mediaUrl: String
        var mediaUrlHttps: String
        var url: String
        var displayUrl: String
        var expandedUrl: String
        var type: String
        var sizes: [String: Size]
        var sourceStatusId: Int64?
        var sourceStatusIdStr: String?
    }

    var hashtags: [Hashtag]
    var symbols: [Hashtag]
    var urls: [TwitterURL]
    var userMentions: [Mention]
    var media: [Media]?
}

struct TwitterURL: Codable, Equatable, Sendable {
    var url: String
    var expandedUrl: String
    var displayUrl: String
    var indices: [Int]
}
