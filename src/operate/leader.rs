//! Leader election on a `coordination.k8s.io/v1` Lease, so that only one replica handles objects.
//!
//! The algorithm is client-go's `leaderelection` with a `LeaseLock` (Kubernetes
//! `k8s.io/client-go/tools/leaderelection`, used by kube-controller-manager and kubebuilder
//! operators), with its defaults: lease duration 15 s, renew deadline 10 s, retry period 2 s.
//!
//! - Every retry period each replica GETs the Lease. A standby writes only when the Lease is free
//!   (no `holderIdentity`, as a release leaves it) or expired; the leader writes to renew.
//! - Writes are PUTs carrying the `resourceVersion` that was read, so of two replicas racing for a
//!   free Lease exactly one wins; the other gets 409 Conflict.
//! - Expiry is judged on the standby's own monotonic clock: the Lease is expired when its spec has
//!   not changed for `leaseDurationSeconds` since this replica first saw that spec. Clock skew
//!   between nodes therefore does not matter, only clock rate.
//! - The leader steps down when no renewal has succeeded for the renew deadline (counted from the
//!   start of the last successful renewal), which is shorter than the lease duration: it stops
//!   handling before any standby may take over. It also steps down at once when a GET shows
//!   another holder.
//! - On shutdown the leader releases the Lease (clears `holderIdentity`), so a standby takes over
//!   on its next poll instead of waiting for expiry.
//!
//! API verbs used on `leases`: `get`, `create` (the first replica creates the Lease), `update`.
//!
//! kube-lease-manager 0.13 was tried first and replaced because (read in its `manager.rs` and
//! `state.rs`): a standby sleeps until the old Lease would expire and cannot be woken, so after a
//! release the takeover still waits up to the whole lease duration; a holder whose renewals fail
//! keeps reporting itself leader (its `is_leader` flag only changes after a successful read) and
//! retries with a backoff growing to 30 s, so it can keep handling after a standby has taken over;
//! renewals are strategic-merge patches without a `resourceVersion` precondition.

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Client;
use kube::api::{Api, PostParams};
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use super::reconcile::describe_error;
use crate::vocab::lease::{LEASE_DURATION, LeasePlan, RENEW_DEADLINE, RETRY_PERIOD, WATCH_NAMESPACES_ANNOTATION};

/// Where the Lease is, who we are, and the timings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionConfig {
    /// Namespace of the Lease (`--lease-namespace`; default: see [`crate::vocab::lease::plan_leases`]).
    pub namespace: String,
    /// Name of the Lease (`--lease-name`).
    pub name: String,
    /// This replica's `holderIdentity`: unique per process (see [`identity`]).
    pub identity: String,
    /// What we handle while holding it, written as [`WATCH_NAMESPACES_ANNOTATION`].
    pub serves: String,
    /// Written as `leaseDurationSeconds`; whole seconds, at least 1.
    pub lease_duration: Duration,
    /// See [`RENEW_DEADLINE`]; must be shorter than `lease_duration`.
    pub renew_deadline: Duration,
    /// See [`RETRY_PERIOD`].
    pub retry_period: Duration,
}

impl ElectionConfig {
    /// The client-go default timings for the Lease `namespace/name`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>, identity: impl Into<String>) -> Self {
        ElectionConfig {
            namespace: namespace.into(),
            name: name.into(),
            identity: identity.into(),
            serves: String::new(),
            lease_duration: LEASE_DURATION,
            renew_deadline: RENEW_DEADLINE,
            retry_period: RETRY_PERIOD,
        }
    }

    /// The election for `plan`, as `identity`.
    pub fn for_plan(plan: &LeasePlan, identity: impl Into<String>) -> Self {
        ElectionConfig {
            serves: plan.serves_annotation(),
            ..ElectionConfig::new(&plan.namespace, &plan.name, identity)
        }
    }

    /// `namespace/name`, for log lines.
    pub fn lease_ref(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// What a standby says about a leader that serves other namespaces than it would: `None` when
/// the leader's [`WATCH_NAMESPACES_ANNOTATION`] is absent (not ours, or an older version) or
/// covers every namespace `ours` names; else the namespaces of `ours` it does not handle (`*`
/// when we watch all and it does not).
pub fn unserved_by_leader(leader_serves: Option<&str>, ours: &str) -> Option<String> {
    let theirs = leader_serves?;
    if theirs == "*" || theirs == ours {
        return None;
    }
    if ours == "*" {
        return Some("*".into());
    }
    let theirs: HashSet<&str> = theirs.split(',').collect();
    let missing: Vec<&str> = ours.split(',').filter(|ns| !theirs.contains(ns)).collect();
    (!missing.is_empty()).then(|| missing.join(","))
}

/// Lease writes name our field manager, so the Lease's managedFields say who wrote it.
fn write_params() -> PostParams {
    PostParams {
        field_manager: Some(crate::resource::FIELD_MANAGER.to_string()),
        ..PostParams::default()
    }
}

/// A `holderIdentity` unique to this process: `<instance>_<16 random hex digits>` (client-go uses
/// `<hostname>_<uuid>`), where instance is the Pod name. Two processes on one host differ.
pub fn identity(instance: &str) -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("{instance}_{:016x}", hasher.finish())
}

