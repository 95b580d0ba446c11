//! Bundle directories: plain `kubectl get -o json` outputs and log files, layout per
//! docs/contracts.md. Any file may be missing; that evidence is then a gap. [`read`] turns a directory
//! into a [`Snapshot`]; [`write`] does the reverse for `collect`.
//!
//! ```text
//! DIR/meta.json                      optional {"capturedAt", "context", "namespace"}
//! DIR/microservices.json             kubectl get microservices -o json --show-managed-fields
//! DIR/crd.json                       kubectl get crd microservices.platform.example.io -o json
//! DIR/events.json                    kubectl get events -o json (core/v1)
//! DIR/operator/deployment.json       the operator Deployment(s)
//! DIR/operator/pods.json             its Pods
//! DIR/operator/configmaps.json       ConfigMaps its Pods mount or read env from
//! DIR/operator/logs/POD.CONTAINER[.previous].log
//! DIR/operator/leases.json           our operator's Lease (kubectl get lease NAME -n NS -o json)
//! DIR/operator/kopfpeerings.json     Kopf's peering objects
//!                                    (kubectl get kopfpeerings,clusterkopfpeerings -A -o json)
//! DIR/rbac/{roles,rolebindings,clusterroles,clusterrolebindings,access-reviews}.json
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{Evidence, Gap, GapReason, OperatorEvidence, Provenance, RbacEvidence, Snapshot, items};
use crate::error::AppError;
use crate::logs::LogSource;
use crate::resource::identity::ResourceId;

/// Reads the bundle at `dir`.
///
/// Errors (exit 2) when `dir` does not exist or is not a directory, naming the path. Missing or
/// unreadable files become gaps.
pub fn read(dir: &Path) -> Result<Snapshot, AppError> {
    read_resource(dir, &ResourceId::microservice())
}

/// [`read`] for the objects of `resource` (its [`ResourceId::bundle_file`]:
/// `microservices.json`, or `PLURAL.GROUP.json`); `crd.json` is that resource's CRD.
pub fn read_resource(dir: &Path, resource: &ResourceId) -> Result<Snapshot, AppError> {
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(AppError::Usage(format!(
            "--bundle {}: {what}; expected a bundle directory (see docs/bundles.md)",
            dir.display()
        )));
    }
    // meta.json is optional, but one that cannot be read would silently shift "now" and the
    // namespace: a usage error naming it.
    let meta = match read_json(dir, "meta.json") {
        Ok(meta) => Some(meta),
        Err(GapReason::NotInBundle(_)) => None,
        Err(reason) => {
            return Err(AppError::Usage(format!(
                "--bundle {}: meta.json cannot be read: {}; fix or delete it (it is optional)",
                dir.display(),
                match reason {
                    GapReason::Failed(e)
                    | GapReason::Forbidden(e)
                    | GapReason::NotCollected(e)
                    | GapReason::NotInBundle(e) => e,
                }
            )));
        }
    };
    let captured_at = meta
        .as_ref()
        .and_then(|m| m.get("capturedAt"))
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc));
    let namespace = meta
        .as_ref()
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let recorded = Recorded::from_meta(meta.as_ref());
    let deployments: Evidence<Vec<k8s_openapi::api::apps::v1::Deployment>> =
        recorded.explain(list(dir, "operator/deployment.json", "operator Deployment"));
    let mut operator_logs = recorded.explain(logs(dir));
    // `operator/deployment.json` holds no Deployment (none serves the namespace): there is no
    // operator log to miss (git keeps no empty `operator/logs/`).
    if deployments.get().is_some_and(Vec::is_empty)
        && operator_logs
            .gap()
            .is_some_and(|g| matches!(g.reason, GapReason::NotInBundle(_)))
    {
        operator_logs = Evidence::Present(Vec::new());
    }
    let mut operator = OperatorEvidence {
        deployments,
        pods: recorded.explain(list(dir, "operator/pods.json", "operator Pods")),
        configmaps: recorded.explain(list(dir, "operator/configmaps.json", "operator ConfigMaps")),
        logs: operator_logs,
        leases: recorded.explain(list(dir, "operator/leases.json", super::LEASES)),
        peerings: recorded.explain(list(dir, "operator/kopfpeerings.json", super::PEERINGS)),
        chosen: meta
            .as_ref()
            .and_then(|m| m.get("operator"))
            .and_then(Value::as_str)
            .map(str::to_string),
        others: meta
            .as_ref()
            .and_then(|m| m.get("otherOperators"))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default(),
        unchosen: Vec::new(),
    };
    operator.settle_leadership();
    Ok(Snapshot {
        source: Provenance::Bundle(dir.to_path_buf()),
        captured_at,
        namespace,
        resource: resource.clone(),
        microservices: recorded.explain(list(dir, &resource.bundle_file(), &resource.plural)),
        crd: recorded.explain(single(dir, "crd.json", "CRD")),
        events: recorded.explain(list(dir, "events.json", "events")),
        operator,
        rbac: rbac(dir, &recorded),
    })
}

