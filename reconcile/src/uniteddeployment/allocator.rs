//! Replica allocation over the subsets (OpenKruise's `allocator.go`; docs/uniteddeployment.md,
//! "Allocation"). Four allocators, chosen in this order:
//!
//! 1. reservation — `Adaptive` with `reserveUnschedulablePods`;
//! 2. adaptive — `Adaptive`;
//! 3. min/max ("elastic") — any subset sets `minReplicas` or `maxReplicas`;
//! 4. specific — subset `replicas` (int or percent), the rest shared evenly.
//!
//! Percentages are of `spec.replicas`, rounded half up ([`kruise_core::intstr::subset_replicas`]).

use std::collections::BTreeMap;

use kruise_api::apps_v1beta1::{Subset, UnitedDeploymentSpec};
use kruise_core::intstr::{IntOrPercent, subset_replicas};

/// What the allocators need to know of a subset's existing workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubsetState {
    /// The workload's `spec.replicas`.
    pub spec_replicas: i32,
    /// The workload's `status.readyReplicas`.
    pub ready_replicas: i32,
    /// Adaptive: the subset has pods that cannot be scheduled (B.7).
    pub unschedulable: bool,
    /// Reservation: the subset was just marked unschedulable (new pods start reserved).
    pub marked_unschedulable: bool,
    /// Reservation: pods of the subset that are reserved.
    pub reserved_pods: i32,
}

impl SubsetState {
    /// Reservation: the subset may take as many pods as it is given.
    fn allocatable(&self) -> bool {
        !self.unschedulable && !self.marked_unschedulable
    }
}

/// Why the replicas cannot be allocated (reported as `Failed SpecifySubsetReplicas`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    #[error("specified subsets' replica ({specified}) is greater than UnitedDeployment replica ({replicas})")]
    TooMany { specified: i64, replicas: i64 },
    #[error("specified subsets' replica ({specified}) is less than UnitedDeployment replica ({replicas})")]
    TooFew { specified: i64, replicas: i64 },
    #[error("all subsets must be specified when UnitedDeployment replica is unspecified")]
    Unspecified,
    #[error("subset[{index}].maxReplicas({max}) must be more than or equal to minReplicas({min})")]
    MinAboveMax { index: usize, min: i64, max: i64 },
}

/// Which allocator a spec uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    Reservation,
    Adaptive,
    MinMax,
    Specific,
}

impl Allocator {
    /// The allocator for `spec`.
    pub fn of(spec: &UnitedDeploymentSpec) -> Allocator {
        let strategy = &spec.topology.schedule_strategy;
        if strategy.reserves_unschedulable_pods() {
            Allocator::Reservation
        } else if strategy.is_adaptive() {
            Allocator::Adaptive
        } else if spec
            .topology
            .subsets
            .iter()
            .any(|s| s.min_replicas.is_some() || s.max_replicas.is_some())
        {
            Allocator::MinMax
        } else {
            Allocator::Specific
        }
    }
}

/// Subset name → replicas for every subset of `spec`, given the subsets' existing workloads.
pub fn allocate(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetState>,
) -> Result<BTreeMap<String, i32>, AllocError> {
    let out = match Allocator::of(spec) {
        Allocator::Specific => specific(spec, existing)?,
        Allocator::MinMax => {
            let replicas = i64::from(spec.replicas.unwrap_or(0));
            let (min, max) = min_max(replicas, &spec.topology.subsets)?;
            by_min_max(replicas, &min, &max)
        }
        Allocator::Adaptive => adaptive(spec, existing)?,
        Allocator::Reservation => reservation(spec, existing)?,
    };
    let names = spec.topology.subsets.iter().map(|s| s.name.clone());
    Ok(names
        .zip(out)
        .map(|(name, n)| (name, n.clamp(0, i64::from(i32::MAX)) as i32))
        .collect())
}

const MAX: i64 = i32::MAX as i64;

/// Parsed `minReplicas` / `maxReplicas` per subset (spec order); an unreadable value counts 0, as
/// OpenKruise ignores the error and keeps the zero it returns.
fn min_max(replicas: i64, subsets: &[Subset]) -> Result<(Vec<i64>, Vec<i64>), AllocError> {
    let mut mins = Vec::with_capacity(subsets.len());
    let mut maxs = Vec::with_capacity(subsets.len());
    for (index, subset) in subsets.iter().enumerate() {
        let read = |v: &Option<_>, absent: i64| match v {
            None => absent,
            Some(v) => subset_replicas(IntOrPercent::from(v), Some(replicas)).unwrap_or(0),
        };
        let (min, max) = (read(&subset.min_replicas, 0), read(&subset.max_replicas, MAX));
        if min > max {
            return Err(AllocError::MinAboveMax { index, min, max });
        }
        mins.push(min);
        maxs.push(max);
    }
    Ok((mins, maxs))
}

/// Pass 1: each subset (in order) up to its min; pass 2: each up to its max.
fn by_min_max(replicas: i64, min: &[i64], max: &[i64]) -> Vec<i64> {
    let mut out = vec![0; min.len()];
    let mut allocated = 0;
    for (slot, min) in out.iter_mut().zip(min) {
        let add = (*min).min(replicas - allocated).max(0);
        *slot = add;
        allocated += add;
    }
    if allocated >= replicas {
        return out;
    }
    for ((slot, min), max) in out.iter_mut().zip(min).zip(max) {
        let add = (max - min).min(replicas - allocated).max(0);
        *slot += add;
        allocated += add;
    }
    out
}