/// This replica's role, as published to the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Not leading. `holder` is the other holder when one is known.
    Standby {
        /// The `holderIdentity` seen on the Lease, if any.
        holder: Option<String>,
    },
    /// Leading; `term` counts this process's acquisitions, from 1.
    Leader {
        /// The leadership term.
        term: u64,
    },
}

impl Role {
    /// The term when leading.
    pub fn term(&self) -> Option<u64> {
        match self {
            Role::Leader { term } => Some(*term),
            Role::Standby { .. } => None,
        }
    }
}

/// What to do after reading the Lease (pure; see [`next_step`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Write the Lease with us as holder: it is free, expired, or already ours.
    Take,
    /// Another replica holds a valid Lease.
    Wait {
        /// Its `holderIdentity`.
        holder: String,
    },
}

/// Decides from a Lease spec, when this replica first saw that spec (`seen_since`) and the time
/// now (both on this replica's monotonic clock) whether to write the Lease.
///
/// Free (no or empty `holderIdentity`) or held by `me`: take. Held by another: wait until
/// `leaseDurationSeconds` (else `default_duration`) passed since `seen_since`.
pub fn next_step(
    spec: Option<&LeaseSpec>,
    me: &str,
    seen_since: Instant,
    now: Instant,
    default_duration: Duration,
) -> Step {
    let holder = spec
        .and_then(|s| s.holder_identity.as_deref())
        .filter(|h| !h.is_empty());
    match holder {
        None => Step::Take,
        Some(h) if h == me => Step::Take,
        Some(h) => {
            let duration = spec
                .and_then(|s| s.lease_duration_seconds)
                .filter(|d| *d > 0)
                .map(|d| Duration::from_secs(d as u64))
                .unwrap_or(default_duration);
            if now.saturating_duration_since(seen_since) >= duration {
                Step::Take
            } else {
                Step::Wait { holder: h.to_string() }
            }
        }
    }
}

/// The spec to write when taking the Lease: renewing keeps `acquireTime` and
/// `leaseTransitions`; acquiring sets `acquireTime` and counts one more transition.
pub fn taken_spec(old: Option<&LeaseSpec>, me: &str, lease_duration: Duration, now: MicroTime) -> LeaseSpec {
    let renewing = old.and_then(|s| s.holder_identity.as_deref()) == Some(me);
    let transitions = old.and_then(|s| s.lease_transitions).unwrap_or(0);
    LeaseSpec {
        holder_identity: Some(me.to_string()),
        lease_duration_seconds: Some(lease_duration.as_secs().max(1) as i32),
        acquire_time: if renewing {
            old.and_then(|s| s.acquire_time.clone())
        } else {
            Some(now.clone())
        },
        renew_time: Some(now),
        lease_transitions: Some(if renewing || old.is_none() {
            transitions
        } else {
            transitions + 1
        }),
        ..Default::default()
    }
}

/// What one read-and-maybe-write of the Lease found.
#[derive(Debug)]
enum Attempt {
    /// We hold the Lease now (acquired or renewed).
    Holding,
    /// Another replica holds it and it is valid: its identity and what it serves
    /// ([`WATCH_NAMESPACES_ANNOTATION`], when written).
    HeldBy(String, Option<String>),
    /// Our write lost a race (409): the Lease changed since we read it.
    Conflict,
}