/// The RBAC evidence. Roles, RoleBindings, ClusterRoles and ClusterRoleBindings are taken by
/// their `kind` from whichever of their four files holds them, since `kubectl get
/// roles,rolebindings -o json > rbac/roles.json` writes two kinds to one file (read by file,
/// the RoleBindings were dropped as unreadable Roles, silently). An item without a `kind`
/// belongs to its file's. A kind is a gap only when its own file is missing and no other holds it.
fn rbac(dir: &Path, recorded: &Recorded) -> RbacEvidence {
    const FILES: [(&str, &str, &str); 4] = [
        ("rbac/roles.json", "Role", "Roles"),
        ("rbac/rolebindings.json", "RoleBinding", "RoleBindings"),
        ("rbac/clusterroles.json", "ClusterRole", "ClusterRoles"),
        (
            "rbac/clusterrolebindings.json",
            "ClusterRoleBinding",
            "ClusterRoleBindings",
        ),
    ];
    let mut pool: Vec<Value> = Vec::new();
    let mut missing: Vec<(&str, GapReason)> = Vec::new();
    for (file, kind, _) in FILES {
        match read_json(dir, file) {
            Ok(doc) => pool.extend(super::raw_items(doc).into_iter().map(|mut item| {
                if let Some(object) = item.as_object_mut() {
                    object.entry("kind").or_insert_with(|| kind.into());
                }
                item
            })),
            Err(reason) => missing.push((kind, reason)),
        }
    }
    fn take<T: DeserializeOwned>(
        pool: &[Value],
        missing: &[(&str, GapReason)],
        kind: &str,
        what: &str,
    ) -> Evidence<Vec<T>> {
        let items: Vec<Value> = pool.iter().filter(|i| i["kind"] == kind).cloned().collect();
        match missing.iter().find(|(k, _)| *k == kind) {
            Some((_, reason)) if items.is_empty() => Evidence::missing(what, reason.clone()),
            _ => {
                let (parsed, errors) = super::parse_items(items);
                for error in errors {
                    tracing::warn!("rbac/: skipped an unreadable {kind}: {error}");
                }
                Evidence::Present(parsed)
            }
        }
    }
    let [roles, bindings, cluster_roles, cluster_bindings] = FILES.map(|(_, kind, what)| (kind, what));
    RbacEvidence {
        access_reviews: recorded.explain(list(dir, "rbac/access-reviews.json", "access reviews")),
        roles: recorded.explain(take(&pool, &missing, roles.0, roles.1)),
        role_bindings: recorded.explain(take(&pool, &missing, bindings.0, bindings.1)),
        cluster_roles: recorded.explain(take(&pool, &missing, cluster_roles.0, cluster_roles.1)),
        cluster_role_bindings: recorded.explain(take(&pool, &missing, cluster_bindings.0, cluster_bindings.1)),
    }
}

