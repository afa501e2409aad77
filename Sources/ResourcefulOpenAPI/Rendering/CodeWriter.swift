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
            // Every line break the document's text holds starts a new `///` line: a carriage
            // return left inside one would end the comment, and the rest of the line would be code.
            for text in paragraph.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
                let trimmed = String(text).withoutInvisibleScalars().trimmingTrailingSpaces()
                line(trimmed.isEmpty ? "///" : "/// " + trimmed)
            }
        }
    }

    /// A `//` comment of one line: the text's line breaks are spaces, its invisible characters left
    /// out, as in ``documentation(_:_:)``.
    mutating func comment(_ text: String) {
        line("// " + text.split(whereSeparator: \.isNewline).joined(separator: " ").withoutInvisibleScalars())
    }

    /// Removes the empty line a block's last member left before the closing brace.
    mutating func trimBlankLine() {
        if text.hasSuffix("\n\n") { text.removeLast() }
    }
}

extension String {
    /// Without control and format characters (a tab is a space): a right-to-left override would
    /// show a comment's text, or the code after it, in another order than the compiler reads it.
    fileprivate func withoutInvisibleScalars() -> String {
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if scalar == "\t" {
                result.append(" ")
            } else if !scalar.isInvisible {
                result.append(scalar)
            }
        }
        return String(result)
    }

    fileprivate func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return String(result)
    }
}

/// A Swift string literal for `text`: quotes, backslashes, control and format characters and line
/// separators escaped, and `\(` never read as an interpolation.
func swiftStringLiteral(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        case _ where scalar.isInvisible:
            result += "\\u{\(String(scalar.value, radix: 16))}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}

extension Unicode.Scalar {
    /// A control or format character, or a line or paragraph separator: written escaped in a
    /// string literal, left out of a comment.
    fileprivate var isInvisible: Bool {
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