/// The elector: run it on a task with [`Elector::run`]; it publishes [`Role`]s.
pub struct Elector {
    api: Api<Lease>,
    config: ElectionConfig,
    tx: watch::Sender<Role>,
    /// The Lease spec last seen, and when it was first seen (for expiry).
    observed: Option<(Option<LeaseSpec>, Instant)>,
    /// The Lease as last read or written (for the release PUT).
    last_lease: Option<Lease>,
    term: u64,
    /// Start of the last successful renewal, while leading.
    renewed_at: Option<Instant>,
    /// The last failure logged, so a repeating failure is logged once.
    last_failure: Option<String>,
}

impl Elector {
    /// An elector for `config`; the receiver starts at `Standby`.
    pub fn new(client: Client, config: ElectionConfig) -> (Elector, watch::Receiver<Role>) {
        let (tx, rx) = watch::channel(Role::Standby { holder: None });
        let api = Api::namespaced(client, &config.namespace);
        (
            Elector {
                api,
                config,
                tx,
                observed: None,
                last_lease: None,
                term: 0,
                renewed_at: None,
                last_failure: None,
            },
            rx,
        )
    }

    fn leading(&self) -> bool {
        self.renewed_at.is_some()
    }

    /// The Lease's annotations with ours set to what we serve (others kept).
    fn serves_annotation(&self, existing: Option<BTreeMap<String, String>>) -> BTreeMap<String, String> {
        let mut annotations = existing.unwrap_or_default();
        annotations.insert(WATCH_NAMESPACES_ANNOTATION.into(), self.config.serves.clone());
        annotations
    }