/// The gaps `collect` recorded in `meta.json` (`"gaps": ["events: forbidden (<API message>)",
/// ...]`, the [`Gap`] display form). A file that is missing because the API refused it keeps
/// that reason (a 403 is `caller-cannot-list-events`, not "not in the bundle").
struct Recorded(Vec<Gap>);

impl Recorded {
    fn from_meta(meta: Option<&Value>) -> Self {
        let gaps = meta
            .and_then(|m| m.get("gaps"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(Gap::parse)
            .collect();
        Recorded(gaps)
    }

    /// `evidence`, with a not-in-the-bundle gap replaced by the gap recorded for the same evidence.
    fn explain<T>(&self, evidence: Evidence<T>) -> Evidence<T> {
        match evidence {
            Evidence::Gap(gap) if matches!(gap.reason, GapReason::NotInBundle(_)) => {
                match self.0.iter().find(|g| g.evidence == gap.evidence) {
                    Some(recorded) => Evidence::Gap(recorded.clone()),
                    None => Evidence::Gap(gap),
                }
            }
            other => other,
        }
    }
}

/// The resources of a bundle's `crd.json` (one CRD or a `List`; none when it is missing or
/// unreadable), each with whether the bundle holds its objects' file
/// ([`ResourceId::bundle_file`]): what `--resource` is resolved against, and, without it, the
/// resource of a bundle that `collect --resource` wrote (no `microservices.json`, one
/// `PLURAL.GROUP.json` of its CRD).
pub fn resource_candidates(dir: &Path) -> Vec<(ResourceId, bool)> {
    let crds: Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        read_json(dir, "crd.json").map(|doc| items(doc).0).unwrap_or_default();
    crds.iter()
        .filter_map(ResourceId::from_crd)
        .map(|id| {
            let held = dir.join(id.bundle_file()).is_file();
            (id, held)
        })
        .collect()
}

fn read_json(dir: &Path, file: &str) -> Result<Value, GapReason> {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => GapReason::NotInBundle(file.to_string()),
        _ => GapReason::Failed(format!("{}: {e}", path.display())),
    })?;
    serde_json::from_str(&text).map_err(|e| GapReason::Failed(format!("{}: not JSON: {e}", path.display())))
}

fn list<T: DeserializeOwned>(dir: &Path, file: &str, what: &str) -> Evidence<Vec<T>> {
    match read_json(dir, file) {
        Ok(doc) => {
            let (parsed, errors) = items(doc);
            for error in errors {
                tracing::warn!("{file}: skipped an unreadable {what} item: {error}");
            }
            Evidence::Present(parsed)
        }
        Err(reason) => Evidence::missing(what, reason),
    }
}

fn single<T: DeserializeOwned>(dir: &Path, file: &str, what: &str) -> Evidence<T> {
    match read_json(dir, file) {
        Ok(doc) => match items::<T>(doc) {
            (mut parsed, _) if !parsed.is_empty() => Evidence::Present(parsed.remove(0)),
            (_, errors) => Evidence::missing(what, GapReason::Failed(format!("{file}: {}", errors.join("; ")))),
        },
        Err(reason) => Evidence::missing(what, reason),
    }
}

/// Splits a log file name `POD.CONTAINER[.previous].log`. Container names never contain dots
/// (they are DNS labels) while Pod names may (DNS subdomains), so the last dot ends the Pod
/// name. A `--log-file` is stored as `FILE-NAME.file.log` ([`crate::logs::file`]), whose name
/// may hold dots too.
pub fn parse_log_file_name(name: &str) -> Option<(String, String, bool)> {
    let stem = name.strip_suffix(".log")?;
    let (stem, previous) = match stem.strip_suffix(".previous") {
        Some(s) => (s, true),
        None => (stem, false),
    };
    let (pod, container) = stem.rsplit_once('.')?;
    (!pod.is_empty() && !container.is_empty()).then(|| (pod.to_string(), container.to_string(), previous))
}

