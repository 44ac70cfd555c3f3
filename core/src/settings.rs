//! The switches handlers and controllers read, all derived from the feature gates.

use crate::feature_gates::{FeatureGates, Gate};

/// What the command line turned on and off: OpenKruise's feature gates, read through accessors
/// named for what they switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    gates: FeatureGates,
}

impl Settings {
    /// Settings with these gates.
    pub fn new(gates: FeatureGates) -> Settings {
        Settings {
            gates: gates.resolved(),
        }
    }

    /// The default settings with `gate` turned on or off (and OpenKruise's dependencies applied).
    pub fn with(mut self, gate: Gate, on: bool) -> Settings {
        self.gates.set(gate, on);
        self.gates = self.gates.resolved();
        self
    }

    /// The feature gates.
    pub fn gates(&self) -> &FeatureGates {
        &self.gates
    }

    /// Whether `gate` is on.
    pub fn enabled(&self, gate: Gate) -> bool {
        self.gates.enabled(gate)
    }

    /// Deletion protection (`policy.kruise.io/delete-protection`), gate `ResourcesDeletionProtection`:
    /// on by default in kruise-rs, off in OpenKruise.
    pub fn deletion_protection(&self) -> bool {
        self.enabled(Gate::ResourcesDeletionProtection)
    }

    /// `Cascading` protection of CustomResourceDefinitions, gate
    /// `DeletionProtectionForCRDCascadingGate` (off by default; needs deletion protection).
    pub fn crd_cascading_protection(&self) -> bool {
        self.enabled(Gate::DeletionProtectionForCRDCascadingGate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_come_from_the_gates() {
        let default = Settings::default();
        assert!(default.deletion_protection());
        assert!(!default.crd_cascading_protection());
        let off = Settings::default().with(Gate::ResourcesDeletionProtection, false);
        assert!(!off.deletion_protection());
        let cascading = Settings::default().with(Gate::DeletionProtectionForCRDCascadingGate, true);
        assert!(cascading.crd_cascading_protection());
        assert!(
            !cascading
                .with(Gate::ResourcesDeletionProtection, false)
                .crd_cascading_protection(),
            "cascading protection needs deletion protection, as in OpenKruise"
        );
        let gates = FeatureGates::parse("CloneSetPartitionRollback=true").unwrap();
        assert!(Settings::new(gates).enabled(Gate::CloneSetPartitionRollback));
    }
}
