// A string in double quotes with its special characters escaped, for text that a parser reads
// back: predicate literals (`\uXXXX` for control characters) and Swift string literals written
// by codegen (`\u{X}`). `\\ \" \n \r \t` are escaped the same in both.

public enum TextQuoting {
    /// `text` in double quotes; a control character (below U+0020, and U+007F) other than
    /// `\n \r \t` is written by `control`.
    public static func quoted(_ text: String, control: (UInt32) -> String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += control(scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
