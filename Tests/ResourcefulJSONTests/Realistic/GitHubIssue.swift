import Foundation

/// An issue as GitHub's REST API lists it (`GET /repos/{owner}/{repo}/issues`), modelled as an
/// app would: `CodingKeys` for the snake_case names, nested users, labels and a milestone,
/// optionals, enums, ISO 8601 dates, 64-bit ids, and some keys left out.
struct GitHubIssue: Codable, Equatable, Sendable {
    enum State: String, Codable, Sendable { case open, closed }
    enum Association: String, Codable, Sendable {
        case owner = "OWNER", member = "MEMBER", collaborator = "COLLABORATOR", contributor = "CONTRIBUTOR", none = "NONE"
    }

    var id: Int64
    var nodeID: String
    var url: String
    var htmlURL: URL
    var number: Int
    var title: String
    var user: GitHubUser
    var labels: [GitHubLabel]
    var state: State
    var locked: Bool
    var assignee: GitHubUser?
    var assignees: [GitHubUser]
    var milestone: GitHubMilestone?
    var comments: Int
    var createdAt: Date
    var updatedAt: Date
    var closedAt: Date?
    var authorAssociation: Association
    var body: String?
    var reactions: GitHubReactions

    enum CodingKeys: String, CodingKey {
        case id, url, number, title, user, labels, state, locked, assignee, assignees, milestone, comments, body, reactions
        case nodeID = "node_id"
        case htmlURL = "html_url"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case closedAt = "closed_at"
        case authorAssociation = "author_association"
    }
}

struct GitHubUser: Codable, Equatable, Sendable {
    var login: String
    var id: Int64
    var nodeID: String
    var avatarURL: String
    var htmlURL: String
    var type: String
    var siteAdmin: Bool

    enum CodingKeys: String, CodingKey {
        case login, id, type
        case nodeID = "node_id"
        case avatarURL = "avatar_url"
        case htmlURL = "html_url"
        case siteAdmin = "site_admin"
    }
}

struct GitHubLabel: Codable, Equatable, Sendable {
    var id: Int64
    var name: String
    var color: String
    var isDefault: Bool
    var description: String?

    enum CodingKeys: String, CodingKey {
        case id, name, color, description
        case isDefault = "default"
    }
}

struct GitHubMilestone: Codable, Equatable, Sendable {
    var id: Int64
    var number: Int
    var title: String
    var state: GitHubIssue.State
    var openIssues: Int
    var closedIssues: Int
    var createdAt: Date
    var dueOn: Date?

    enum CodingKeys: String, CodingKey {
        case id, number, title, state
        case openIssues = "open_issues"
        case closedIssues = "closed_issues"
        case createdAt = "created_at"
        case dueOn = "due_on"
    }
}

struct GitHubReactions: Codable, Equatable, Sendable {
    var totalCount: Int
    var plusOne: Int
    var minusOne: Int
    var heart: Int
    var rocket: Int

    enum CodingKeys: String, CodingKey {
        case heart, rocket
        case totalCount = "total_count"
        case plusOne = "+1"
        case minusOne = "-1"
    }
}
