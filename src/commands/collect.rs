//! `kubectl microservice collect DIR [-n NS | -A]`: writes a bundle (docs/contracts.md) with
//! everything the diagnostics read — Microservices with managedFields, the CRD, events, the
//! operator's Deployment, Pods, mounted ConfigMaps, current and previous logs with timestamps,
//! RBAC objects and access reviews for its ServiceAccount. Never Secrets. `--log-file FILE` adds
//! the operator's log from a file (an operator without a Pod), written as
//! `operator/logs/FILE-NAME.file.log` so that `--bundle` reads the same evidence.

use std::fs;
use std::path::Path;

use crate::cli::{CollectArgs, GlobalArgs};
use crate::error::AppError;
use crate::evidence::bundle::{self, Meta};
use crate::evidence::gather::{EvidenceSource, Needs, Objects, gather};
use crate::evidence::live::{self, LiveScope};
use crate::text::sanitize;

/// Checks DIR before anything is gathered, so that a bad DIR costs no cluster call and prints
/// nothing else: it must be absent or an empty directory, and a directory must be creatable
/// beside it (where [`bundle::Staging`] stages the bundle), which is probed by creating and
/// removing one in the nearest existing ancestor. Errors are usage errors (exit 2) naming DIR.
fn check_target(dir: &Path) -> Result<(), AppError> {
    let shown = dir.display();
    match fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            return Err(AppError::Usage(format!(
                "{shown}: exists and is not a directory; give a new directory"
            )));
        }
        Ok(_) => {
            let empty = fs::read_dir(dir)
                .map_err(|e| AppError::Usage(format!("{shown}: cannot read it: {e}")))?
                .next()
                .is_none();
            if !empty {
                return Err(AppError::Usage(format!(
                    "{shown}: exists and is not empty; give a new directory"
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(AppError::Usage(format!(
                "{shown}: cannot create the bundle there ({e}); give a directory you can write"
            )));
        }
    }
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let existing = parent
        .ancestors()
        .map(|a| if a.as_os_str().is_empty() { Path::new(".") } else { a })
        .find(|a| a.symlink_metadata().is_ok())
        .unwrap_or(Path::new("."));
    let probe = existing.join(format!(".kubectl-microservice-collect-probe-{}", std::process::id()));
    fs::create_dir(&probe).map_err(|e| {
        AppError::Usage(format!(
            "{shown}: cannot create the bundle there ({}: {e}); give a directory you can write",
            existing.display()
        ))
    })?;
    let _ = fs::remove_dir(&probe);
    Ok(())
}

/// Runs `collect`; exit 0 once the bundle is written (gaps are listed in meta.json and on
/// stderr, then the sensitive-data warning); 2 for usage errors (DIR not empty or not writable,
/// a bad `--log-file` path), before any cluster call.
pub fn run(global: &GlobalArgs, args: &CollectArgs) -> Result<u8, AppError> {
    if let Some(spec) = &args.operator {
        live::parse_operator_spec(spec).map_err(|e| AppError::Usage(e.to_string()))?;
    }
    let one_namespace = global.one_namespace("collect")?;
    if let Some(text) = &global.selector {
        crate::selector::LabelSelector::from_flag(text)?;
    }
    check_target(&args.dir)?;
    let files = super::log_files::read(&args.log_files)?;
    let runtime = tokio::runtime::Runtime::new().map_err(|source| AppError::Io {
        context: "start the async runtime".into(),
        source,
    })?;
    runtime.block_on(collect(global, args, one_namespace, &files))
}

/// Gathers the snapshot from the cluster of the flags and writes it as the bundle DIR (through
/// a staging directory beside it): the Microservices and events streamed into it first, then
/// everything else, then `meta.json`; the notes on stderr.
async fn collect(
    global: &GlobalArgs,
    args: &CollectArgs,
    one_namespace: Option<String>,
    files: &[crate::logs::LogSource],
) -> Result<u8, AppError> {
    let connection = global.connection();
    let (client, config) = crate::client::client(&connection, crate::client::Usage::Diagnostics).await?;
    super::check_operator_exists(&client, &connection, &config, args.operator.as_deref()).await?;
    let namespace = crate::cli::namespace_in_context(global.all_namespaces, one_namespace, &config.default_namespace);
    let resource = crate::evidence::target::live(&client, args.resource.resource.as_deref()).await?;
    let plan = LiveScope {
        resource,
        namespace: namespace.clone(),
        selector: global.selector.clone(),
        operator: args.operator.clone(),
        context: global.context.clone(),
        server: config.cluster_url.to_string(),
        ..Default::default()
    };
    let where_ = format!(
        "{} (context {})",
        config.cluster_url,
        crate::client::context_name(&connection).as_deref().unwrap_or("unknown")
    );
    let access = live::caller_access_for(&client, namespace.as_deref(), &plan.resource)
        .await
        .map_err(|e| crate::client::unreachable(&connection, &config, e))?;
    if let Some(ns) = &namespace {
        namespace_exists(&client, ns, &where_).await?;
    }
    let progress = Progress::on_terminal();
    let staging = bundle::Staging::create(&args.dir)?;
    progress.step(&format!("{} and their events", plan.resource.kind));
    let streamed = stream_objects(&client, &plan, &access, &staging, &where_).await?;
    let counts = (streamed.objects, streamed.events);
    let source = EvidenceSource::Live {
        client: &client,
        access: &access,
        scope: &plan,
    };
    // Everything else, as `explain-events` reads it: the operator with its Pods' logs (and
    // the previous container's), RBAC, access reviews, the CRD, ConfigMaps.
    let evidence_plan = Needs {
        objects: Objects::Streamed {
            snapshot: Box::new(streamed.snapshot),
            namespaces: streamed.namespaces,
        },
        operator: Some(live::Logs::WithPrevious),
        everything: true,
        log_files: files,
        progress: Some(&|step| progress.step(step)),
    };
    let snapshot = gather(source, evidence_plan)
        .await
        .map_err(|e| e.into_app(|e| AppError::kube(format!("cannot get {} from {where_}", plan.resource.plural), e)))?;
    progress.done();
    let gaps: Vec<String> = snapshot
        .gaps()
        .iter()
        .filter(|g| !matches!(g.reason, crate::evidence::GapReason::NotCollected(_)))
        .map(ToString::to_string)
        .collect();
    let meta = bundle_meta(&snapshot, &connection, namespace.clone(), global.all_namespaces, &gaps);
    let objects_file = snapshot.resource.bundle_file();
    staging.commit(&snapshot, &meta, &[objects_file.as_str(), EVENTS_FILE])?;
    say_written(&args.dir, &snapshot, namespace.as_deref(), &gaps, counts);
    Ok(0)
}

/// The bundle's `meta.json`: when and where (context, namespace or `-A`) it was captured, by
/// which build, its gaps and the operators it names.
fn bundle_meta(
    snapshot: &crate::evidence::Snapshot,
    connection: &crate::client::ConnectionSettings,
    namespace: Option<String>,
    all_namespaces: bool,
    gaps: &[String],
) -> Meta {
    Meta {
        captured_at: crate::time::rfc3339_seconds(snapshot.captured_at.unwrap_or_else(chrono::Utc::now)),
        // The context used: --context, else the kubeconfig's current-context.
        context: crate::client::context_name(connection),
        namespace,
        all_namespaces,
        gaps: gaps.to_vec(),
        collected_by: format!("kubectl-microservice {}", crate::VERSION_LINE),
        other_operators: snapshot.operator.others.clone(),
        operator: snapshot.operator.chosen.clone(),
    }
}

/// The lines on stderr once the bundle `dir` is written: the sensitive-data warning, each gap,
/// the operator every command will name from it (with a namespace), and what it holds
/// (`streamed`: how many Microservices and events were streamed into it).
fn say_written(
    dir: &Path,
    snapshot: &crate::evidence::Snapshot,
    namespace: Option<&str>,
    gaps: &[String],
    streamed: (usize, usize),
) {
    crate::commands::say(format_args!(
        "warning: operator logs and ConfigMaps may hold sensitive data; review {} before sharing it",
        dir.display()
    ));
    for gap in gaps {
        crate::commands::say(format_args!("note: evidence gap: {}", sanitize(gap)));
    }
    // The operator as every command will name it from this bundle (the resolver reads the
    // same evidence from it).
    if namespace.is_some() {
        let resolution = snapshot.operator_for_namespace(namespace);
        crate::commands::say(format_args!("note: operator: {}", sanitize(&resolution.line())));
    }
    let count = |n: Option<usize>, noun: &str| crate::text::count_or_no(n.unwrap_or(0) as u64, noun);
    let (objects, events) = streamed;
    crate::commands::say(format_args!(
        "wrote {}: {}, {}, {}",
        dir.display(),
        count(
            snapshot.microservices.get().map(|_| objects),
            &object_noun(&snapshot.resource)
        ),
        count(snapshot.events.get().map(|_| events), "event"),
        count(snapshot.operator.logs.get().map(Vec::len), "log file"),
    ));
}

/// What `say_written` counts the objects as: `microservice`, else the resource's singular
/// (`kopfexample`), else its kind in lower case.
fn object_noun(resource: &crate::resource::identity::ResourceId) -> String {
    if resource.singular.is_empty() {
        resource.kind.to_ascii_lowercase()
    } else {
        resource.singular.clone()
    }
}

/// The events' file, streamed as the objects' ([`crate::resource::identity::ResourceId::bundle_file`]) is.
const EVENTS_FILE: &str = "events.json";

/// What [`stream_objects`] leaves to the rest of `collect`.
struct Streamed {
    /// The snapshot to complete: its Microservices and events empty (they are in the bundle
    /// already), or their gaps.
    snapshot: crate::evidence::Snapshot,
    /// The namespaces of the objects written.
    namespaces: std::collections::BTreeSet<String>,
    /// Objects written to `microservices.json`.
    objects: usize,
    /// Events written to `events.json`.
    events: usize,
}

/// The Microservices and events of `plan`, written into the bundle being staged page by page as
/// they arrive, concurrently: at most a page of each is in memory (10,000 objects with their
/// managedFields, and their 10,000 events, would be a few hundred MiB as parsed JSON). A list
/// that is forbidden (or, for Microservices, not served) becomes a gap and its file is removed;
/// any other failure of the Microservices list ends `collect` (exit 3).
async fn stream_objects(
    client: &kube::Client,
    plan: &LiveScope,
    access: &live::CallerAccess,
    staging: &bundle::Staging,
    where_: &str,
) -> Result<Streamed, AppError> {
    let objects_name = plan.resource.bundle_file();
    let mut objects_file = staging.list(&objects_name)?;
    let mut events_file = staging.list(EVENTS_FILE)?;
    let mut namespaces = std::collections::BTreeSet::new();
    let (mut objects_error, mut events_error) = (None, None);
    let objects = live::microservice_pages(client, plan, access, |page, _| {
        for obj in page {
            if let Some(ns) = &obj.metadata.namespace
                && !namespaces.contains(ns)
            {
                namespaces.insert(ns.clone());
            }
            if objects_error.is_none()
                && let Err(e) = objects_file.push(&obj)
            {
                objects_error = Some(e);
            }
        }
    });
    let events = live::microservice_event_pages(client, plan, access, |page, _| {
        for event in page {
            if events_error.is_none()
                && let Err(e) = events_file.push(&event)
            {
                events_error = Some(e);
            }
        }
    });
    let (objects, events) = futures::join!(objects, events);
    if let Some(e) = objects_error.or(events_error) {
        return Err(e);
    }
    let (object_count, event_count) = (objects_file.len(), events_file.len());
    objects_file.finish()?;
    events_file.finish()?;
    let mut snapshot = live::skeleton(plan);
    match objects {
        Ok(date) => snapshot.captured_at = date,
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 403 => {
            snapshot.microservices = live::evidence(&plan.resource.plural, Err(kube::Error::Api(status)));
            staging.discard(&objects_name);
        }
        Err(e) => {
            return Err(AppError::kube(
                format!("cannot get {} from {where_}", plan.resource.plural),
                e,
            ));
        }
    }
    let events_failed = events.is_err();
    snapshot.add_events(events.map(|date| (Vec::new(), date)));
    if events_failed {
        staging.discard(EVENTS_FILE);
    }
    Ok(Streamed {
        snapshot,
        namespaces,
        objects: object_count,
        events: event_count,
    })
}

/// Fails with exit 3 when `namespace` does not exist, before anything is written: a bundle of a
/// namespace that is not there would hold only other teams' operators. A caller who may not
/// `get` namespaces goes on (the Microservices list then tells).
async fn namespace_exists(client: &kube::Client, namespace: &str, where_: &str) -> Result<(), AppError> {
    use k8s_openapi::api::core::v1::Namespace;
    match kube::Api::<Namespace>::all(client.clone()).get(namespace).await {
        Err(kube::Error::Api(status)) if status.code == 404 => Err(AppError::Undecided(format!(
            "namespace {namespace} not found in {where_}: nothing was collected (kubectl get namespaces lists them)"
        ))),
        _ => Ok(()),
    }
}

/// What `collect` is doing, one line per step on stderr, only when stderr is a terminal (a
/// script's stderr gets only the summary). Our own: a few fixed steps need no progress-bar crate.
struct Progress {
    on: bool,
    started: std::time::Instant,
}

impl Progress {
    fn on_terminal() -> Self {
        use std::io::IsTerminal;
        Progress {
            on: std::io::stderr().is_terminal(),
            started: std::time::Instant::now(),
        }
    }

    fn step(&self, what: &str) {
        if self.on {
            crate::commands::say(format_args!(
                "collecting {what} ({:.1}s)",
                self.started.elapsed().as_secs_f64()
            ));
        }
    }

    fn done(&self) {
        if self.on {
            crate::commands::say(format_args!(
                "collected in {:.1}s",
                self.started.elapsed().as_secs_f64()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOT_FOUND: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"missing\" not found","reason":"NotFound","details":{"name":"missing","kind":"namespaces"},"code":404}"#;
    const FORBIDDEN: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"todo\" is forbidden","reason":"Forbidden","code":403}"#;

    #[tokio::test]
    async fn a_namespace_that_does_not_exist_is_undecided_and_named() {
        let (client, seen) = crate::client::fake::fake_api(|path, _| match path {
            "/api/v1/namespaces/missing" => (404, NOT_FOUND.into()),
            "/api/v1/namespaces/todo" => (403, FORBIDDEN.into()),
            _ => (
                200,
                r#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"shop"}}"#.into(),
            ),
        });
        let err = namespace_exists(&client, "missing", "https://127.0.0.1:6443 (context dev)")
            .await
            .unwrap_err();
        assert!(matches!(err, AppError::Undecided(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "namespace missing not found in https://127.0.0.1:6443 (context dev): nothing was collected (kubectl get namespaces lists them)"
        );
        // May not get namespaces: go on (the Microservices list tells); one that exists: go on.
        namespace_exists(&client, "todo", "x").await.unwrap();
        namespace_exists(&client, "shop", "x").await.unwrap();
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "/api/v1/namespaces/missing",
                "/api/v1/namespaces/todo",
                "/api/v1/namespaces/shop"
            ]
        );
    }
}
