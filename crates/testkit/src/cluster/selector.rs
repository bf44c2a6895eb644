//! Equality-based label selectors (`app=web,tier!=db,canary,!legacy`), as `kubectl -l` accepts them.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

/// A parsed selector; all terms must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Selector(Vec<Term>);

impl Selector {
    /// Parses a comma-separated list of terms; set-based terms (`in`, `notin`) are not supported.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut terms = Vec::new();
        for raw in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let term = if let Some((key, value)) = raw.split_once("!=") {
                Term::NotEquals(key.trim().to_owned(), value.trim().to_owned())
            } else if let Some((key, value)) = raw.split_once("==").or_else(|| raw.split_once('=')) {
                Term::Equals(key.trim().to_owned(), value.trim().to_owned())
            } else if let Some(key) = raw.strip_prefix('!') {
                Term::Absent(key.trim().to_owned())
            } else if raw.contains(' ') || raw.contains('(') {
                return Err(format!("unsupported label selector term {raw:?}: use key=value, key!=value, key or !key"));
            } else {
                Term::Exists(raw.to_owned())
            };
            let key = match &term {
                Term::Equals(k, _) | Term::NotEquals(k, _) | Term::Exists(k) | Term::Absent(k) => k,
            };
            if key.is_empty() {
                return Err(format!("label selector term {raw:?} has no key"));
            }
            terms.push(term);
        }
        Ok(Self(terms))
    }

    /// Whether an object's `metadata.labels` satisfy every term.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        let label = |key: &str| labels.get(key).and_then(Value::as_str);
        self.0.iter().all(|term| match term {
            Term::Equals(k, v) => label(k) == Some(v.as_str()),
            Term::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Term::Exists(k) => label(k).is_some(),
            Term::Absent(k) => label(k).is_none(),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(labels: Value) -> Value {
        json!({ "metadata": { "labels": labels } })
    }

    #[test]
    fn all_terms_must_match() {
        let selector = Selector::parse("app=web, tier!=db,canary,!legacy").unwrap();
        assert!(selector.matches(&object(json!({ "app": "web", "canary": "1" }))));
        assert!(!selector.matches(&object(json!({ "app": "web" }))));
        assert!(!selector.matches(&object(json!({ "app": "web", "canary": "1", "tier": "db" }))));
        assert!(!selector.matches(&object(json!({ "app": "web", "canary": "1", "legacy": "yes" }))));
    }

    #[test]
    fn double_equals_is_equality() {
        assert_eq!(Selector::parse("app==web").unwrap(), Selector::parse("app=web").unwrap());
    }

    #[test]
    fn empty_selector_matches_everything() {
        assert!(Selector::parse("").unwrap().matches(&object(json!({}))));
    }

    #[test]
    fn set_based_terms_are_rejected() {
        assert!(Selector::parse("app in (web,api)").is_err());
        assert!(Selector::parse("=web").is_err());
    }
}
