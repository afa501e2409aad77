extension String {
    /// The text without the line breaks at its end (CR, LF or CRLF), as a stored secret is read:
    /// `echo "$TOKEN" | secret-tool store …`, a mounted file and an exported variable often end
    /// with one.
    package var trimmingLineEnds: String {
        var trimmed = Substring(self)
        while let last = trimmed.last, last == "\n" || last == "\r" || last == "\r\n" { trimmed.removeLast() }
        return String(trimmed)
    }
}
