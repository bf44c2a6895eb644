//! Replaying: a [`Servers`] over a cassette that starts nothing. A request takes the
//! first exchange not yet used whose server, method, name and arguments match, so a loop
//! replays in the order it was recorded whatever its concurrency; its progress is told
//! again. An unmatched request fails its step with `CASSETTE_UNMATCHED`.

use super::{Cassette, Exchange, Outcome, describe};
use futures::future::BoxFuture;
use mcpflow_engine::{CallError, CallRequest, CallTarget, Servers};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// How a request's arguments are compared with the recorded ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Args {
    /// Equal as JSON values (key order aside).
    #[default]
    Exact,
    /// Not compared.
    Ignore,
}

/// A test's `match`: `{"args": "ignore"}` for every request, or per tool (or prompt)
/// name: `{"tools": {"echo": {"args": "ignore"}}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matching {
    #[serde(default)]
    pub args: Args,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolMatching>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolMatching {
    #[serde(default)]
    pub args: Args,
}

impl Matching {
    fn args_for(&self, name: &str) -> Args {
        self.tools.get(name).map_or(self.args, |t| t.args)
    }

    /// Whether `recorded` answers `asked`.
    fn matches(&self, asked: &CallTarget, recorded: &CallTarget) -> bool {
        match (asked, recorded) {
            (CallTarget::Tool { server, tool, args }, CallTarget::Tool { server: s, tool: t, args: a }) => {
                server == s && tool == t && (self.args_for(tool) == Args::Ignore || args == a)
            }
            (CallTarget::Resource { server, uri }, CallTarget::Resource { server: s, uri: u }) => {
                server == s && uri == u
            }
            (CallTarget::Prompt { server, prompt, args }, CallTarget::Prompt { server: s, prompt: p, args: a }) => {
                server == s && prompt == p && (self.args_for(prompt) == Args::Ignore || args == a)
            }
            _ => false,
        }
    }
}

/// The servers of a recorded run.
#[derive(Debug)]
pub struct Replay {
    exchanges: Vec<Exchange>,
    matching: Matching,
    used: Mutex<Vec<bool>>,
}

impl Replay {
    pub fn new(cassette: Cassette, matching: Matching) -> Self {
        let used = Mutex::new(vec![false; cassette.exchanges.len()]);
        Replay { exchanges: cassette.exchanges, matching, used }
    }

    /// Takes the first unused exchange answering `target`.
    fn take(&self, target: &CallTarget) -> Option<&Exchange> {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        let at = self
            .exchanges
            .iter()
            .enumerate()
            .position(|(i, e)| !used[i] && self.matching.matches(target, &e.target))?;
        used[at] = true;
        self.exchanges.get(at)
    }

    /// `CASSETTE_UNMATCHED`, naming the request and the nearest recorded one.
    fn unmatched(&self, target: &CallTarget) -> CallError {
        let used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        let nearest = self
            .exchanges
            .iter()
            .enumerate()
            .max_by_key(|(i, e)| (likeness(target, &e.target), !used[*i], std::cmp::Reverse(*i)))
            .map(|(i, e)| {
                let again = if used[i] { " (already replayed: each recorded exchange answers once)" } else { "" };
                format!("the nearest recorded is {}{again}", describe(&e.target))
            })
            .unwrap_or_else(|| "the cassette records no exchange".to_owned());
        CallError::new(
            "CASSETTE_UNMATCHED",
            format!(
                "the cassette has no answer for {}; {nearest}. Record the cassette again (`mcpflow run FILE --record CASSETTE`), or relax the test's matching (\"match\": {{\"args\": \"ignore\"}})",
                describe(target)
            ),
            false,
        )
    }
}

