//! The expression language of `resourcesExpr`, evaluated as OpenKruise's calculator does.
//!
//! Grammar (usual precedence, left-associative; unary minus applies to a factor):
//!
//! ```text
//! expr   := term (('+' | '-') term)*
//! term   := factor (('*' | '/') factor)*
//! factor := NUMBER | QUANTITY | IDENT | IDENT '(' expr ')' | IDENT '(' expr ',' expr ')' | '(' expr ')' | '-' factor
//! ```
//!
//! Tokens: a NUMBER is a float with optional exponent, or a percentage (`50%` is 0.5); a QUANTITY is a number
//! directly followed by `m k M G T P Ki Mi Gi Ti Pi`; an IDENT is a letter then letters, digits or `_`
//! (a variable, `cpu` or `memory`, or a function, `max` / `min`, both case-insensitive). The scanner works on
//! bytes, each read as the Latin-1 character of that value, as OpenKruise's does; a NUL byte ends the input. A
//! number that Go's `ParseFloat` rejects (`100Mib`, `1e`) silently counts as 0, as in OpenKruise.
//!
//! Values are numbers (`f64`) or quantities. `+` and `-` turn a number operand into milli-units; `*` and `/`
//! take a quantity and a number, and compute on the quantity's milli-value, truncating; `max` / `min` compare
//! (a number as milli-units) and return an operand. Errors are OpenKruise's: the last semantic error met
//! (`undefined variable: x`, `division by zero`, …) wins over a syntax error (`parse error: syntax error at
//! line L, col C`, the position just after the offending token), as the evaluation of the parsed prefix
//! happens first there too; a negative result is refused.

use kruise_core::quantity::Quantity;

/// A value of the calculator.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Number(f64),
    Quantity(Quantity),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token<'a> {
    Eof,
    Char(u8),
    Number(&'a [u8]),
    Quantity(&'a [u8]),
    Ident(&'a [u8]),
    /// A byte the grammar has no use for.
    Unknown,
}

/// Go's `unicode.IsSpace` of a byte read as a Latin-1 character.
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xa0)
}

/// Go's `unicode.IsLetter` of a byte read as a Latin-1 character.
fn is_letter(b: u8) -> bool {
    b.is_ascii_alphabetic() || matches!(b, 0xaa | 0xb5 | 0xba) || (b >= 0xc0 && b != 0xd7 && b != 0xf7)
}

struct Lexer<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    /// The byte at the cursor; 0 at the end (a NUL byte reads the same).
    fn peek(&self) -> u8 {
        self.input.get(self.pos).copied().unwrap_or(0)
    }

    fn next(&mut self) -> Token<'a> {
        while self.peek() != 0 && is_space(self.peek()) {
            self.pos += 1;
        }
        let Some(&b) = self.input.get(self.pos) else {
            return Token::Eof;
        };
        self.pos += 1;
        match b {
            0 => Token::Eof,
            b'+' | b'-' | b'*' | b'/' | b'(' | b')' | b',' => Token::Char(b),
            b'.' | b'0'..=b'9' => {
                self.pos -= 1;
                let text = self.number();
                if is_quantity(text) {
                    Token::Quantity(text)
                } else {
                    Token::Number(text)
                }
            }
            b if is_letter(b) => {
                let start = self.pos - 1;
                while is_letter(self.peek()) || self.peek().is_ascii_digit() || self.peek() == b'_' {
                    self.pos += 1;
                }
                Token::Ident(&self.input[start..self.pos])
            }
            _ => Token::Unknown,
        }
    }

    /// A number: digits, one `.`, an exponent (`e`, optional sign, digits), one `%`, then a unit (letters).
    fn number(&mut self) -> &'a [u8] {
        let start = self.pos;
        let (mut dot, mut exp, mut percent, mut exp_digit) = (false, false, false, false);
        loop {
            let b = self.peek();
            match b {
                0 => break,
                b'0'..=b'9' => exp_digit = false,
                b'.' if !(dot || exp || percent) => dot = true,
                b'e' | b'E' if !(exp || percent) => {
                    exp = true;
                    exp_digit = true;
                }
                b'+' | b'-' if exp_digit => exp_digit = false,
                b'%' if !percent => percent = true,
                b if is_letter(b) && !exp_digit && !matches!(b, b'e' | b'E') => {
                    while is_letter(self.peek()) {
                        self.pos += 1;
                    }
                    break;
                }
                _ => break,
            }
            self.pos += 1;
        }
        &self.input[start..self.pos]
    }

    /// OpenKruise's position of the last token read: line and column (1-based, in bytes).
    fn position(&self) -> (usize, usize) {
        let read = &self.input[..self.pos.min(self.input.len())];
        let line = 1 + read.iter().filter(|&&b| b == b'\n').count();
        let col = match read.iter().rposition(|&b| b == b'\n') {
            Some(i) => self.pos - i,
            None => self.pos + 1,
        };
        (line, col)
    }
}

