//! The Kopf version an operator's Deployment installs or runs (a pip pin, or an image tag).

use k8s_openapi::api::apps::v1::Deployment;
use serde::Serialize;

/// A Kopf version and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KopfVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Where: `pip pin kopf==1.38.0 (initContainer install)` or `image tag ...`.
    pub source: String,
}

impl KopfVersion {
    /// From Kopf 1.44 on, log records are no longer posted as events unless
    /// `settings.posting.loggers` names their logger; before, every record at or above
    /// `posting.level` (INFO) was posted (an `ERROR` record as type `Error`, reason `Logging`).
    pub fn posts_log_records_by_default(&self) -> bool {
        (self.major, self.minor) < (1, 44)
    }

    /// `1.38`.
    pub fn short(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }
}

/// The Kopf version a Deployment installs or runs: a `kopf==X.Y[.Z]` pin in any container's or
/// initContainer's command/args (pip), else the tag of an image whose name contains `kopf`.
pub fn kopf_version(deployment: &Deployment) -> Option<KopfVersion> {
    let spec = deployment.spec.as_ref()?.template.spec.as_ref()?;
    let containers = spec.init_containers.iter().flatten().chain(spec.containers.iter());
    let mut from_image = None;
    for c in containers {
        for word in c.command.iter().flatten().chain(c.args.iter().flatten()) {
            for token in word.split_whitespace() {
                if let Some(v) = token.trim_matches(['"', '\'']).strip_prefix("kopf==")
                    && let Some((major, minor)) = parse_version(v)
                {
                    return Some(KopfVersion {
                        major,
                        minor,
                        source: format!("pip pin kopf=={v} (container {})", c.name),
                    });
                }
            }
        }
        let image = c.image.as_deref().unwrap_or("");
        if let Some((repo, tag)) = image.split('@').next().unwrap_or("").rsplit_once(':')
            && !tag.contains('/')
            && repo.rsplit('/').next().is_some_and(|n| n.contains("kopf"))
            && let Some((major, minor)) = parse_version(tag.trim_start_matches('v'))
        {
            from_image = from_image.or(Some(KopfVersion {
                major,
                minor,
                source: format!("image tag {image}"),
            }));
        }
    }
    from_image
}

/// The Kopf version a log's start record names: Kopf's reactor logs `Starting Kopf 1.38.0.` at
/// DEBUG when it starts (`kopf/_core/reactor/running.py`); `None` for any other message.
pub fn kopf_version_from_start(message: &str) -> Option<KopfVersion> {
    let v = message.trim().strip_prefix("Starting Kopf ")?.trim_end_matches('.');
    let (major, minor) = parse_version(v)?;
    Some(KopfVersion {
        major,
        minor,
        source: format!("the log's start line `Starting Kopf {v}.`"),
    })
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts.next()?.chars().take_while(char::is_ascii_digit).collect();
    Some((major, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kopf's start line gives its version; other lines give none.
    #[test]
    fn version_from_the_start_line_of_a_log() {
        let v = kopf_version_from_start("Starting Kopf 1.38.0.").unwrap();
        assert_eq!((v.major, v.minor), (1, 38));
        assert!(v.source.contains("Starting Kopf 1.38.0."), "{}", v.source);
        assert_eq!(
            kopf_version_from_start("Starting Kopf 1.44.6.")
                .map(|v| v.short())
                .as_deref(),
            Some("1.44")
        );
        assert_eq!(kopf_version_from_start("Starting the watch-stream for x."), None);
        assert_eq!(kopf_version_from_start("Starting Kopf soon."), None);
    }

    #[test]
    fn version_from_the_pip_pin_of_the_real_deployment() {
        let raw = include_str!("../../tests/fixtures/bundles/conditional-posting/operator/deployment.json");
        let d: Deployment = serde_json::from_str(raw).unwrap();
        let v = kopf_version(&d).unwrap();
        assert_eq!((v.major, v.minor), (1, 38));
        assert!(v.posts_log_records_by_default());
        assert!(v.source.contains("kopf==1.38.0"), "{}", v.source);
    }

    #[test]
    fn version_from_an_image_tag() {
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "spec": {"selector": {}, "template": {"spec": {"containers": [
                {"name": "op", "image": "ghcr.io/example/kopf-operator:1.44.2"}
            ]}}}
        }))
        .unwrap();
        let v = kopf_version(&d).unwrap();
        assert_eq!(v.short(), "1.44");
        assert!(!v.posts_log_records_by_default());
    }
}