fn logs(dir: &Path) -> Evidence<Vec<LogSource>> {
    let logs_dir = dir.join("operator/logs");
    let entries = match fs::read_dir(&logs_dir) {
        Ok(entries) => entries,
        Err(_) => return Evidence::missing("operator logs", GapReason::NotInBundle("operator/logs/".into())),
    };
    let mut sources = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().to_string();
        let Some((pod, container, previous)) = parse_log_file_name(&file_name) else {
            continue;
        };
        match fs::read(entry.path()) {
            Ok(bytes) => sources.push(LogSource {
                pod,
                container,
                previous,
                text: String::from_utf8_lossy(&bytes).into_owned(),
            }),
            Err(e) => tracing::warn!("operator/logs/{file_name}: unreadable: {e}"),
        }
    }
    sources.sort_by(|a, b| (&a.pod, &a.container, !a.previous).cmp(&(&b.pod, &b.container, !b.previous)));
    Evidence::Present(sources)
}

/// What `collect` records in `meta.json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// RFC 3339 UTC.
    pub captured_at: String,
    /// kubeconfig context.
    pub context: Option<String>,
    /// Namespace filter; `None` with `-A`.
    pub namespace: Option<String>,
    /// `-A` was given.
    pub all_namespaces: bool,
    /// Each gap met while collecting.
    pub gaps: Vec<String>,
    /// This tool's version.
    pub collected_by: String,
    /// Operators seen that do not serve the namespace: `{"operator", "kind", "watches"}` each
    /// (what exists and what it watches; nothing else of theirs is collected). Absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_operators: Vec<super::operator::OperatorSummary>,
    /// The `--operator NS/deployment/NAME` `collect` was given, so that the bundle names the
    /// operator the live answer named ([`super::resolve::FLAG`]). Absent when not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
}

/// Writes `snapshot` as a bundle at `dir` (created; must be empty or absent). Files are written
/// to a temporary sibling directory first and renamed into place, so a failure leaves nothing
/// half-written.
pub fn write(snapshot: &Snapshot, meta: &Meta, dir: &Path) -> Result<(), AppError> {
    Staging::create(dir)?.commit(snapshot, meta, &[])
}

/// A bundle being written: the temporary sibling directory of its target (`.DIR.partial-PID`),
/// where lists too long to hold in memory are written as they arrive ([`Staging::list`]),
/// then the rest of the snapshot; [`Staging::commit`] renames it into place. Dropped without a
/// commit (an error), it is removed: nothing half-written is left.
pub struct Staging {
    target: PathBuf,
    path: PathBuf,
    committed: bool,
}