    /// Runs the election until `release` fires (or its sender is dropped); then, if leading,
    /// releases the Lease and publishes `Standby`.
    pub async fn run(mut self, mut release: oneshot::Receiver<()>) {
        tracing::info!(
            lease = self.config.lease_ref().as_str(),
            identity = self.config.identity.as_str(),
            "Leader election: waiting for the lease"
        );
        loop {
            let started = Instant::now();
            let deadline = self.renewed_at.map(|t| t + self.config.renew_deadline);
            let attempt = tokio::time::timeout(self.config.renew_deadline, self.try_acquire_or_renew());
            let outcome = tokio::select! {
                result = attempt => Some(result),
                _ = sleep_until(deadline) => None,
                _ = &mut release => break,
            };
            match outcome {
                None => self.step_down("no renewal succeeded within the renew deadline"),
                Some(Err(_)) => self.attempt_failed("the lease request timed out".into()),
                Some(Ok(Err(err))) => self.attempt_failed(describe_error(&err)),
                Some(Ok(Ok(attempt))) => self.attempt_done(attempt, started),
            }
            let deadline = self.renewed_at.map(|t| t + self.config.renew_deadline);
            let pause = if self.leading() {
                self.config.retry_period
            } else {
                jittered(self.config.retry_period)
            };
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = sleep_until(deadline) => self.step_down("no renewal succeeded within the renew deadline"),
                _ = &mut release => break,
            }
        }
        self.release().await;
    }

    fn attempt_done(&mut self, attempt: Attempt, started: Instant) {
        self.last_failure = None;
        match attempt {
            Attempt::Holding => {
                if !self.leading() {
                    self.term += 1;
                    tracing::info!(
                        lease = self.config.lease_ref().as_str(),
                        identity = self.config.identity.as_str(),
                        term = self.term,
                        "Became the leader: acquired the lease"
                    );
                    let _ = self.tx.send(Role::Leader { term: self.term });
                }
                self.renewed_at = Some(started);
            }
            Attempt::HeldBy(holder, serves) => {
                if self.leading() {
                    self.step_down(&format!("the lease is held by {holder}"));
                }
                let known = matches!(&*self.tx.borrow(), Role::Standby { holder: Some(h) } if *h == holder);
                if !known {
                    match unserved_by_leader(serves.as_deref(), &self.config.serves) {
                        None => tracing::info!(
                            lease = self.config.lease_ref().as_str(),
                            holder = holder.as_str(),
                            "Standing by: the lease is held by another replica"
                        ),
                        Some(unserved) => tracing::warn!(
                            lease = self.config.lease_ref().as_str(),
                            holder = holder.as_str(),
                            holder_watches = serves.as_deref().unwrap_or_default(),
                            watches = self.config.serves.as_str(),
                            unserved = unserved.as_str(),
                            "Standing by, but the leader watches other namespaces: these are handled by no one while it leads; give this operator a Lease of its own (--lease-name NAME, or no --lease-namespace/--lease-name: one Lease per watched namespace)"
                        ),
                    }
                    let _ = self.tx.send(Role::Standby { holder: Some(holder) });
                }
            }
            // Someone wrote the Lease between our read and our write; the next read tells who.
            Attempt::Conflict => {}
        }
    }

    fn attempt_failed(&mut self, error: String) {
        if self.last_failure.as_deref() != Some(error.as_str()) {
            tracing::warn!(
                lease = self.config.lease_ref().as_str(),
                error = error.as_str(),
                leading = self.leading(),
                "Leader election: the lease request failed; retrying"
            );
            self.last_failure = Some(error);
        }
    }

    fn step_down(&mut self, reason: &str) {
        if self.renewed_at.take().is_some() {
            tracing::warn!(
                lease = self.config.lease_ref().as_str(),
                term = self.term,
                reason,
                "Lost the lease: handling stops"
            );
            let _ = self.tx.send(Role::Standby { holder: None });
        }
    }

    fn observe(&mut self, spec: Option<&LeaseSpec>) -> Instant {
        let now = Instant::now();
        match &self.observed {
            Some((seen, since)) if seen.as_ref() == spec => *since,
            _ => {
                self.observed = Some((spec.cloned(), now));
                now
            }
        }
    }

    async fn try_acquire_or_renew(&mut self) -> Result<Attempt, kube::Error> {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let current = match self.api.get_opt(&self.config.name).await? {
            Some(lease) => lease,
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.config.name.clone()),
                        namespace: Some(self.config.namespace.clone()),
                        annotations: Some(self.serves_annotation(None)),
                        ..Default::default()
                    },
                    spec: Some(taken_spec(None, &self.config.identity, self.config.lease_duration, now)),
                };
                let created = self.api.create(&write_params(), &lease).await;
                return self.written(created);
            }
        };
        let since = self.observe(current.spec.as_ref());
        match next_step(
            current.spec.as_ref(),
            &self.config.identity,
            since,
            Instant::now(),
            self.config.lease_duration,
        ) {
            Step::Wait { holder } => {
                let serves = current
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(WATCH_NAMESPACES_ANNOTATION))
                    .cloned();
                self.last_lease = Some(current);
                Ok(Attempt::HeldBy(holder, serves))
            }
            Step::Take => {
                let mut lease = current;
                lease.metadata.annotations = Some(self.serves_annotation(lease.metadata.annotations.take()));
                lease.spec = Some(taken_spec(
                    lease.spec.as_ref(),
                    &self.config.identity,
                    self.config.lease_duration,
                    now,
                ));
                let replaced = self.api.replace(&self.config.name, &write_params(), &lease).await;
                self.written(replaced)
            }
        }
    }

    /// The outcome of our create or replace of the Lease: holding it, or lost a race (409).
    fn written(&mut self, result: Result<Lease, kube::Error>) -> Result<Attempt, kube::Error> {
        match result {
            Ok(written) => {
                self.observe(written.spec.as_ref());
                self.last_lease = Some(written);
                Ok(Attempt::Holding)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Attempt::Conflict),
            Err(err) => Err(err),
        }
    }

    /// If leading: clears `holderIdentity` (client-go's release: `leaseDurationSeconds: 1`,
    /// transitions kept) with the last known `resourceVersion`, then publishes `Standby`.
    /// A failed release is logged; the Lease then expires on its own.
    async fn release(&mut self) {
        if !self.leading() {
            return;
        }
        let _ = self.tx.send(Role::Standby { holder: None });
        self.renewed_at = None;
        let Some(mut lease) = self.last_lease.take() else {
            return;
        };
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let transitions = lease.spec.as_ref().and_then(|s| s.lease_transitions);
        lease.spec = Some(LeaseSpec {
            holder_identity: None,
            lease_duration_seconds: Some(1),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            lease_transitions: transitions,
            ..Default::default()
        });
        match self.api.replace(&self.config.name, &write_params(), &lease).await {
            Ok(_) => tracing::info!(lease = self.config.lease_ref().as_str(), "Released the lease"),
            Err(err) => tracing::warn!(
                lease = self.config.lease_ref().as_str(),
                error = describe_error(&err).as_str(),
                "Could not release the lease; it expires on its own"
            ),
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// `period` plus up to 20 % (client-go's JitterFactor 1.2), so standbys do not poll in step.
fn jittered(period: Duration) -> Duration {
    let random = std::collections::hash_map::RandomState::new().build_hasher().finish();
    period + period.mul_f64((random % 1000) as f64 / 5000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(holder: Option<&str>, duration: Option<i32>) -> LeaseSpec {
        LeaseSpec {
            holder_identity: holder.map(str::to_string),
            lease_duration_seconds: duration,
            lease_transitions: Some(3),
            ..Default::default()
        }
    }

    #[test]
    fn free_or_own_lease_is_taken_at_once() {
        let now = Instant::now();
        let d = LEASE_DURATION;
        assert_eq!(next_step(None, "me", now, now, d), Step::Take);
        assert_eq!(next_step(Some(&spec(None, Some(15))), "me", now, now, d), Step::Take);
        // client-go's release leaves holderIdentity "" rather than absent.
        assert_eq!(next_step(Some(&spec(Some(""), Some(1))), "me", now, now, d), Step::Take);
        assert_eq!(
            next_step(Some(&spec(Some("me"), Some(15))), "me", now, now, d),
            Step::Take
        );
    }

    #[test]
    fn another_holder_is_waited_for_until_its_duration_passed_on_our_clock() {
        let seen = Instant::now();
        let other = spec(Some("pod-a_1"), Some(15));
        let wait = Step::Wait {
            holder: "pod-a_1".into(),
        };
        assert_eq!(next_step(Some(&other), "me", seen, seen, LEASE_DURATION), wait);
        assert_eq!(
            next_step(
                Some(&other),
                "me",
                seen,
                seen + Duration::from_millis(14_999),
                LEASE_DURATION
            ),
            wait
        );
        assert_eq!(
            next_step(Some(&other), "me", seen, seen + Duration::from_secs(15), LEASE_DURATION),
            Step::Take
        );
        // Without leaseDurationSeconds our own duration applies.
        let no_duration = spec(Some("pod-a_1"), None);
        assert_eq!(
            next_step(
                Some(&no_duration),
                "me",
                seen,
                seen + Duration::from_secs(14),
                LEASE_DURATION
            ),
            wait
        );
    }

    #[test]
    fn taking_counts_transitions_and_renewing_keeps_them() {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        let acquired = taken_spec(
            Some(&spec(Some("pod-a_1"), Some(15))),
            "me",
            LEASE_DURATION,
            now.clone(),
        );
        assert_eq!(acquired.holder_identity.as_deref(), Some("me"));
        assert_eq!(acquired.lease_transitions, Some(4));
        assert_eq!(acquired.lease_duration_seconds, Some(15));
        assert_eq!(acquired.acquire_time, Some(now.clone()));
        let mut ours = spec(Some("me"), Some(15));
        ours.acquire_time = Some(MicroTime(k8s_openapi::jiff::Timestamp::new(5, 0).unwrap()));
        let renewed = taken_spec(Some(&ours), "me", LEASE_DURATION, now.clone());
        assert_eq!(renewed.lease_transitions, Some(3));
        assert_eq!(renewed.acquire_time, ours.acquire_time);
        assert_eq!(renewed.renew_time, Some(now.clone()));
        let created = taken_spec(None, "me", LEASE_DURATION, now);
        assert_eq!(created.lease_transitions, Some(0));
    }

    #[test]
    fn a_standby_names_the_namespaces_its_leader_leaves_unserved() {
        assert_eq!(unserved_by_leader(None, "a"), None);
        assert_eq!(unserved_by_leader(Some("a"), "a"), None);
        assert_eq!(unserved_by_leader(Some("*"), "a,b"), None);
        assert_eq!(unserved_by_leader(Some("a,b"), "b"), None);
        assert_eq!(unserved_by_leader(Some("a"), "b"), Some("b".into()));
        assert_eq!(unserved_by_leader(Some("a,c"), "a,b,d"), Some("b,d".into()));
        assert_eq!(unserved_by_leader(Some("a"), "*"), Some("*".into()));
    }

    #[test]
    fn identities_are_unique_per_process_and_call() {
        let a = identity("pod-a");
        let b = identity("pod-a");
        assert!(a.starts_with("pod-a_") && a.len() == "pod-a_".len() + 16, "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn jitter_stays_within_twenty_percent() {
        for _ in 0..100 {
            let d = jittered(Duration::from_secs(2));
            assert!(d >= Duration::from_secs(2) && d <= Duration::from_millis(2400), "{d:?}");
        }
    }
}
