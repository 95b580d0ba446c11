//! The hidden `__complete` subcommand, run as kubectl's plugin completion runs it (through the
//! binary and through `completions/kubectl_complete-microservice`), without a real cluster:
//! a refused port, a server that never answers, a small HTTP server that plays the API server,
//! and exec credential plugins that try to prompt.
//!
//! The live-cluster case (names from a real kube-apiserver, and through the real kubectl) is in
//! `tests/e2e_complete.rs`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// A port on which nothing listens (bound, then released).
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A kubeconfig with one context per `(name, server, namespace)`, all using `user`, the
/// first one current.
fn kubeconfig(dir: &Path, contexts: &[(&str, &str, &str)], user: &str) -> PathBuf {
    let mut yaml = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, server, _) in contexts {
        yaml += &format!("- name: {name}\n  cluster:\n    server: {server}\n");
    }
    yaml += &format!("users:\n- name: u\n  user:\n{user}\ncontexts:\n");
    for (name, _, namespace) in contexts {
        yaml += &format!("- name: {name}\n  context:\n    cluster: {name}\n    user: u\n    namespace: {namespace}\n");
    }
    yaml += &format!("current-context: {}\n", contexts[0].0);
    let path = dir.join("kubeconfig");
    std::fs::write(&path, yaml).unwrap();
    path
}

const TOKEN_USER: &str = "    token: not-a-real-token";

/// Runs `kubectl-microservice __complete WORDS...` with only `kubeconfig` to go by, feeding
/// `stdin` (as a terminal would type) and returning the output and how long it took.
fn complete(kubeconfig: &Path, words: &[&str], stdin: &[u8]) -> (Output, Duration) {
    let home = kubeconfig.parent().unwrap();
    let start = Instant::now();
    let mut child = Command::new(BIN)
        .arg("__complete")
        .args(words)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    // Keep stdin open while the command runs, as a terminal does.
    let output = child.wait_with_output().unwrap();
    drop(input);
    (output, start.elapsed())
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn assert_quiet_and_empty(output: &Output, what: &str) {
    assert!(output.status.success(), "{what}: exit {:?}", output.status);
    assert_eq!(stdout(output), ":4\n", "{what}: expected no candidates");
    assert!(
        output.stderr.is_empty(),
        "{what}: stderr {:?}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn without_a_cluster_the_answer_is_quick_empty_and_silent() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!("https://127.0.0.1:{}", closed_port());
    let kc = kubeconfig(dir.path(), &[("dead", &server, "default")], TOKEN_USER);
    for words in [
        &["status", ""][..],
        &["logs", "todo"],
        &["explain-events", ""],
        &["status", "-n", ""],
    ] {
        let (output, took) = complete(&kc, words, b"");
        assert_quiet_and_empty(&output, &format!("{words:?}"));
        assert!(took < Duration::from_secs(1), "{words:?} took {took:?}");
    }
    // No kubeconfig at all.
    let (output, _) = complete(&dir.path().join("nosuch"), &["status", ""], b"");
    assert_quiet_and_empty(&output, "no kubeconfig");
}

/// A server that accepts connections and never answers: the deadline, not the 10 s request
/// timeout of the diagnostics, ends the wait.
#[test]
fn a_server_that_never_answers_is_cut_off_at_the_deadline() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    for server in [format!("https://127.0.0.1:{port}"), format!("http://127.0.0.1:{port}")] {
        let kc = kubeconfig(dir.path(), &[("silent", &server, "default")], TOKEN_USER);
        let (output, took) = complete(&kc, &["status", ""], b"");
        assert_quiet_and_empty(&output, &server);
        // The budget is 0.6 s; the margin is for a loaded machine, far below the 10 s a
        // request would otherwise wait.
        assert!(took < Duration::from_millis(2000), "{server}: took {took:?}");
    }
    assert!(!held.lock().unwrap().is_empty(), "the client never connected");
}

/// An exec credential plugin that would prompt: it must get no terminal (stdin closed, stderr
/// captured) and be told `interactive: false`; one that insists on interactivity is not run.
#[cfg(unix)]
#[test]
fn exec_credential_plugins_never_get_an_interactive_login() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("plugin-ran");
    let plugin = dir.path().join("login-plugin");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\n\
             printf 'Password: ' >&2\n\
             if read -r answer; then got=\"stdin=$answer\"; else got=stdin=eof; fi\n\
             printf '%s\\n%s\\n' \"$got\" \"$KUBERNETES_EXEC_INFO\" > {record:?}\n\
             echo 'login failed: no password' >&2\n\
             exit 1\n"
        ),
    )
    .unwrap();
    make_executable(&plugin);
    let server = format!("https://127.0.0.1:{}", closed_port());
    for mode in ["IfAvailable", "Never", ""] {
        let _ = std::fs::remove_file(&record);
        let mode_line = if mode.is_empty() {
            String::new()
        } else {
            format!("\n      interactiveMode: {mode}")
        };
        let user = format!(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}{mode_line}",
            plugin.display()
        );
        let kc = kubeconfig(dir.path(), &[("sso", &server, "default")], &user);
        let (output, took) = complete(&kc, &["status", ""], b"hunter2\n");
        assert_quiet_and_empty(&output, mode);
        assert!(took < Duration::from_secs(1), "{mode}: took {took:?}");
        let ran = std::fs::read_to_string(&record).unwrap_or_else(|e| panic!("{mode}: the plugin did not run: {e}"));
        let mut lines = ran.lines();
        assert_eq!(
            lines.next(),
            Some("stdin=eof"),
            "{mode}: the plugin read the user's terminal"
        );
        let info: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(info["spec"]["interactive"], false, "{mode}: {info}");
    }

    let _ = std::fs::remove_file(&record);
    let user = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Always",
        plugin.display()
    );
    let kc = kubeconfig(dir.path(), &[("sso", &server, "default")], &user);
    let (output, _) = complete(&kc, &["status", ""], b"hunter2\n");
    assert_quiet_and_empty(&output, "Always");
    assert!(!record.exists(), "a plugin that requires an interactive login was run");
}

