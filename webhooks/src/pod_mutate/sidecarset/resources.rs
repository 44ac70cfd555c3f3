//! `resourcesPolicy` (docs/sidecarset-injection.md#resourcespolicy): a sidecar's resources computed from the
//! pod's containers when
//! the pod is created, as OpenKruise does.
//!
//! 1. Targets: the pod's native-sidecar init containers (`restartPolicy: Always`), then its containers, less
//!    any name an init container or container of a matched SidecarSet has, whose name
//!    `targetContainersNameRegex` matches (unanchored; Go's RE2 syntax, through the `regex` crate). None is an
//!    error.
//! 2. Per resource (`cpu`, `memory`), `targetContainersMode` `sum` adds and `max` takes the largest. A limit is
//!    unlimited as soon as one target has none; a missing request counts as zero.
//! 3. Each non-empty expression of `resourcesExpr` is evaluated ([`calc`]) with one variable bound to the
//!    aggregate: `memory` when the expression has the word `memory`, else `cpu` (whichever resource the
//!    expression is for). A limit whose aggregate is unlimited is not set. A number result is milli-units
//!    for a `cpu` expression, an integer (truncated) for a `memory` one.
//! 4. The sidecar's `resources` become exactly the computed limits and requests.
//!
//! Errors are OpenKruise's messages (its handler answers them with 500).
//!
//! Where kruise-rs differs:
//! * The pattern is compiled by the `regex` crate, whose syntax is RE2's as Go's is, with marginal
//!   differences (Go rejects a nested repetition such as `a**` and accepts `\Q…\E`; `regex` does the
//!   opposite). A pattern that does not compile is reported in Go's frame (`error parsing regexp: …`) with the
//!   crate's description of the error, not Go's wording.
//! * A quantity whose milli-value does not fit in 64 bits is an error (`kruise-rs: quantity out of the
//!   supported range`) where Kubernetes would compute with a wrapped value or 0.
//! * A target quantity that does not parse denies the pod (400, naming the field): OpenKruise could not
//!   decode such a pod at all.
//! * An absent `targetContainersMode` decodes as `sum` (the CRD requires the field); an unknown one aggregates
//!   nothing, as in OpenKruise.
//! * Float-to-integer conversions follow Go on amd64 (out of range gives the minimum `int64`).

mod calc;

use foldhash::HashSet;
use kruise_api::apps_v1beta1::{ResourcesPolicy, TargetContainersModeType};
use kruise_core::quantity::{Quantity, QuantityError};
use regex::Regex;
use serde_json::{Map, Value};

use self::calc::Value as Calculated;
use super::pod_containers::{PodContainers, name, str_field};
use crate::{Denial, crd::field::go_quote};

/// A target container: its list, its index there, the container.
type Target<'a> = (&'static str, usize, &'a Value);

/// The two resources a policy computes, in the order OpenKruise evaluates them.
const RESOURCES: [(&str, &str); 2] = [("cpu", "CPU"), ("memory", "memory")];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Sum,
    Max,
    /// A mode OpenKruise does not know: nothing is aggregated.
    Other,
}

/// A `resourcesPolicy`, prepared with its SidecarSet.
#[derive(Clone, Debug)]
pub(crate) struct Policy {
    mode: Mode,
    pattern: String,
    /// The compiled pattern, or the error OpenKruise reports for it.
    regex: Result<Regex, String>,
    /// `[cpu, memory]` limit expressions (empty: not set).
    limits: [String; 2],
    requests: [String; 2],
}

