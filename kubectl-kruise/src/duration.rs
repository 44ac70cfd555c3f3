//! kubectl's durations (`0`, `90s`, `5m`, `1h`, `1m30s`, `500ms`), as `--timeout` flags take them.

/// Parses a kubectl duration (`0`, `90s`, `5m`, `1h`, `1m30s`).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, crate::Error> {
    let bad = || crate::Error::Usage(format!("invalid duration {text:?} (use e.g. 90s, 5m, 1h)"));
    if let Ok(seconds) = text.parse::<u64>() {
        return Ok(std::time::Duration::from_secs(seconds));
    }
    let mut total = 0f64;
    let mut number = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let unit = if c == 'm' && chars.peek() == Some(&'s') {
            chars.next();
            0.001
        } else {
            match c {
                'h' => 3600.0,
                'm' => 60.0,
                's' => 1.0,
                _ => return Err(bad()),
            }
        };
        let value: f64 = number.parse().map_err(|_| bad())?;
        total += value * unit;
        number.clear();
    }
    if !number.is_empty() || !total.is_finite() {
        return Err(bad());
    }
    Ok(std::time::Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_kubectl_writes_them() {
        assert_eq!(parse_duration("0").unwrap().as_secs(), 0);
        assert_eq!(parse_duration("90s").unwrap().as_secs(), 90);
        assert_eq!(parse_duration("1m30s").unwrap().as_secs(), 90);
        assert_eq!(parse_duration("2h").unwrap().as_secs(), 7200);
        assert_eq!(parse_duration("500ms").unwrap().as_millis(), 500);
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("5m3").is_err());
    }
}
