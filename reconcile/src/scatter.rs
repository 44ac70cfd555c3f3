//! `scatterStrategy` (OpenKruise's `updatesort` scatter sorter): pods matching a `key=value` term are
//! spread among the others in groups sized by the term's density, so each update batch carries a
//! proportional share of them.

use kruise_api::PodRecord;
use kruise_api::common::UpdateScatterTerm;

use crate::pods;

fn matches(p: &PodRecord, term: &UpdateScatterTerm) -> bool {
    pods::label(p, &term.key).unwrap_or("") == term.value
}

/// Reorders `candidates` by every term; `all` are the CloneSet's active pods (for the densities).
pub fn scatter<'a>(
    all: &[&PodRecord],
    candidates: Vec<&'a PodRecord>,
    terms: &[UpdateScatterTerm],
) -> Vec<&'a PodRecord> {
    if terms.is_empty() || candidates.len() <= 1 {
        return candidates;
    }
    let mut out = candidates;
    for term in ordered_terms(&out, terms) {
        out = by_term(all, out, &term);
    }
    out
}

/// One term as is; several: the terms some candidate matches, most matched first (stable).
fn ordered_terms(candidates: &[&PodRecord], terms: &[UpdateScatterTerm]) -> Vec<UpdateScatterTerm> {
    if terms.len() == 1 {
        return terms.to_vec();
    }
    let mut counted: Vec<(UpdateScatterTerm, usize)> = Vec::new();
    for term in terms {
        let n = candidates
            .iter()
            .filter(|p| pods::label(p, &term.key) == Some(term.value.as_str()))
            .count();
        if n == 0 {
            continue;
        }
        match counted.iter_mut().find(|(t, _)| t == term) {
            Some((_, c)) => *c += n,
            None => counted.push((term.clone(), n)),
        }
    }
    counted.sort_by_key(|c| std::cmp::Reverse(c.1));
    counted.into_iter().map(|(t, _)| t).collect()
}

#[derive(Debug, Default, Clone, Copy)]
struct Group {
    count: usize,
    matched: usize,
    unmatched: usize,
    unmatched_head: usize,
}

fn group(matched: usize, unmatched: usize) -> Group {
    let count = matched.min(unmatched);
    let size = |n: usize| (n as f64 / count as f64).round() as usize;
    Group {
        count,
        matched: size(matched),
        unmatched: size(unmatched),
        unmatched_head: 0,
    }
}

/// `calculateGroupByDensity`: the candidates' own grouping when they are at least as dense in
/// unmatched pods as the whole set, else the whole set's group sizes.
fn group_by_density(total_matched: usize, total_unmatched: usize, matched: usize, unmatched: usize) -> Group {
    let whole = group(total_matched, total_unmatched);
    if total_unmatched as f32 / total_matched as f32 >= unmatched as f32 / matched as f32 {
        return group(matched, unmatched);
    }
    let count = (matched / whole.matched).min(unmatched / whole.unmatched);
    Group {
        count,
        unmatched_head: unmatched - count * whole.unmatched,
        ..whole
    }
}

fn take<'a>(src: &mut Vec<&'a PodRecord>, dst: &mut Vec<&'a PodRecord>, n: usize) {
    let n = n.min(src.len());
    dst.extend(src.drain(..n));
}

fn by_term<'a>(
    all: &[&PodRecord],
    candidates: Vec<&'a PodRecord>,
    term: &UpdateScatterTerm,
) -> Vec<&'a PodRecord> {
    let (mut matched, mut unmatched): (Vec<&PodRecord>, Vec<&PodRecord>) =
        candidates.iter().copied().partition(|p| matches(p, term));
    if matched.len() <= 1 || unmatched.len() <= 1 {
        return candidates;
    }
    let total_matched = all.iter().filter(|p| matches(p, term)).count().max(matched.len());
    let total_unmatched = (all.len() - total_matched.min(all.len())).max(unmatched.len());
    // The last matched pod always goes last.
    let last = matched.pop().expect("at least two matched");
    let g = group_by_density(total_matched - 1, total_unmatched, matched.len(), unmatched.len());
    let mut out = Vec::with_capacity(candidates.len());
    take(&mut unmatched, &mut out, g.unmatched_head);
    for _ in 0..g.count {
        take(&mut matched, &mut out, g.matched);
        take(&mut unmatched, &mut out, g.unmatched);
    }
    out.append(&mut matched);
    out.append(&mut unmatched);
    out.push(last);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pods::fixtures::{labelled, pod};

    /// OpenKruise's own expectations for one term `labelA=AAA` (`scatter_sort_test.go`).
    #[test]
    fn scatter_by_one_term_matches_openkruise() {
        let rows: &[(&str, &[&str], &[usize])] = &[
            ("no label", &[""], &[0]),
            ("one scattered pod", &["A"], &[0]),
            ("one of each", &["A", "b"], &[0, 1]),
            ("even + even", &["", "", "", "", "A", "A"], &[4, 0, 1, 2, 3, 5]),
            ("odd + odd", &["", "", "", "A", "A", "A"], &[3, 0, 1, 4, 2, 5]),
            (
                "even scattered + odd ordinary",
                &["", "", "", "A", "", "", "A"],
                &[3, 0, 1, 2, 4, 5, 6],
            ),
            (
                "odd scattered + even ordinary",
                &["", "", "", "", "", "", "A", "A", "A"],
                &[6, 0, 1, 2, 7, 3, 4, 5, 8],
            ),
            (
                "more scattered than ordinary (even)",
                &["", "", "A", "A", "A", "A"],
                &[2, 3, 0, 4, 1, 5],
            ),
            (
                "more scattered than ordinary (even + odd)",
                &["", "", "A", "", "A", "A", "A", "A", "A"],
                &[2, 4, 0, 5, 6, 1, 7, 3, 8],
            ),
            (
                "more scattered than ordinary (odd + even)",
                &["", "A", "", "A", "", "", "A", "A", "A"],
                &[1, 0, 3, 2, 6, 4, 7, 5, 8],
            ),
            (
                "other labels",
                &["", "", "", "", "ee", "a", "", "A", "A", "A"],
                &[7, 0, 1, 2, 3, 8, 4, 5, 6, 9],
            ),
        ];
        let term = UpdateScatterTerm {
            key: "labelA".into(),
            value: "AAA".into(),
        };
        for (name, labels, want) in rows {
            let all: Vec<PodRecord> = labels
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    let p = pod(&i.to_string(), "r");
                    match *l {
                        "A" => labelled(p, "labelA", "AAA"),
                        "" => p,
                        other => labelled(p, "other", other),
                    }
                })
                .collect();
            let refs: Vec<&PodRecord> = all.iter().collect();
            let got: Vec<usize> = scatter(&refs, refs.clone(), std::slice::from_ref(&term))
                .iter()
                .map(|p| pods::name(p).parse().unwrap())
                .collect();
            assert_eq!(&got, want, "{name}");
        }
    }
}
