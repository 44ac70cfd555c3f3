//! Go's text conventions that error messages copied from Kubernetes and OpenKruise depend on.

use std::fmt::Write as _;

/// A string quoted as Go's `strconv.Quote` (and `%q`, `%#v`) quotes it.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                if (c as u32) <= 0xffff {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `strconv.Atoi`: a decimal integer with an optional sign. On overflow Go returns the value
/// clamped to the 64-bit range together with the error; both are returned here.
pub fn atoi(s: &str) -> Result<i64, (i64, String)> {
    use std::num::IntErrorKind;
    s.parse::<i64>().map_err(|e| match e.kind() {
        IntErrorKind::PosOverflow => (i64::MAX, atoi_error(s, "value out of range")),
        IntErrorKind::NegOverflow => (i64::MIN, atoi_error(s, "value out of range")),
        _ => (0, atoi_error(s, "invalid syntax")),
    })
}

fn atoi_error(s: &str, why: &str) -> String {
    format!("strconv.Atoi: parsing {}: {why}", quote(s))
}

/// Appends `s` as a JSON string the way Go's `encoding/json` writes it: serde_json's escaping plus
/// `<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes.
pub fn json_string(s: &str, out: &mut String) {
    let quoted = serde_json::Value::String(s.to_owned()).to_string();
    for c in quoted.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        let cases = [
            ("plain", "\"plain\""),
            ("a\"b", "\"a\\\"b\""),
            ("tab\t", "\"tab\\t\""),
            ("\u{1}", "\"\\x01\""),
            ("é", "\"é\""),
        ];
        for (input, want) in cases {
            assert_eq!(quote(input), want, "{input:?}");
        }
    }

    #[test]
    fn atoi_like_go() {
        assert_eq!(atoi("+12"), Ok(12));
        assert_eq!(atoi("-3"), Ok(-3));
        assert_eq!(
            atoi("x"),
            Err((0, "strconv.Atoi: parsing \"x\": invalid syntax".into()))
        );
        assert_eq!(
            atoi(""),
            Err((0, "strconv.Atoi: parsing \"\": invalid syntax".into()))
        );
        assert_eq!(
            atoi("99999999999999999999"),
            Err((
                i64::MAX,
                "strconv.Atoi: parsing \"99999999999999999999\": value out of range".into()
            ))
        );
    }
}
