//! OpenKruise's selector-overlap tests (`util.IsSelectorOverlapping`, `util.IsSelectorLooseOverlap`),
//! used to refuse two objects that would select the same pods.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{string_list, string_map};
use crate::crd::field::str_at;

type Reqs = BTreeMap<String, Vec<String>>;

fn requirements(sel: Option<&Value>) -> (Reqs, Vec<(String, String, Vec<String>)>) {
    let mut first: Reqs = BTreeMap::new();
    let mut exprs = Vec::new();
    let Some(sel) = sel else {
        return (first, exprs);
    };
    for (k, v) in string_map(sel.get("matchLabels")) {
        first.insert(k, vec![v]);
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        exprs.push((
            str_at(e, "key").to_string(),
            str_at(e, "operator").to_string(),
            string_list(e.get("values")),
        ));
    }
    (first, exprs)
}

fn is_disjoint(s1: Option<&Value>, s2: Option<&Value>) -> bool {
    let (mut m1, e1) = requirements(s1);
    for (key, op, values) in e1 {
        match op.as_str() {
            "In" => m1.entry(key).or_default().extend(values),
            "Exists" => {
                m1.insert(key, vec!["ALL".into()]);
            }
            _ => {}
        }
    }
    let (l2, e2) = requirements(s2);
    for (k, v) in &l2 {
        if let Some(values) = m1.get(k)
            && !values.iter().any(|x| x == "ALL")
            && !values.contains(&v[0])
        {
            return true;
        }
    }
    for (key, op, values) in e2 {
        let got = m1.get(&key);
        match op.as_str() {
            "In" => {
                if let Some(g) = got
                    && !g.iter().any(|x| x == "ALL")
                    && !g.iter().any(|x| values.contains(x))
                {
                    return true;
                }
            }
            "NotIn" => {
                if let Some(g) = got
                    && g.iter().all(|x| values.contains(x))
                {
                    return true;
                }
            }
            "Exists" if got.is_none() => return true,
            "DoesNotExist" if got.is_some() => return true,
            _ => {}
        }
    }
    false
}

/// OpenKruise's `util.IsSelectorOverlapping` (a nil selector counts as empty).
pub fn selectors_overlap(s1: Option<&Value>, s2: Option<&Value>) -> bool {
    !(is_disjoint(s1, s2) || is_disjoint(s2, s1))
}

/// OpenKruise's `util.IsSelectorLooseOverlap`.
pub fn selectors_loose_overlap(s1: Option<&Value>, s2: Option<&Value>) -> bool {
    let exps = |s: Option<&Value>| -> BTreeMap<String, (String, Vec<String>)> {
        let (labels, exprs) = requirements(s);
        let mut m = BTreeMap::new();
        for (k, op, values) in exprs {
            m.insert(k, (op, values));
        }
        for (k, v) in labels {
            m.insert(k, ("In".to_string(), v));
        }
        m
    };
    let overlap = |a: &(String, Vec<String>), b: &(String, Vec<String>)| -> bool {
        let contains_all = |x: &[String], y: &[String]| y.iter().all(|v| x.contains(v));
        let any_common = |x: &[String], y: &[String]| y.iter().any(|v| x.contains(v));
        match (a.0.as_str(), b.0.as_str()) {
            ("In", "Exists") => true,
            ("In", "In") => any_common(&b.1, &a.1),
            ("In", "NotIn") => !contains_all(&b.1, &a.1),
            ("Exists", "In" | "NotIn" | "Exists") => true,
            ("NotIn", "Exists" | "DoesNotExist" | "NotIn") => true,
            ("NotIn", "In") => !contains_all(&a.1, &b.1),
            ("DoesNotExist", "DoesNotExist" | "NotIn") => true,
            _ => false,
        }
    };
    let (m1, m2) = (exps(s1), exps(s2));
    m1.iter()
        .all(|(k, e1)| m2.get(k).is_some_and(|e2| overlap(e1, e2)))
        && m2
            .iter()
            .all(|(k, e2)| m1.get(k).is_some_and(|e1| overlap(e2, e1)))
}