impl Staging {
    /// Checks that `dir` is absent or empty (else a usage error) and creates the staging
    /// directory beside it.
    pub fn create(dir: &Path) -> Result<Staging, AppError> {
        let io = |context: String| move |source: std::io::Error| AppError::Io { context, source };
        if dir.exists()
            && fs::read_dir(dir)
                .map_err(io(format!("read {}", dir.display())))?
                .next()
                .is_some()
        {
            return Err(AppError::Usage(format!(
                "{}: exists and is not empty; give a new directory",
                dir.display()
            )));
        }
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let path = parent.join(format!(
            ".{}.partial-{}",
            dir.file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| "bundle".into()),
            std::process::id()
        ));
        fs::create_dir_all(&path).map_err(io(format!("create {}", path.display())))?;
        Ok(Staging {
            target: dir.to_path_buf(),
            path,
            committed: false,
        })
    }

    /// A list file (`microservices.json`, `events.json`) written item by item as the items
    /// arrive, in the same layout as the rest of the bundle.
    pub fn list(&self, file: &str) -> Result<ListWriter, AppError> {
        ListWriter::create(&self.path.join(file))
    }

    /// Removes a list file begun with [`Staging::list`] (its evidence turned out a gap: no
    /// file, as for any gap).
    pub fn discard(&self, file: &str) {
        let _ = fs::remove_file(self.path.join(file));
    }

    /// Writes the rest of `snapshot` (every file but those in `streamed`, already written with
    /// [`Staging::list`]) and `meta`, then moves the bundle into place.
    pub fn commit(mut self, snapshot: &Snapshot, meta: &Meta, streamed: &[&str]) -> Result<(), AppError> {
        let io = |context: String| move |source: std::io::Error| AppError::Io { context, source };
        write_into(snapshot, meta, &self.path, streamed)?;
        let dir = &self.target;
        if dir.exists() {
            fs::remove_dir(dir).map_err(io(format!("replace empty {}", dir.display())))?;
        }
        fs::rename(&self.path, dir).map_err(io(format!("move the bundle into {}", dir.display())))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// A `{"apiVersion": "v1", "items": [...], "kind": "List", "metadata": {}}` file written one item
/// at a time: byte for byte what writing the whole list at once gives (pretty JSON, keys
/// sorted), with one item in memory at a time.
pub struct ListWriter {
    file: std::io::BufWriter<fs::File>,
    path: PathBuf,
    items: usize,
}

impl ListWriter {
    fn create(path: &Path) -> Result<ListWriter, AppError> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|source| AppError::Io {
                context: format!("create {}", parent.display()),
                source,
            })?;
        }
        let file = fs::File::create(path).map_err(|source| AppError::Io {
            context: format!("write {}", path.display()),
            source,
        })?;
        let mut writer = ListWriter {
            file: std::io::BufWriter::new(file),
            path: path.to_path_buf(),
            items: 0,
        };
        writer.put("{\n  \"apiVersion\": \"v1\",\n  \"items\": [")?;
        Ok(writer)
    }

    fn put(&mut self, text: &str) -> Result<(), AppError> {
        use std::io::Write;
        self.file.write_all(text.as_bytes()).map_err(|source| AppError::Io {
            context: format!("write {}", self.path.display()),
            source,
        })
    }

    /// Appends one item.
    pub fn push<T: Serialize>(&mut self, item: &T) -> Result<(), AppError> {
        // Through a Value, so that keys are sorted as in the rest of the bundle.
        let value = serde_json::to_value(item).expect("evidence serialises");
        let text = serde_json::to_string_pretty(&value).expect("evidence serialises");
        let mut out = String::with_capacity(text.len() + text.len() / 8 + 8);
        out.push_str(if self.items == 0 { "\n" } else { ",\n" });
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str("    ");
            out.push_str(line);
        }
        self.items += 1;
        self.put(&out)
    }

    /// How many items were appended.
    pub fn len(&self) -> usize {
        self.items
    }

    /// Whether no item was appended.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Ends the list and flushes the file.
    pub fn finish(mut self) -> Result<(), AppError> {
        use std::io::Write;
        let end = if self.items == 0 { "]," } else { "\n  ]," };
        self.put(end)?;
        self.put("\n  \"kind\": \"List\",\n  \"metadata\": {}\n}\n")?;
        self.file.flush().map_err(|source| AppError::Io {
            context: format!("write {}", self.path.display()),
            source,
        })
    }
}

