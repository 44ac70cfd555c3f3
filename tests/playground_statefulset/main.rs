//! Advanced StatefulSet end to end in the playground: the simulated API server (scheduler, kubelet,
//! garbage collector, volume binder) calls kruise-rs's webhooks, and kruise-rs's StatefulSet
//! controller drives the pods and claims. One module per topic.

#[path = "../common/mod.rs"]
mod common;

mod claims;
mod env;
mod kubectl;
mod ordering;
mod update;
