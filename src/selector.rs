//! Label selectors (`-l`/`--selector`), parsed and validated as the API server parses a
//! `labelSelector` (k8s.io/apimachinery `pkg/labels/selector.go`, `Parse`), and matched against
//! an object's `metadata.labels`, so that a bundle is filtered as a live list would be.
//!
//! Grammar: requirements separated by `,`; each is `key`, `!key`, `key=value`, `key==value`,
//! `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>N` or `key<N` (N an integer).
//! Keys are qualified names (`[prefix/]name`: a DNS subdomain of at most 253 characters, a name of
//! at most 63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric); values are empty
//! or such names. Error messages use apimachinery's words (`found '!', expected: identifier`),
//! which the API server answers a live list with.

use std::collections::BTreeMap;
use std::fmt;

/// A parsed selector: every requirement must hold. Empty selects everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// One requirement on one label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// How the label's value is tested.
    pub operator: Operator,
    /// The values tested against (one for `=`, `!=`, `>`, `<`; none for exists/does not exist).
    pub values: Vec<String>,
}

/// apimachinery's `selection.Operator`s that a label selector string can spell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `key in (a,b)`, `key=a`, `key==a`: the label is set to one of the values.
    In,
    /// `key notin (a,b)`, `key!=a`: the label is unset or set to none of the values.
    NotIn,
    /// `key`: the label is set.
    Exists,
    /// `!key`: the label is unset.
    DoesNotExist,
    /// `key>N`: the label is an integer greater than N.
    GreaterThan,
    /// `key<N`: the label is an integer less than N.
    LessThan,
}

