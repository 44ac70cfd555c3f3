//! [`select`] takes what [`walk`] takes from the same candidates sorted, whatever the order, the ties,
//! the readiness, `partition`, `maxUnavailable` and the budget refusals.

use kruise_api::PodRecord;
use serde_json::json;

use super::*;
use crate::sidecarset::derived::{PodFacts, derive_all};
use crate::sidecarset::tests::{pod_json, set};

/// A small deterministic generator (xorshift), so a failure is reproducible.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn names(pods: &[SeenPod<'_>]) -> Vec<String> {
    pods.iter()
        .map(|p| crate::pods::name(p.pod).to_string())
        .collect()
}

fn held_names(held: &[(SeenPod<'_>, Refusal)]) -> Vec<String> {
    held.iter()
        .map(|(p, r)| format!("{}:{}", crate::pods::name(p.pod), r.message))
        .collect()
}

#[test]
fn select_takes_what_the_sorted_walk_takes() {
    let pods: Vec<PodRecord> = (0..120)
        .map(|i| serde_json::from_value(pod_json(i, (i % 60) as u32)).unwrap())
        .collect();
    let refs: Vec<&PodRecord> = pods.iter().collect();
    let base = derive_all(&set(json!({})), &refs);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..600 {
        let n = rng.below(120) as usize;
        // Few distinct keys, so ties are common; readiness at random.
        let facts: Vec<PodFacts> = base[..n]
            .iter()
            .map(|f| {
                let mut f = f.clone();
                f.order.0 = (rng.below(3) as i64, 0);
                f.order.1.1 = rng.below(4) as i128;
                f.ready = rng.below(3) != 0;
                f
            })
            .collect();
        let candidates: Vec<SeenPod<'_>> = refs[..n]
            .iter()
            .zip(&facts)
            .map(|(pod, facts)| SeenPod { pod, facts })
            .collect();
        let kept = rng.below(n as u64 + 2) as usize;
        let unavailable = rng.below(4) as i64;
        let max_unavailable = rng.below(12) as i64;
        let refuse_every = 2 + rng.below(5) as usize;
        let with_budget = rng.below(2) == 0;
        let refused = |p: &PodRecord| -> Option<Refusal> {
            let i: usize = crate::pods::name(p)[1..].parse().unwrap();
            (with_budget && i.is_multiple_of(refuse_every)).then(|| Refusal {
                budget: "default/pub".into(),
                message: format!("no {i}"),
            })
        };
        let mut sorted = candidates.clone();
        sort(&mut sorted);
        let expected = walk(&sorted, kept, unavailable, max_unavailable, &refused);
        let got = select(&candidates, kept, unavailable, max_unavailable, &refused);
        let case =
            format!("round {round}: n {n} kept {kept} unavailable {unavailable} max {max_unavailable}");
        assert_eq!(names(&got.chosen), names(&expected.chosen), "{case}");
        assert_eq!(held_names(&got.held), held_names(&expected.held), "{case}");
    }
}