/// A small HTTP server playing the API server: answers metadata lists of Microservices and
/// Namespaces, and records the paths asked.
struct FakeApiServer {
    url: String,
    paths: Arc<Mutex<Vec<String>>>,
}

impl FakeApiServer {
    fn start() -> FakeApiServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let paths = Arc::new(Mutex::new(Vec::new()));
        let seen = paths.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, &seen));
            }
        });
        FakeApiServer { url, paths }
    }

    fn paths(&self) -> Vec<String> {
        std::mem::take(&mut self.paths.lock().unwrap())
    }
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut content_length = 0;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header == "\r\n" || header.is_empty() {
                break;
            }
            if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                content_length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; content_length];
        reader.read_exact(&mut body).unwrap();
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .split('?')
            .next()
            .unwrap()
            .to_string();
        seen.lock().unwrap().push(path.clone());
        let names: &[(&str, &str)] = match path.as_str() {
            "/apis/platform.example.io/v1alpha1/namespaces/todo/microservices" => {
                &[("todo", "todo-api"), ("todo", "todo-db")]
            }
            "/apis/platform.example.io/v1alpha1/namespaces/team-a/microservices" => &[("team-a", "web")],
            "/apis/platform.example.io/v1alpha1/microservices" => &[
                ("team-a", "web"),
                ("todo", "todo-api"),
                ("todo", "todo-db"),
                ("team-b", "web"),
            ],
            "/api/v1/namespaces" => &[("", "team-a"), ("", "todo"), ("", "kube-system")],
            _ => &[],
        };
        let items: Vec<serde_json::Value> = names
            .iter()
            .map(|(ns, name)| {
                let mut metadata = serde_json::json!({ "name": name });
                if !ns.is_empty() {
                    metadata["namespace"] = (*ns).into();
                }
                serde_json::json!({ "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": metadata })
            })
            .collect();
        let body = serde_json::json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList", "metadata": {}, "items": items,
        })
        .to_string();
        let mut out = &stream;
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if out
            .write_all(head.as_bytes())
            .and_then(|_| out.write_all(body.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}

#[test]
fn names_come_from_the_cluster_namespace_and_context_of_the_line() {
    let api = FakeApiServer::start();
    let dead = format!("https://127.0.0.1:{}", closed_port());
    let dir = tempfile::tempdir().unwrap();
    // The current context is dead: only the line's --context reaches the server.
    let kc = kubeconfig(
        dir.path(),
        &[("dead", &dead, "todo"), ("live", &api.url, "team-a")],
        TOKEN_USER,
    );

    let (output, _) = complete(&kc, &["status", "--context", "live", "-n", "todo", ""], b"");
    assert_eq!(stdout(&output), "todo-api\ntodo-db\n:4\n");
    assert!(output.stderr.is_empty());
    assert_eq!(
        api.paths(),
        ["/apis/platform.example.io/v1alpha1/namespaces/todo/microservices"]
    );

    // Flags before the subcommand, a prefix, and the context's own namespace.
    let (output, _) = complete(&kc, &["--context=live", "logs", "w"], b"");
    assert_eq!(stdout(&output), "web\n:4\n");
    assert_eq!(
        api.paths(),
        ["/apis/platform.example.io/v1alpha1/namespaces/team-a/microservices"]
    );

    // -A: every namespace, names once each.
    let (output, _) = complete(&kc, &["explain-events", "-A", "--context", "live", ""], b"");
    assert_eq!(stdout(&output), "todo-api\ntodo-db\nweb\n:4\n");

    // Namespaces for -n.
    let (output, _) = complete(&kc, &["status", "--context", "live", "--namespace", "t"], b"");
    assert_eq!(stdout(&output), "team-a\ntodo\n:4\n");
    assert_eq!(api.paths().last().map(String::as_str), Some("/api/v1/namespaces"));

    // --kubeconfig on the line beats $KUBECONFIG.
    let other = tempfile::tempdir().unwrap();
    let live_only = kubeconfig(other.path(), &[("live", &api.url, "todo")], TOKEN_USER);
    let (output, _) = complete(
        &kc,
        &["status", "--kubeconfig", live_only.to_str().unwrap(), "todo-a"],
        b"",
    );
    assert_eq!(stdout(&output), "todo-api\n:4\n");

    // Contexts for --context come from the kubeconfig, no server asked.
    let (output, _) = complete(&kc, &["status", "--context", ""], b"");
    assert_eq!(stdout(&output), "dead\nlive\n:4\n");
    // A missing file in a KUBECONFIG list is skipped, as kubectl and every command skip it.
    let list = std::path::PathBuf::from(format!("{}:{}", other.path().join("missing").display(), kc.display()));
    let (output, _) = complete(&list, &["status", "--context", ""], b"");
    assert_eq!(stdout(&output), "dead\nlive\n:4\n");
}

/// `completions/kubectl_complete-microservice`, as kubectl runs it: words after `microservice`
/// plus the current word, with the plugin on PATH.
#[cfg(unix)]
#[test]
fn the_kubectl_helper_script_answers_through_the_binary() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/kubectl_complete-microservice");
    let bin_dir = Path::new(BIN).parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(
        dir.path(),
        &[("dead", &format!("https://127.0.0.1:{}", closed_port()), "default")],
        TOKEN_USER,
    );
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let run = |words: &[&str], path: &str| {
        Command::new(&script)
            .args(words)
            .env("PATH", path)
            .env("KUBECONFIG", &kc)
            .env("HOME", dir.path())
            .output()
            .unwrap()
    };
    let output = run(&["st"], &path);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "status\tIs Accepted still true for the spec each Microservice has now?\n:4\n"
    );
    let output = run(&["status", ""], &path);
    assert_quiet_and_empty(&output, "helper without a cluster");
    // Without the plugin anywhere: no candidates, no error text.
    let output = run(&["status", ""], "/nonexistent");
    assert_quiet_and_empty(&output, "helper without the plugin");
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