/// Why a selector string is not one: apimachinery's message, e.g.
/// `unable to parse requirement: found '!', expected: identifier`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectorError(pub String);

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SelectorError {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier(String),
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

impl Token {
    /// The token as apimachinery quotes it in errors (`found '<literal>'`).
    fn literal(&self) -> &str {
        match self {
            Token::End => "",
            Token::ClosedPar => ")",
            Token::Comma => ",",
            Token::DoesNotExist => "!",
            Token::DoubleEquals => "==",
            Token::Equals => "=",
            Token::GreaterThan => ">",
            Token::Identifier(s) => s,
            Token::In => "in",
            Token::LessThan => "<",
            Token::NotEquals => "!=",
            Token::NotIn => "notin",
            Token::OpenPar => "(",
        }
    }
}

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

/// apimachinery's lexer: white space separates; `!=`, `==` are read before `!`, `=`; any other
/// run of characters up to white space or a special symbol is an identifier (`in`, `notin`
/// are keywords where an operator may stand).
fn tokens(input: &str) -> Vec<Token> {
    let chars: Vec<char> = input.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if is_special(c) {
            let next = chars.get(i + 1).copied();
            let (token, len) = match (c, next) {
                ('!', Some('=')) => (Token::NotEquals, 2),
                ('=', Some('=')) => (Token::DoubleEquals, 2),
                ('!', _) => (Token::DoesNotExist, 1),
                ('=', _) => (Token::Equals, 1),
                ('(', _) => (Token::OpenPar, 1),
                (')', _) => (Token::ClosedPar, 1),
                (',', _) => (Token::Comma, 1),
                ('>', _) => (Token::GreaterThan, 1),
                _ => (Token::LessThan, 1),
            };
            out.push(token);
            i += len;
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && !is_special(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        out.push(match word.as_str() {
            "in" => Token::In,
            "notin" => Token::NotIn,
            _ => Token::Identifier(word),
        });
    }
    out
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    /// The next token; in a value position the keywords `in`/`notin` are identifiers.
    fn peek(&self, value: bool) -> Token {
        let token = self.tokens.get(self.at).cloned().unwrap_or(Token::End);
        match token {
            Token::In | Token::NotIn if value => Token::Identifier(token.literal().to_string()),
            other => other,
        }
    }

    fn next(&mut self, value: bool) -> Token {
        let token = self.peek(value);
        self.at += 1;
        token
    }

    fn selector(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            match self.peek(true) {
                Token::Identifier(_) | Token::DoesNotExist => {
                    let requirement = self
                        .requirement()
                        .map_err(|e| SelectorError(format!("unable to parse requirement: {e}")))?;
                    requirements.push(requirement);
                    match self.next(true) {
                        Token::End => return Ok(requirements),
                        Token::Comma => match self.peek(true) {
                            Token::Identifier(_) | Token::DoesNotExist => {}
                            other => {
                                return Err(SelectorError(format!(
                                    "found '{}', expected: identifier after ','",
                                    other.literal()
                                )));
                            }
                        },
                        other => {
                            return Err(SelectorError(format!(
                                "found '{}', expected: ',' or 'end of string'",
                                other.literal()
                            )));
                        }
                    }
                }
                Token::End => return Ok(requirements),
                other => {
                    return Err(SelectorError(format!(
                        "found '{}', expected: !, identifier, or 'end of string'",
                        other.literal()
                    )));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let negated = self.peek(true) == Token::DoesNotExist;
        if negated {
            self.at += 1;
        }
        let key = match self.next(true) {
            Token::Identifier(key) => key,
            other => return Err(format!("found '{}', expected: identifier", other.literal())),
        };
        validate_key(&key)?;
        if negated || matches!(self.peek(false), Token::End | Token::Comma) {
            let operator = if negated {
                Operator::DoesNotExist
            } else {
                Operator::Exists
            };
            return Ok(Requirement {
                key,
                operator,
                values: Vec::new(),
            });
        }
        let (operator, values) = match self.next(false) {
            Token::In => (Operator::In, self.value_set()?),
            Token::NotIn => (Operator::NotIn, self.value_set()?),
            Token::Equals | Token::DoubleEquals => (Operator::In, vec![self.exact_value()?]),
            Token::NotEquals => (Operator::NotIn, vec![self.exact_value()?]),
            Token::GreaterThan => (Operator::GreaterThan, vec![self.exact_value()?]),
            Token::LessThan => (Operator::LessThan, vec![self.exact_value()?]),
            other => {
                return Err(format!(
                    "found '{}', expected: in, notin, =, ==, !=, gt, lt",
                    other.literal()
                ));
            }
        };
        for value in &values {
            match operator {
                Operator::GreaterThan | Operator::LessThan if value.parse::<i64>().is_err() => {
                    return Err(format!(
                        "values[0]: Invalid value: {value:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                    ));
                }
                _ => validate_value(value)?,
            }
        }
        Ok(Requirement { key, operator, values })
    }

    /// `(a,b)`; `()` is one empty value, as apimachinery reads it.
    fn value_set(&mut self) -> Result<Vec<String>, String> {
        match self.next(true) {
            Token::OpenPar => {}
            other => return Err(format!("found '{}' expected: '('", other.literal())),
        }
        let mut values = Vec::new();
        if self.peek(true) == Token::ClosedPar {
            self.at += 1;
            return Ok(vec![String::new()]);
        }
        loop {
            match self.next(true) {
                Token::Identifier(v) => {
                    values.push(v);
                    match self.next(true) {
                        Token::Comma => {
                            if self.peek(true) == Token::ClosedPar {
                                self.at += 1;
                                values.push(String::new());
                                return Ok(values);
                            }
                        }
                        Token::ClosedPar => return Ok(values),
                        other => return Err(format!("found '{}', expected: ',' or ')'", other.literal())),
                    }
                }
                Token::Comma => {
                    values.push(String::new());
                    if self.peek(true) == Token::ClosedPar {
                        self.at += 1;
                        values.push(String::new());
                        return Ok(values);
                    }
                }
                other => return Err(format!("found '{}', expected: ',', or identifier", other.literal())),
            }
        }
    }

    /// The value after `=`, `!=`, `>`, `<`: empty at a `,` or the end.
    fn exact_value(&mut self) -> Result<String, String> {
        match self.peek(true) {
            Token::End | Token::Comma => Ok(String::new()),
            Token::Identifier(v) => {
                self.at += 1;
                Ok(v)
            }
            other => Err(format!("found '{}', expected: identifier", other.literal())),
        }
    }
}

/// A label name (the part after an optional `prefix/`), or a non-empty value: at most 63
/// characters, alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric.
fn is_label_name(s: &str) -> bool {
    let bytes = s.as_bytes();
    !s.is_empty()
        && s.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A DNS-1123 subdomain: at most 253 characters, dot-separated lowercase alphanumeric labels
/// that may hold `-` inside.
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase() || *c == b'-')
        })
}

fn validate_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && !is_dns_subdomain(prefix)
    {
        return Err(format!(
            "key: Invalid value: {key:?}: prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters"
        ));
    }
    if !is_label_name(name) {
        return Err(format!(
            "key: Invalid value: {key:?}: name part must be at most 63 characters of alphanumerics, '-', '_' or '.', and must start and end with an alphanumeric character"
        ));
    }
    Ok(())
}

fn validate_value(value: &str) -> Result<(), String> {
    if value.is_empty() || is_label_name(value) {
        return Ok(());
    }
    Err(format!(
        "values[0]: Invalid value: {value:?}: a valid label must be an empty string or at most 63 characters of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric character"
    ))
}

impl LabelSelector {
    /// Parses `text` as the API server parses `labelSelector` (see the module docs).
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut parser = Parser {
            tokens: tokens(text),
            at: 0,
        };
        Ok(LabelSelector {
            requirements: parser.selector()?,
        })
    }

    /// `-l`/`--selector TEXT` parsed; a usage error (exit 2) naming the flag and its value when
    /// it is not a selector: `invalid -l/--selector "!!bad": unable to parse requirement: ...`.
    pub fn from_flag(text: &str) -> Result<Self, crate::error::AppError> {
        Self::parse(text).map_err(|e| crate::error::AppError::Usage(format!("invalid -l/--selector {text:?}: {e}")))
    }

    /// An API object's `spec.selector` (`metav1.LabelSelector`: `matchLabels` and
    /// `matchExpressions`) as apimachinery's `LabelSelectorAsSelector` reads it: each
    /// `matchLabels` pair is `key=value`, each expression `In`/`NotIn` (at least one value) or
    /// `Exists`/`DoesNotExist` (no values). An empty selector selects everything, as there; a
    /// caller for which that is invalid (a Deployment's) checks [`LabelSelector::is_empty`].
    /// Errors: an unknown operator, or values where apimachinery refuses them, in its words.
    pub fn from_api(
        selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    ) -> Result<Self, SelectorError> {
        let mut requirements: Vec<Requirement> = selector
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| Requirement {
                key: k.clone(),
                operator: Operator::In,
                values: vec![v.clone()],
            })
            .collect();
        for e in selector.match_expressions.iter().flatten() {
            let values = e.values.clone().unwrap_or_default();
            let operator = match e.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(SelectorError(format!(
                        "{other:?} is not a valid label selector operator"
                    )));
                }
            };
            let wants_values = matches!(operator, Operator::In | Operator::NotIn);
            if wants_values && values.is_empty() {
                return Err(SelectorError(
                    "for 'in', 'notin' operators, values set can't be empty".into(),
                ));
            }
            if !wants_values && !values.is_empty() {
                return Err(SelectorError(
                    "values set must be empty for exists and does not exist".into(),
                ));
            }
            requirements.push(Requirement {
                key: e.key.clone(),
                operator,
                values,
            });
        }
        Ok(LabelSelector { requirements })
    }

    /// Whether the selector has no requirement (selects everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Keeps the objects whose `metadata.labels` are selected, as a list with `labelSelector`
    /// would return them.
    pub fn retain<K: kube::Resource>(&self, objects: &mut Vec<K>) {
        objects.retain(|o| self.matches(o.meta().labels.as_ref()));
    }

    /// Whether an object with `labels` (its `metadata.labels`; `None` as none) is selected.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let empty = BTreeMap::new();
        let labels = labels.unwrap_or(&empty);
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