impl Policy {
    pub(crate) fn new(policy: &ResourcesPolicy) -> Policy {
        let mode = match &policy.target_containers_mode {
            TargetContainersModeType::Sum => Mode::Sum,
            TargetContainersModeType::Max => Mode::Max,
            TargetContainersModeType::Other(_) => Mode::Other,
        };
        let pattern = policy.target_containers_name_regex.clone().unwrap_or_default();
        let regex = Regex::new(&pattern).map_err(|e| {
            format!(
                "invalid regex pattern {}: {}",
                go_quote(&pattern),
                regex_error(&pattern, &e)
            )
        });
        let expr = &policy.resources_expr;
        let limits = expr.limits.as_ref();
        let requests = expr.requests.as_ref();
        let text = |s: Option<&String>| s.cloned().unwrap_or_default();
        Policy {
            mode,
            pattern,
            regex,
            limits: [
                text(limits.and_then(|l| l.cpu.as_ref())),
                text(limits.and_then(|l| l.memory.as_ref())),
            ],
            requests: [
                text(requests.and_then(|r| r.cpu.as_ref())),
                text(requests.and_then(|r| r.memory.as_ref())),
            ],
        }
    }

    /// The sidecar's `resources` for this pod. `excluded`: the container names of every matched SidecarSet.
    pub(crate) fn resources(
        &self,
        pod: &PodContainers<'_>,
        excluded: &HashSet<&str>,
    ) -> Result<Value, Denial> {
        let failed = |message: String| Denial::new(500, "InternalError", message);
        let regex = self
            .regex
            .as_ref()
            .map_err(|e| failed(format!("failed to get target containers: {e}")))?;
        let native = pod
            .init_containers
            .iter()
            .enumerate()
            .filter(|(_, c)| str_field(c, "restartPolicy") == Some("Always"))
            .map(|(i, c)| ("initContainers", i, c));
        let plain = pod
            .containers
            .iter()
            .enumerate()
            .map(|(i, c)| ("containers", i, c));
        let targets: Vec<Target<'_>> = native
            .chain(plain)
            .filter(|(_, _, c)| !excluded.contains(name(c)) && regex.is_match(name(c)))
            .collect();
        if targets.is_empty() {
            return Err(failed(format!(
                "no containers match the regex pattern {}",
                go_quote(&self.pattern)
            )));
        }
        let aggregates = [
            self.aggregate(&targets, RESOURCES[0].0)?,
            self.aggregate(&targets, RESOURCES[1].0)?,
        ];
        let mut limits = Map::new();
        for (i, (resource, label)) in RESOURCES.into_iter().enumerate() {
            if let (false, Some(limit)) = (self.limits[i].is_empty(), &aggregates[i].0) {
                let q = evaluate(&self.limits[i], limit)
                    .map_err(|e| failed(format!("failed to evaluate {label} limits expression: {e}")))?;
                limits.insert(resource.into(), Value::String(q.to_go_string()));
            }
        }
        let mut requests = Map::new();
        for (i, (resource, label)) in RESOURCES.into_iter().enumerate() {
            if !self.requests[i].is_empty() {
                let q = evaluate(&self.requests[i], &aggregates[i].1)
                    .map_err(|e| failed(format!("failed to evaluate {label} requests expression: {e}")))?;
                requests.insert(resource.into(), Value::String(q.to_go_string()));
            }
        }
        let mut out = Map::new();
        if !limits.is_empty() {
            out.insert("limits".into(), Value::Object(limits));
        }
        if !requests.is_empty() {
            out.insert("requests".into(), Value::Object(requests));
        }
        Ok(Value::Object(out))
    }