/// A number token is a quantity when its numeric part is followed by exactly one of the supported units.
fn is_quantity(text: &[u8]) -> bool {
    let Some(end) = text
        .iter()
        .position(|b| !(b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')))
    else {
        return false;
    };
    end > 0
        && [
            &b"m"[..],
            b"k",
            b"M",
            b"G",
            b"T",
            b"P",
            b"Ki",
            b"Mi",
            b"Gi",
            b"Ti",
            b"Pi",
        ]
        .contains(&&text[end..])
}

/// Go's `strconv.ParseFloat` on a number token (the token is ASCII apart from unit letters, so Rust's float
/// syntax accepts exactly what Go's does); a rejected text is 0.
fn parse_number(text: &[u8]) -> f64 {
    let float = |t: &[u8]| std::str::from_utf8(t).ok().and_then(|t| t.parse::<f64>().ok());
    match text.strip_suffix(b"%") {
        // Go reports an out-of-range percentage as an error (counted as 0), a bare number as ±Inf.
        Some(t) => float(t).filter(|v| v.is_finite()).map_or(0.0, |v| v / 100.0),
        None => float(text).unwrap_or(0.0),
    }
}

/// Bytes as Go writes them into a UTF-8 message: every byte of an invalid sequence becomes U+FFFD.
fn go_text(bytes: &[u8], lower: bool) -> String {
    let mut out = String::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, skip) = match std::str::from_utf8(rest) {
            Ok(s) => (s, 0),
            Err(e) => (
                std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
                1,
            ),
        };
        if lower {
            out.extend(valid.chars().flat_map(char::to_lowercase));
        } else {
            out.push_str(valid);
        }
        if skip == 0 {
            break;
        }
        out.push('\u{fffd}');
        rest = &rest[valid.len() + skip..];
    }
    out
}

/// Go's `int64(f)` on amd64: NaN and out-of-range values give the minimum.
pub(crate) fn go_int64(f: f64) -> i64 {
    // `i64::MIN as f64` is exactly -2^63 and `i64::MAX as f64` rounds to 2^63: the range that converts.
    if (i64::MIN as f64..i64::MAX as f64).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// A number as a quantity: milli-units, DecimalSI.
fn to_quantity(v: &Value) -> Quantity {
    match v {
        Value::Quantity(q) => q.clone(),
        Value::Number(n) => Quantity::from_milli(go_int64(n * 1000.0)),
    }
}

struct SyntaxError;

struct Parser<'a> {
    lexer: Lexer<'a>,
    look: Token<'a>,
    variable: &'a str,
    value: &'a Value,
    /// The last semantic error (a later one replaces an earlier one).
    error: Option<String>,
}

type Eval = Result<Option<Value>, SyntaxError>;

impl<'a> Parser<'a> {
    fn advance(&mut self) {
        self.look = self.lexer.next();
    }

    fn fail(&mut self, message: impl Into<String>) -> Option<Value> {
        self.error = Some(message.into());
        None
    }

    fn expr(&mut self) -> Eval {
        let mut left = self.term()?;
        while let Token::Char(op @ (b'+' | b'-')) = self.look {
            self.advance();
            let right = self.term()?;
            left = match (left, right) {
                (Some(l), Some(r)) => self.add(&l, &r, op == b'-'),
                _ => None,
            };
        }
        Ok(left)
    }

    fn term(&mut self) -> Eval {
        let mut left = self.factor()?;
        while let Token::Char(op @ (b'*' | b'/')) = self.look {
            self.advance();
            let right = self.factor()?;
            left = match (left, right) {
                (Some(l), Some(r)) if op == b'*' => self.mul(l, r),
                (Some(l), Some(r)) => self.div(l, r),
                _ => None,
            };
        }
        Ok(left)
    }

    fn factor(&mut self) -> Eval {
        match self.look {
            Token::Number(text) => {
                self.advance();
                Ok(Some(Value::Number(parse_number(text))))
            }
            Token::Quantity(text) => {
                self.advance();
                let text = std::str::from_utf8(text).unwrap_or_default();
                Ok(match Quantity::parse(text) {
                    Ok(q) => Some(Value::Quantity(q)),
                    Err(e) => self.fail(e.to_string()),
                })
            }
            Token::Ident(name) => {
                self.advance();
                if self.look != Token::Char(b'(') {
                    let lowered = go_text(name, true);
                    return Ok(if lowered == self.variable {
                        Some(self.value.clone())
                    } else {
                        self.fail(format!("undefined variable: {lowered}"))
                    });
                }
                self.advance();
                let mut args = vec![self.expr()?];
                if self.look == Token::Char(b',') {
                    self.advance();
                    args.push(self.expr()?);
                }
                if self.look != Token::Char(b')') {
                    return Err(SyntaxError);
                }
                self.advance();
                Ok(self.call(name, args))
            }
            Token::Char(b'(') => {
                self.advance();
                let inner = self.expr()?;
                if self.look != Token::Char(b')') {
                    return Err(SyntaxError);
                }
                self.advance();
                Ok(inner)
            }
            Token::Char(b'-') => {
                self.advance();
                Ok(self.factor()?.map(|v| match v {
                    Value::Number(n) => Value::Number(-n),
                    Value::Quantity(mut q) => {
                        q.neg();
                        Value::Quantity(q)
                    }
                }))
            }
            _ => Err(SyntaxError),
        }
    }