impl Requirement {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(have), Some(want)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// What kube-apiserver v1.28.7 answered a list with each `labelSelector` (400 message, or ok).
    #[test]
    fn errors_are_the_api_servers() {
        let cases = [
            (
                "!!bad",
                Some("unable to parse requirement: found '!', expected: identifier"),
            ),
            ("app=nothing", None),
            (
                "a in (x,y",
                Some("unable to parse requirement: found '', expected: ',' or ')'"),
            ),
            ("app=", None),
            ("x>1", None),
            (
                "x>a",
                Some(
                    "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer",
                ),
            ),
            (
                "a b",
                Some("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
            ),
            ("app=a,,b=c", Some("found ',', expected: identifier after ','")),
            ("", None),
            ("a=b=c", Some("found '=', expected: ',' or 'end of string'")),
            ("a,", Some("found '', expected: identifier after ','")),
        ];
        for (text, want) in cases {
            let got = LabelSelector::parse(text).err().map(|e| e.0);
            assert_eq!(got.as_deref(), want, "{text:?}");
        }
        // Keys and values are validated as the API server does.
        for bad in [
            "-a=b",
            "a=-b",
            "Upper.Case/x=y",
            "a/b/c=d",
            &format!("{}=x", "k".repeat(64)),
        ] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad:?}");
        }
        for good in [
            "app.kubernetes.io/name=kubectl-microservice",
            "tier in (web, api)",
            "!legacy",
            "a notin ()",
        ] {
            assert!(LabelSelector::parse(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn requirements_match_as_the_api_server_selects() {
        let web = labels(&[("app", "todo"), ("tier", "web"), ("rev", "7")]);
        let selects = |text: &str, l: &BTreeMap<String, String>| LabelSelector::parse(text).unwrap().matches(Some(l));
        assert!(selects("app=todo", &web));
        assert!(selects("app==todo,tier!=db", &web));
        assert!(!selects("app=nothing", &web));
        assert!(selects("tier in (web,api)", &web));
        assert!(!selects("tier notin (web)", &web));
        assert!(selects("missing notin (x)", &web), "notin holds for an unset label");
        assert!(selects("missing!=x", &web));
        assert!(selects("app", &web) && !selects("!app", &web) && selects("!legacy", &web));
        assert!(selects("rev>5", &web) && !selects("rev<5", &web) && !selects("tier>1", &web));
        assert!(selects("", &web));
        assert!(!LabelSelector::parse("app=todo").unwrap().matches(None));
        assert!(LabelSelector::parse("!app").unwrap().matches(None));
    }

    /// A Deployment's `spec.selector` as the ReplicaSet controller matches it: `matchLabels`
    /// and `matchExpressions` both, every requirement holding.
    #[test]
    fn an_api_selector_matches_its_labels_and_expressions() {
        let api = |v: serde_json::Value| -> Result<LabelSelector, SelectorError> {
            LabelSelector::from_api(&serde_json::from_value(v).unwrap())
        };
        let s = api(serde_json::json!({
            "matchLabels": {"app": "api"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["web", "ctl"]},
                {"key": "canary", "operator": "DoesNotExist"}
            ]
        }))
        .unwrap();
        assert!(s.matches(Some(&labels(&[("app", "api"), ("tier", "ctl")]))));
        assert!(!s.matches(Some(&labels(&[("app", "api-gateway"), ("tier", "ctl")]))));
        assert!(!s.matches(Some(&labels(&[("app", "api"), ("tier", "db")]))));
        assert!(!s.matches(Some(&labels(&[("app", "api"), ("tier", "web"), ("canary", "1")]))));
        assert!(api(serde_json::json!({})).unwrap().is_empty());
        assert!(
            api(serde_json::json!({"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]})).is_err()
        );
        assert!(api(serde_json::json!({"matchExpressions": [{"key": "a", "operator": "In"}]})).is_err());
        assert!(
            api(serde_json::json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}))
                .is_err()
        );
    }
}