/// Fixed shares, the rest spread evenly; the extra pods of an uneven split go to the subsets that are
/// already the largest (ties: the later name), so the split is stable across reconciles.
fn specific(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetState>,
) -> Result<Vec<i64>, AllocError> {
    let subsets = &spec.topology.subsets;
    let total = spec.replicas.map(i64::from);
    let specified: Vec<Option<i64>> = subsets
        .iter()
        .map(|s| {
            let v = s.replicas.as_ref()?;
            subset_replicas(IntOrPercent::from(v), total).ok()
        })
        .collect();
    let sum: i64 = specified.iter().flatten().sum();
    let count = specified.iter().flatten().count();
    match total {
        Some(replicas) if sum > replicas => {
            return Err(AllocError::TooMany {
                specified: sum,
                replicas,
            });
        }
        Some(replicas) if sum < replicas && count == subsets.len() => {
            return Err(AllocError::TooFew {
                specified: sum,
                replicas,
            });
        }
        None if count != subsets.len() => return Err(AllocError::Unspecified),
        _ => {}
    }
    let mut out: Vec<i64> = specified.iter().map(|v| v.unwrap_or(0)).collect();
    let left = subsets.len() - count;
    if left == 0 {
        return Ok(out);
    }
    let rest = total.unwrap_or(0) - sum;
    let (average, mut remainder) = (rest / left as i64, rest % left as i64);
    let current = |i: usize| existing.get(&subsets[i].name).map_or(0, |s| s.spec_replicas);
    let mut order: Vec<usize> = (0..subsets.len()).collect();
    order.sort_by(|&a, &b| {
        current(a)
            .cmp(&current(b))
            .then_with(|| subsets[a].name.cmp(&subsets[b].name))
    });
    for &i in order.iter().rev().filter(|&&i| specified[i].is_none()) {
        out[i] = if remainder > 0 {
            remainder -= 1;
            average + 1
        } else {
            average
        };
    }
    Ok(out)
}

/// Min/max after narrowing each subset to what runs: an unschedulable subset keeps its ready pods
/// (never below its min); a schedulable one never loses ready pods to a scale-down.
fn adaptive(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetState>,
) -> Result<Vec<i64>, AllocError> {
    let replicas = i64::from(spec.replicas.unwrap_or(0));
    let subsets = &spec.topology.subsets;
    let (mut mins, mut maxs) = min_max(replicas, subsets)?;
    for (i, subset) in subsets.iter().enumerate() {
        let state = existing.get(&subset.name);
        let unschedulable = state.is_some_and(|s| s.unschedulable);
        let ready = state.map_or(0, |s| i64::from(s.ready_replicas));
        if unschedulable {
            mins[i] = mins[i].max(ready);
            maxs[i] = maxs[i].min(ready);
        } else if ready > mins[i] {
            mins[i] = ready.min(maxs[i]);
        }
    }
    Ok(by_min_max(replicas, &mins, &maxs))
}

/// One subset's account in the reservation allocator.
struct Record {
    allocated: i64,
    max_allocatable: i64,
}

impl Record {
    /// Raises the allocation towards `to` with at most `rest` more pods; returns how many of them are
    /// expected to run (pods beyond `max_allocatable` stay pending and are duplicated elsewhere).
    fn allocate(&mut self, to: i64, rest: i64) -> i64 {
        let add = (to - self.allocated).min(rest);
        self.allocated += add;
        self.max_allocatable -= add;
        if self.max_allocatable < 0 {
            (add + self.max_allocatable).max(0)
        } else {
            add
        }
    }
}

/// Reservation: unschedulable subsets keep their pods (reserved) and the pods they cannot run are
/// allocated again to the next subsets.
fn reservation(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetState>,
) -> Result<Vec<i64>, AllocError> {
    let mut replicas = i64::from(spec.replicas.unwrap_or(0));
    let subsets = &spec.topology.subsets;
    let (mins, maxs) = min_max(replicas, subsets)?;
    let states: Vec<Option<&SubsetState>> = subsets.iter().map(|s| existing.get(&s.name)).collect();
    let mut records: Vec<Record> = states
        .iter()
        .map(|state| Record {
            allocated: 0,
            max_allocatable: match state {
                Some(s) if !s.allocatable() => i64::from(s.spec_replicas) - i64::from(s.reserved_pods),
                _ => MAX,
            },
        })
        .collect();
    let done = |records: &[Record]| records.iter().map(|r| r.allocated).collect();
    for (i, min) in mins.iter().enumerate() {
        replicas -= records[i].allocate(*min, replicas);
        if replicas <= 0 {
            return Ok(done(&records));
        }
    }
    for (i, state) in states.iter().enumerate() {
        let to = match state {
            Some(s) if s.unschedulable => i64::from(s.spec_replicas),
            _ => maxs[i],
        };
        replicas -= records[i].allocate(to, replicas);
        if replicas <= 0 {
            break;
        }
    }
    Ok(done(&records))
}