/// How much of a request two targets share: kind, server, name, arguments.
fn likeness(asked: &CallTarget, recorded: &CallTarget) -> u8 {
    let parts = |t: &CallTarget| -> (u8, Option<String>, String, Option<Value>) {
        match t {
            CallTarget::Tool { server, tool, args } => {
                (0, server.clone(), tool.clone(), Some(Value::Object(args.clone())))
            }
            CallTarget::Resource { server, uri } => (1, Some(server.clone()), uri.clone(), None),
            CallTarget::Prompt { server, prompt, args } => {
                (2, Some(server.clone()), prompt.clone(), Some(Value::Object(args.clone())))
            }
        }
    };
    let (a, b) = (parts(asked), parts(recorded));
    u8::from(a.0 == b.0) + 2 * u8::from(a.2 == b.2) + u8::from(a.1 == b.1) + u8::from(a.3 == b.3)
}

impl Servers for Replay {
    fn call(&self, request: CallRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        let answer = match self.take(&request.target) {
            Some(exchange) => {
                if let Some(sink) = &request.progress {
                    for p in &exchange.progress {
                        sink(p.clone());
                    }
                }
                match &exchange.outcome {
                    Outcome::Result(result) => Ok(result.clone()),
                    Outcome::Error(error) => Err(error.clone()),
                }
            }
            None => Err(self.unmatched(&request.target)),
        };
        Box::pin(std::future::ready(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpflow_engine::Progress;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(text: &str) -> CallTarget {
        let args = json!({"text": text}).as_object().cloned().unwrap_or_default();
        CallTarget::Tool { server: Some("echo".into()), tool: "echo".into(), args }
    }

    fn exchange(text: &str) -> Exchange {
        Exchange {
            target: tool(text),
            progress: Vec::new(),
            asked: Vec::new(),
            sampled: Vec::new(),
            outcome: Outcome::Result(json!({"said": text})),
        }
    }

    fn replay(matching: Matching) -> Replay {
        Replay::new(Cassette { version: 1, exchanges: vec![exchange("a"), exchange("b"), exchange("a")] }, matching)
    }

    #[test]
    fn each_exchange_answers_once_in_recorded_order() {
        let r = replay(Matching::default());
        let firsts: Vec<_> = (0..2).filter_map(|_| r.take(&tool("a")).map(|e| e.outcome.clone())).collect();
        assert_eq!(firsts.len(), 2);
        assert!(r.take(&tool("a")).is_none());
        assert!(r.take(&tool("b")).is_some());
    }

    #[test]
    fn unmatched_names_the_request_and_the_nearest_recorded() {
        let r = replay(Matching::default());
        let e = r.unmatched(&tool("c"));
        assert_eq!(e.code, "CASSETTE_UNMATCHED");
        assert!(e.message.contains(r#"{"text":"c"}"#), "{}", e.message);
        assert!(e.message.contains("nearest recorded is tools/call `echo` on `echo`"), "{}", e.message);
    }

    #[test]
    fn a_replayed_call_tells_its_recorded_progress_then_answers() {
        let mut recorded = exchange("a");
        recorded.progress = vec![Progress { progress: 1.0, total: Some(2.0), message: Some("half".into()) }];
        let r = Replay::new(Cassette { version: 1, exchanges: vec![recorded] }, Matching::default());
        let heard: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let sink = heard.clone();
        let request = CallRequest {
            target: tool("a"),
            timeout: None,
            cancel: tokio_util::sync::CancellationToken::new(),
            progress: Some(Arc::new(move |p| sink.lock().unwrap_or_else(PoisonError::into_inner).push(p))),
            stack: Vec::new(),
            tasks: Default::default(),
            ask: None,
            sample: None,
            trace: None,
        };
        let answer = futures::executor::block_on(r.call(request));
        assert_eq!(answer, Ok(json!({"said": "a"})));
        assert_eq!(heard.lock().unwrap_or_else(PoisonError::into_inner).len(), 1);
    }

    #[test]
    fn ignored_args_match_any_arguments_in_order() {
        let r = replay(serde_json::from_value(json!({"tools": {"echo": {"args": "ignore"}}})).unwrap_or_default());
        let said: Vec<_> = (0..3).filter_map(|_| r.take(&tool("z")).map(|e| e.outcome.clone())).collect();
        assert_eq!(said, vec![exchange("a").outcome, exchange("b").outcome, exchange("a").outcome]);
    }
}