    fn add(&mut self, left: &Value, right: &Value, subtract: bool) -> Option<Value> {
        if let (Value::Number(l), Value::Number(r)) = (left, right) {
            return Some(Value::Number(if subtract { l - r } else { l + r }));
        }
        let mut result = to_quantity(left);
        let mut r = to_quantity(right);
        if subtract {
            r.neg();
        }
        match result.add(&r) {
            Ok(()) => Some(Value::Quantity(result)),
            Err(e) => self.fail(e.to_string()),
        }
    }

    /// A quantity's milli-value times `factor`, truncated, in the quantity's format.
    fn scaled(&mut self, mut q: Quantity, factor: f64, divide: bool) -> Option<Value> {
        let milli = match q.milli_value() {
            Ok(m) => m as f64,
            Err(e) => return self.fail(e.to_string()),
        };
        q.set_milli(go_int64(if divide { milli / factor } else { milli * factor }));
        Some(Value::Quantity(q))
    }

    fn mul(&mut self, left: Value, right: Value) -> Option<Value> {
        match (left, right) {
            (Value::Quantity(_), Value::Quantity(_)) => self.fail("multiplication of two quantities"),
            (Value::Quantity(q), Value::Number(n)) | (Value::Number(n), Value::Quantity(q)) => {
                self.scaled(q, n, false)
            }
            (Value::Number(l), Value::Number(r)) => Some(Value::Number(l * r)),
        }
    }

    fn div(&mut self, left: Value, right: Value) -> Option<Value> {
        let n = match right {
            Value::Quantity(_) => return self.fail("division by quantity"),
            Value::Number(n) => n,
        };
        if n == 0.0 {
            return self.fail("division by zero");
        }
        match left {
            Value::Quantity(q) => self.scaled(q, n, true),
            Value::Number(l) => Some(Value::Number(l / n)),
        }
    }

    fn call(&mut self, name: &[u8], args: Vec<Option<Value>>) -> Option<Value> {
        let lowered = go_text(name, true);
        let want_max = match lowered.as_str() {
            "max" => true,
            "min" => false,
            _ => return self.fail(format!("unknown function: {}", go_text(name, false))),
        };
        if args.len() != 2 {
            return self.fail(format!(
                "{lowered} function requires exactly 2 arguments, got {}",
                args.len()
            ));
        }
        let mut args = args.into_iter();
        let (Some(Some(left)), Some(Some(right))) = (args.next(), args.next()) else {
            return None;
        };
        if let (Value::Number(l), Value::Number(r)) = (&left, &right) {
            let left_wins = if want_max { l >= r } else { l <= r };
            return Some(if left_wins { left } else { right });
        }
        // A number operand takes part (and is returned) as milli-units.
        let (l, r) = (to_quantity(&left), to_quantity(&right));
        let order = l.compare(&r);
        let left_wins = if want_max { order.is_ge() } else { order.is_le() };
        Some(Value::Quantity(if left_wins { l } else { r }))
    }
}

/// Go's `%g` of a float (shortest representation).
pub(crate) fn go_format_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}", "0".repeat(int_len - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

/// Evaluates `expr` with the one variable `variable` (`cpu` or `memory`) bound to `value`. The error is
/// OpenKruise's calculator error.
pub(crate) fn evaluate(expr: &str, variable: &str, value: &Quantity) -> Result<Value, String> {
    evaluate_with(expr, variable, &Value::Quantity(value.clone()))
}

/// OpenKruise's SidecarSet validation of an expression: it must evaluate with `variable` bound to the number 1
/// (`validateResourceExpression` in pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go).
pub(crate) fn check(expr: &str, variable: &str) -> Result<(), String> {
    evaluate_with(expr, variable, &Value::Number(1.0)).map(|_| ())
}

fn evaluate_with(expr: &str, variable: &str, value: &Value) -> Result<Value, String> {
    let mut lexer = Lexer {
        input: expr.as_bytes(),
        pos: 0,
    };
    let look = lexer.next();
    let mut p = Parser {
        lexer,
        look,
        variable,
        value,
        error: None,
    };
    let parsed = p.expr().and_then(|v| {
        if p.look == Token::Eof {
            Ok(v)
        } else {
            Err(SyntaxError)
        }
    });
    let result = match parsed {
        Err(SyntaxError) => {
            let (line, col) = p.lexer.position();
            return Err(p
                .error
                .unwrap_or_else(|| format!("parse error: syntax error at line {line}, col {col}")));
        }
        Ok(None) => return Err(p.error.unwrap_or_else(|| "no result from parser".into())),
        Ok(Some(v)) => v,
    };
    match &result {
        Value::Quantity(q) if q.is_negative() => {
            Err(format!("calculation result is negative: {}", q.to_go_string()))
        }
        Value::Number(n) if *n < 0.0 => Err(format!("calculation result is negative: {}", go_format_g(*n))),
        _ => Ok(result),
    }
}

#[cfg(test)]
mod tests;