fn write_into(snapshot: &Snapshot, meta: &Meta, dir: &Path, streamed: &[&str]) -> Result<(), AppError> {
    let put = |file: &str, value: &Value| -> Result<(), AppError> {
        if streamed.contains(&file) {
            return Ok(());
        }
        let path: PathBuf = dir.join(file);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|source| AppError::Io {
                context: format!("create {}", parent.display()),
                source,
            })?;
        }
        let text = serde_json::to_string_pretty(value).expect("evidence serialises");
        fs::write(&path, text + "\n").map_err(|source| AppError::Io {
            context: format!("write {}", path.display()),
            source,
        })
    };
    fs::create_dir_all(dir).map_err(|source| AppError::Io {
        context: format!("create {}", dir.display()),
        source,
    })?;
    put("meta.json", &serde_json::to_value(meta).expect("meta serialises"))?;
    write_list(&put, &snapshot.resource.bundle_file(), &snapshot.microservices)?;
    if let Evidence::Present(crd) = &snapshot.crd {
        put("crd.json", &serde_json::to_value(crd).expect("CRD serialises"))?;
    }
    write_list(&put, "events.json", &snapshot.events)?;
    write_list(&put, "operator/deployment.json", &snapshot.operator.deployments)?;
    write_list(&put, "operator/pods.json", &snapshot.operator.pods)?;
    write_list(&put, "operator/configmaps.json", &snapshot.operator.configmaps)?;
    write_list(&put, "operator/leases.json", &snapshot.operator.leases)?;
    write_list(&put, "operator/kopfpeerings.json", &snapshot.operator.peerings)?;
    write_list(&put, "rbac/access-reviews.json", &snapshot.rbac.access_reviews)?;
    write_list(&put, "rbac/roles.json", &snapshot.rbac.roles)?;
    write_list(&put, "rbac/rolebindings.json", &snapshot.rbac.role_bindings)?;
    write_list(&put, "rbac/clusterroles.json", &snapshot.rbac.cluster_roles)?;
    write_list(
        &put,
        "rbac/clusterrolebindings.json",
        &snapshot.rbac.cluster_role_bindings,
    )?;
    if let Evidence::Present(logs) = &snapshot.operator.logs {
        let logs_dir = dir.join("operator/logs");
        fs::create_dir_all(&logs_dir).map_err(|source| AppError::Io {
            context: format!("create {}", logs_dir.display()),
            source,
        })?;
        for log in logs {
            let name = format!(
                "{}.{}{}.log",
                log.pod,
                log.container,
                if log.previous { ".previous" } else { "" }
            );
            let path = logs_dir.join(name);
            fs::write(&path, &log.text).map_err(|source| AppError::Io {
                context: format!("write {}", path.display()),
                source,
            })?;
        }
    }
    Ok(())
}

