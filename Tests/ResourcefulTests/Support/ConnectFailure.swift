/// What a connection failure's description says.
enum ConnectFailure {
    /// The number of connections a failure's description says were tried.
    static func attempts(_ description: String) -> Int? {
        guard let match = description.firstMatch(of: /\((\d+) attempts? within http\.connectRetryBudget\)/) else { return nil }
        return Int(match.1)
    }
}