    /// The aggregated limit (`None`: unlimited) and request of one resource over the targets.
    fn aggregate(
        &self,
        targets: &[Target<'_>],
        resource: &str,
    ) -> Result<(Option<Quantity>, Quantity), Denial> {
        let mut limit = match self.mode {
            Mode::Sum => Some(Quantity::from_int(0)),
            Mode::Max | Mode::Other => None,
        };
        let mut request = match self.mode {
            Mode::Sum => Quantity::from_int(0),
            Mode::Max | Mode::Other => Quantity::unset(),
        };
        let mut seen_request = false;
        let mut unlimited = false;
        for &(list, index, c) in targets {
            let get = |kind: &str| read(c, list, index, kind, resource);
            match get("limits")? {
                None => unlimited = true,
                Some(q) => match (self.mode, &mut limit) {
                    (Mode::Sum, Some(sum)) => sum.add(&q).map_err(out_of_range)?,
                    (Mode::Max, max @ None) => *max = Some(q),
                    (Mode::Max, Some(max)) if q.compare(max).is_gt() => *max = q,
                    _ => {}
                },
            }
            if let Some(q) = get("requests")? {
                match self.mode {
                    Mode::Sum => request.add(&q).map_err(out_of_range)?,
                    Mode::Max if !seen_request || q.compare(&request).is_gt() => request = q,
                    _ => {}
                }
                seen_request = true;
            }
        }
        if unlimited || self.mode == Mode::Other {
            limit = None;
        }
        Ok((limit, request))
    }
}

fn out_of_range(e: QuantityError) -> Denial {
    Denial::new(500, "InternalError", e.to_string())
}

/// `resources.<kind>.<resource>` of a target container. A value that is no quantity makes OpenKruise fail to
/// decode the pod (400).
fn read(c: &Value, list: &str, index: usize, kind: &str, resource: &str) -> Result<Option<Quantity>, Denial> {
    let Some(v) = c
        .get("resources")
        .and_then(|r| r.get(kind))
        .and_then(|m| m.get(resource))
    else {
        return Ok(None);
    };
    let text = match v {
        Value::Null => return Ok(Some(Quantity::unset())),
        Value::String(s) => s.trim().to_string(),
        other => other.to_string(),
    };
    Quantity::parse(&text).map(Some).map_err(|e| {
        Denial::new(
            400,
            "BadRequest",
            format!("spec.{list}[{index}].resources.{kind}.{resource}: {e}"),
        )
    })
}

/// Evaluates one expression against its aggregate and turns a number result into a quantity.
fn evaluate(expr: &str, aggregate: &Quantity) -> Result<Quantity, String> {
    let variable = if has_word(expr, "memory") { "memory" } else { "cpu" };
    let result = calc::evaluate(expr, variable, aggregate)
        .map_err(|e| format!("failed to parse expression {}: {e}", go_quote(expr)))?;
    Ok(match result {
        Calculated::Quantity(q) => q,
        Calculated::Number(n) if variable == "cpu" => Quantity::from_milli(calc::go_int64(n * 1000.0)),
        Calculated::Number(n) => Quantity::from_int(calc::go_int64(n)),
    })
}

/// Go's `\bword\b` (ASCII word boundaries).
fn has_word(text: &str, word: &str) -> bool {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + word.len()).copied();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// OpenKruise's SidecarSet validation of `targetContainersNameRegex`: the error of a pattern that does not
/// compile, in Go's frame (`error parsing regexp: …: `pattern``).
pub(crate) fn regex_problem(pattern: &str) -> Option<String> {
    Regex::new(pattern).err().map(|e| regex_error(pattern, &e))
}

/// OpenKruise's SidecarSet validation of one `resourcesExpr` expression for `variable` (`cpu`, `memory`).
pub(crate) fn expression_problem(expr: &str, variable: &str) -> Option<String> {
    calc::check(expr, variable).err()
}

/// A `regex` compile error in Go's frame, with the crate's one-line description (its message is a
/// multi-line diagram).
fn regex_error(pattern: &str, e: &regex::Error) -> String {
    format!("error parsing regexp: {}: `{pattern}`", regex_description(e))
}

fn regex_description(e: &regex::Error) -> String {
    match e {
        regex::Error::Syntax(text) => text
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("error: "))
            .unwrap_or(text.trim())
            .to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_boundaries_are_ascii() {
        assert!(has_word("memory*50%", "memory"));
        assert!(has_word("max(memory, 1)", "memory"));
        assert!(has_word("\u{e9}memory", "memory"));
        assert!(!has_word("memory_x", "memory"));
        assert!(!has_word("2memory", "memory"));
        assert!(!has_word("MEMORY", "memory"));
        assert!(has_word("memorymemory memory", "memory"));
    }

    #[test]
    fn regex_errors_are_one_line() {
        let pattern = String::from("(");
        let e = Regex::new(&pattern).unwrap_err();
        let text = regex_description(&e);
        assert!(!text.contains('\n') && !text.is_empty(), "{text}");
    }
}
