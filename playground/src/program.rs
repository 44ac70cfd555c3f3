//! What a container's command does in the simulation, so pods can finish: the simulated kubelet
//! understands `true`, `false`, `exit N`, `sleep N` and `sh -c` / `bash -c` scripts of those joined
//! by `;` and `&&` (`exit` ends the script). Any other command — or none, the image's entrypoint —
//! runs until the pod is deleted.

use std::time::Duration;

use serde_json::Value;

/// A container that ends: after `runs`, with `exit_code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// How long the container runs.
    pub runs: Duration,
    /// Its exit code.
    pub exit_code: i32,
}

/// The exit of a container spec (`command` then `args`, as the runtime joins them), or `None` when
/// it runs until stopped.
pub fn exit_of(container: &Value) -> Option<Exit> {
    let words: Vec<&str> = ["command", "args"]
        .iter()
        .flat_map(|k| container[*k].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let (first, rest) = words.split_first()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if matches!(program, "sh" | "bash" | "ash" | "dash") {
        return match rest {
            ["-c", script, ..] | ["-ec", script, ..] | ["-ce", script, ..] => script_exit(script),
            _ => None,
        };
    }
    let mut all = vec![program];
    all.extend(rest);
    simple(&all).map(|(runs, code, _)| Exit {
        runs,
        exit_code: code,
    })
}

/// One simple command: its duration, exit code, and whether it ends the script (`exit`).
fn simple(words: &[&str]) -> Option<(Duration, i32, bool)> {
    let (first, rest) = words.split_first()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    match (program, rest) {
        ("true" | ":", []) => Some((Duration::ZERO, 0, false)),
        ("false", []) => Some((Duration::ZERO, 1, false)),
        ("exit", []) => Some((Duration::ZERO, 0, true)),
        // The shell keeps the low 8 bits, as `exit 256` ends with 0.
        ("exit", [n]) => n
            .parse::<i64>()
            .ok()
            .map(|n| (Duration::ZERO, n.rem_euclid(256) as i32, true)),
        ("sleep", [n]) => seconds(n).map(|d| (d, 0, false)),
        _ => None,
    }
}

/// `N`, `N.M` or `Ns` seconds (coreutils' sleep also takes m/h/d suffixes).
fn seconds(s: &str) -> Option<Duration> {
    let (number, unit) = match s.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => (&s[..i], c),
        _ => (s, 's'),
    };
    let factor = match unit {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3600.0,
        'd' => 86400.0,
        _ => return None,
    };
    let n: f64 = number.parse().ok()?;
    (n.is_finite() && n >= 0.0).then(|| Duration::from_secs_f64(n * factor))
}

/// A script of simple commands joined by `;`, `&&` or newlines: runs them in order, skipping the
/// command after a `&&` whose left side failed; `None` if any part is not understood.
fn script_exit(script: &str) -> Option<Exit> {
    let mut runs = Duration::ZERO;
    let mut code = 0;
    let mut skip = false;
    let mut after_and = false;
    for (part, joined_by_and) in split(script) {
        let words: Vec<&str> = part.split_whitespace().collect();
        if words.is_empty() {
            // `a && ` or ` && b` is a syntax error; empty `;` parts are not.
            if joined_by_and || after_and {
                return None;
            }
            continue;
        }
        after_and = joined_by_and;
        let (d, c, ends) = simple(&words)?;
        if !skip {
            runs += d;
            code = c;
            if ends {
                return Some(Exit {
                    runs,
                    exit_code: code,
                });
            }
        }
        // After `&&`, the next command runs only if the last one that ran succeeded.
        skip = joined_by_and && (skip || code != 0);
    }
    Some(Exit {
        runs,
        exit_code: code,
    })
}

/// Splits a script at `;`, newlines and `&&`: each part with whether `&&` follows it.
fn split(script: &str) -> Vec<(&str, bool)> {
    let mut out = vec![];
    let mut rest = script;
    loop {
        let next = [";", "\n", "&&"]
            .iter()
            .filter_map(|sep| rest.find(sep).map(|i| (i, *sep)))
            .min();
        match next {
            Some((i, sep)) => {
                out.push((&rest[..i], sep == "&&"));
                rest = &rest[i + sep.len()..];
            }
            None => {
                out.push((rest, false));
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exit(command: Value) -> Option<(u64, i32)> {
        exit_of(&json!({"command": command})).map(|e| (e.runs.as_millis() as u64, e.exit_code))
    }

    #[test]
    fn simple_commands() {
        assert_eq!(exit(json!(["true"])), Some((0, 0)));
        assert_eq!(exit(json!(["/bin/false"])), Some((0, 1)));
        assert_eq!(exit(json!(["sleep", "2"])), Some((2000, 0)));
        assert_eq!(exit(json!(["sleep", "0.5"])), Some((500, 0)));
        assert_eq!(exit(json!(["sleep", "1m"])), Some((60_000, 0)));
        assert_eq!(exit(json!(["nginx"])), None);
        assert_eq!(exit(json!(["sleep", "infinity"])), None);
        assert_eq!(exit_of(&json!({"image": "busybox"})), None, "the entrypoint runs");
        let args = json!({"command": ["sleep"], "args": ["1"]});
        assert_eq!(exit_of(&args).map(|e| e.runs), Some(Duration::from_secs(1)));
    }

    #[test]
    fn scripts() {
        assert_eq!(exit(json!(["sh", "-c", "sleep 1; exit 3"])), Some((1000, 3)));
        assert_eq!(exit(json!(["/bin/sh", "-c", "false && sleep 5"])), Some((0, 1)));
        assert_eq!(exit(json!(["sh", "-c", "false; true"])), Some((0, 0)));
        assert_eq!(exit(json!(["sh", "-c", "exit 2; sleep 9"])), Some((0, 2)));
        assert_eq!(
            exit(json!(["sh", "-c", "false && true; sleep 1"])),
            Some((1000, 0))
        );
        assert_eq!(exit(json!(["bash", "-c", "true && exit 300"])), Some((0, 44)));
        assert_eq!(
            exit(json!(["sh", "-c", "echo hi; exit 0"])),
            None,
            "echo is not simulated"
        );
        assert_eq!(exit(json!(["sh", "-c", "sleep 1 && "])), None);
        assert_eq!(exit(json!(["sh"])), None);
    }
}
