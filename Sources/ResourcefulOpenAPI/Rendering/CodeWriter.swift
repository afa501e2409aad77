/// Builds Swift source text: four-space indentation, `///` comments, no trailing spaces.
struct CodeWriter {
    private(set) var text = ""
    private var depth = 0

    /// One line at the current indentation; an empty line has no indentation.
    mutating func line(_ code: String = "") {
        if !code.isEmpty { text += String(repeating: "    ", count: depth) + code }
        text += "\n"
    }

    /// `opener {`, the body one level in, `}`.
    mutating func block(_ opener: String, _ body: (inout CodeWriter) -> Void) {
        line(opener + " {")
        depth += 1
        body(&self)
        depth -= 1
        line("}")
    }

    /// `switch subject {`, the cases at the switch's own indentation, `}`.
    mutating func switchBlock(_ subject: String, _ body: (inout CodeWriter) -> Void) {
        line("switch \(subject) {")
        body(&self)
        line("}")
    }

    /// A `///` comment of paragraphs separated by empty comment lines; nothing when empty.
    mutating func documentation(_ documentation: Documentation, _ more: [String] = []) {
        let paragraphs = documentation.paragraphs + more
        for (index, paragraph) in paragraphs.enumerated() {
            if index > 0 { line("///") }
            for text in paragraph.split(separator: "\n", omittingEmptySubsequences: false) {
                let trimmed = text.trimmingTrailingSpaces()
                line(trimmed.isEmpty ? "///" : "/// " + trimmed)
            }
        }
    }

    /// Removes the empty line a block's last member left before the closing brace.
    mutating func trimBlankLine() {
        if text.hasSuffix("\n\n") { text.removeLast() }
    }
}

extension Substring {
    fileprivate func trimmingTrailingSpaces() -> String {
        var result = self
        while let last = result.last, last == " " || last == "\t" || last == "\r" { result.removeLast() }
        return String(result)
    }
}

/// A Swift string literal for `text`: quotes, backslashes and control characters escaped, and
/// `\(` never read as an interpolation.
func swiftStringLiteral(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            result += "\\u{\(String(scalar.value, radix: 16))}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}