fn write_list<T: Serialize>(
    put: &dyn Fn(&str, &Value) -> Result<(), AppError>,
    file: &str,
    evidence: &Evidence<Vec<T>>,
) -> Result<(), AppError> {
    match evidence {
        Evidence::Present(items) => put(
            file,
            &json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}),
        ),
        Evidence::Gap(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared_bundle(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/bundles")
            .join(name)
    }

    /// A list written item by item is, byte for byte, the list written at once.
    #[test]
    fn a_file_written_into_a_bundle_reads_back_under_its_own_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("operate.2026-11-29.log");
        std::fs::write(&path, b"one\ntwo\n").unwrap();
        let mut snapshot = read(dir.path()).unwrap();
        crate::evidence::add_log_files(
            &mut snapshot.operator.logs,
            &crate::logs::file::read_sources(&[path]).unwrap(),
        );
        let meta = Meta {
            captured_at: "2026-11-29T17:20:00Z".into(),
            context: None,
            namespace: Some("todo".into()),
            all_namespaces: false,
            gaps: vec![],
            collected_by: "test".into(),
            other_operators: vec![],
            operator: None,
        };
        let out = dir.path().join("bundle");
        write(&snapshot, &meta, &out).unwrap();
        assert!(out.join("operator/logs/operate.2026-11-29.log.file.log").is_file());
        let again = read(&out).unwrap();
        assert_eq!(again.operator.logs.get(), snapshot.operator.logs.get());
    }

    #[test]
    fn a_list_written_item_by_item_is_the_list_written_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let objects: Value =
            serde_json::from_str(&fs::read_to_string(shared_bundle("failed-cycle").join("events.json")).unwrap())
                .unwrap();
        let items: Vec<k8s_openapi::api::core::v1::Event> = serde_json::from_value(objects["items"].clone()).unwrap();
        for n in [0, 1, items.len()] {
            let staging = Staging::create(&tmp.path().join(format!("b{n}"))).unwrap();
            let mut list = staging.list("events.json").unwrap();
            for item in &items[..n] {
                list.push(item).unwrap();
            }
            assert_eq!(list.len(), n);
            list.finish().unwrap();
            let mut snapshot = read(&shared_bundle("failed-cycle")).unwrap();
            snapshot.events = Evidence::Present(items[..n].to_vec());
            let meta = Meta {
                captured_at: "2026-11-29T17:20:00Z".into(),
                context: None,
                namespace: Some("store".into()),
                all_namespaces: false,
                gaps: vec![],
                collected_by: "test".into(),
                other_operators: vec![],
                operator: None,
            };
            staging.commit(&snapshot, &meta, &["events.json"]).unwrap();
            let whole = tmp.path().join(format!("w{n}"));
            write(&snapshot, &meta, &whole).unwrap();
            assert_eq!(
                fs::read_to_string(tmp.path().join(format!("b{n}/events.json"))).unwrap(),
                fs::read_to_string(whole.join("events.json")).unwrap(),
                "{n} items"
            );
        }
        // A staging directory dropped without a commit leaves nothing.
        let target = tmp.path().join("never");
        drop(Staging::create(&target).unwrap());
        let left: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("never"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// `kubectl get roles,rolebindings -o json > rbac/roles.json` (a recipe the README once
    /// gave) loses nothing: RBAC objects are taken by kind, whichever file holds them.
    #[test]
    fn rbac_objects_are_read_by_kind_whichever_file_holds_them() {
        let names = |s: &Snapshot| {
            let roles: Vec<String> = s
                .rbac
                .roles
                .get()
                .unwrap()
                .iter()
                .filter_map(|r| r.metadata.name.clone())
                .collect();
            let bindings: Vec<String> = s
                .rbac
                .role_bindings
                .get()
                .unwrap()
                .iter()
                .filter_map(|r| r.metadata.name.clone())
                .collect();
            (roles, bindings, s.rbac.cluster_roles.get().unwrap().len())
        };
        let original = read(&shared_bundle("ours-style-rbac")).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::create_dir_all(dir.join("rbac")).unwrap();
        for file in [
            "microservices.json",
            "rbac/clusterroles.json",
            "rbac/clusterrolebindings.json",
        ] {
            fs::copy(shared_bundle("ours-style-rbac").join(file), dir.join(file)).unwrap();
        }
        let mut merged = Vec::new();
        for file in ["rbac/roles.json", "rbac/rolebindings.json"] {
            let doc: Value =
                serde_json::from_str(&fs::read_to_string(shared_bundle("ours-style-rbac").join(file)).unwrap())
                    .unwrap();
            merged.extend(crate::evidence::raw_items(doc));
        }
        fs::write(
            dir.join("rbac/roles.json"),
            json!({"apiVersion": "v1", "kind": "List", "items": merged}).to_string(),
        )
        .unwrap();
        let combined = read(dir).unwrap();
        assert!(!names(&original).1.is_empty());
        assert_eq!(names(&combined), names(&original));
        // A kind no file holds is still a gap naming its own file.
        fs::remove_file(dir.join("rbac/clusterroles.json")).unwrap();
        let gap = read(dir).unwrap().rbac.cluster_roles.gap().unwrap().to_string();
        assert_eq!(gap, "ClusterRoles: not in the bundle (rbac/clusterroles.json)");
    }

    #[test]
    fn reads_a_real_bundle() {
        let snapshot = read(&shared_bundle("healthy")).unwrap();
        assert_eq!(snapshot.captured_at.unwrap().to_rfc3339(), "2026-11-29T17:12:03+00:00");
        assert_eq!(snapshot.namespace.as_deref(), Some("store"));
        assert_eq!(snapshot.microservices.get().unwrap().len(), 1);
        assert_eq!(snapshot.events.get().unwrap().len(), 5);
        assert_eq!(snapshot.operator.deployments.get().unwrap().len(), 1);
        let logs = snapshot.operator.logs.get().unwrap();
        assert_eq!(logs.len(), 1);
        assert_eq!(logs[0].container, "operator");
        // A Kopf operator with --standalone uses neither a Lease nor peering: not needed, not missing.
        assert!(
            snapshot
                .gaps()
                .iter()
                .all(|g| matches!(g.reason, GapReason::NotCollected(_)) && g.is_leadership()),
            "{:?}",
            snapshot.gaps()
        );
    }

    #[test]
    fn missing_files_are_gaps_and_bad_paths_are_usage_errors() {
        let empty = tempfile::tempdir().unwrap();
        let snapshot = read(empty.path()).unwrap();
        assert_eq!(
            snapshot.microservices.gap().unwrap().reason,
            GapReason::NotInBundle("microservices.json".into())
        );
        assert!(snapshot.now().is_none());
        let err = read(&empty.path().join("nope")).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("nope") && err.to_string().contains("does not exist"));
        let file = empty.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(read(&file).unwrap_err().to_string().contains("is not a directory"));
    }

    #[test]
    fn a_forbidden_gap_recorded_by_collect_reads_back_as_forbidden() {
        // Was: the missing events.json read back as "not in the bundle", so a bundle collected
        // by a caller who may not list events lost caller-cannot-list-events (and exited 3).
        let mut snapshot = read(&shared_bundle("healthy")).unwrap();
        let message = "events is forbidden: User \"dev@example.com\" cannot list resource \"events\" in API group \"\" in the namespace \"store\"";
        snapshot.events = Evidence::missing("events", GapReason::Forbidden(message.into()));
        let meta = Meta {
            captured_at: "2026-11-29T17:20:00Z".into(),
            context: None,
            namespace: Some("store".into()),
            all_namespaces: false,
            gaps: snapshot.gaps().iter().map(ToString::to_string).collect(),
            collected_by: "test".into(),
            other_operators: vec![],
            operator: None,
        };
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("bundle");
        write(&snapshot, &meta, &dir).unwrap();
        assert!(!dir.join("events.json").exists());
        let again = read(&dir).unwrap();
        assert_eq!(again.events.gap(), snapshot.events.gap());
        // A gap recorded for evidence whose file is present does not hide the file.
        fs::write(dir.join("events.json"), r#"{"kind": "List", "items": []}"#).unwrap();
        assert!(read(&dir).unwrap().events.get().is_some());
    }

    #[test]
    fn log_file_names() {
        assert_eq!(
            parse_log_file_name("op-5f9-abc.operator.log"),
            Some(("op-5f9-abc".into(), "operator".into(), false))
        );
        assert_eq!(
            parse_log_file_name("op.operator.previous.log"),
            Some(("op".into(), "operator".into(), true))
        );
        assert_eq!(
            parse_log_file_name("op.v2.operator.log"),
            Some(("op.v2".into(), "operator".into(), false))
        );
        // A --log-file named operate.log, as `collect --log-file` writes it.
        assert_eq!(
            parse_log_file_name("operate.log.file.log"),
            Some(("operate.log".into(), "file".into(), false))
        );
        assert_eq!(parse_log_file_name("README.md"), None);
        assert_eq!(parse_log_file_name(".log"), None);
    }

    #[test]
    fn write_then_read_round_trips() {
        let snapshot = read(&shared_bundle("stale-port")).unwrap();
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("bundle");
        let meta = Meta {
            captured_at: "2026-11-29T17:20:00Z".into(),
            context: Some("test".into()),
            namespace: Some("store".into()),
            all_namespaces: false,
            gaps: vec![],
            collected_by: "test".into(),
            other_operators: vec![],
            operator: None,
        };
        write(&snapshot, &meta, &dir).unwrap();
        let again = read(&dir).unwrap();
        assert_eq!(
            again.microservices.get().unwrap(),
            snapshot.microservices.get().unwrap()
        );
        assert_eq!(again.events.get().unwrap().len(), snapshot.events.get().unwrap().len());
        assert_eq!(
            again.operator.logs.get().unwrap(),
            snapshot.operator.logs.get().unwrap()
        );
        assert_eq!(again.captured_at.unwrap().to_rfc3339(), "2026-11-29T17:20:00+00:00");
        assert_eq!(again.gaps(), snapshot.gaps());
        // A non-empty target is refused, and nothing is half-written.
        let err = write(&snapshot, &meta, &dir).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            fs::read_dir(out.path())
                .unwrap()
                .all(|e| !e.unwrap().file_name().to_string_lossy().contains("partial"))
        );
    }
}
