//! Recording: a [`Servers`] wrapper that passes each call on and keeps the exchange —
//! its target, its progress, the server's questions and sampling requests with their
//! answers, its result or error — with the pool's secrets hidden.

use super::{Asked, CASSETTE_VERSION, Cassette, Exchange, Outcome, Sampled};
use futures::future::BoxFuture;
use mcpflow_config::launch::Secrets;
use mcpflow_engine::{CallError, CallRequest, Progress, ProgressSink, Question, SampleRequest, Servers};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, PoisonError};

/// The secrets to hide from what is recorded, asked for after each call (a session's
/// secrets are known once it started, its OAuth tokens once it signed in).
pub type SecretsNow = Arc<dyn Fn() -> BoxFuture<'static, Secrets> + Send + Sync>;

/// Passes calls to `inner` and records them, in the order the requests were made.
pub struct Recorder {
    inner: Arc<dyn Servers>,
    secrets: SecretsNow,
    /// One slot per request, filled when it ends.
    slots: Mutex<Vec<Option<Exchange>>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    pub fn new(inner: Arc<dyn Servers>, secrets: SecretsNow) -> Self {
        Recorder { inner, secrets, slots: Mutex::default() }
    }

    /// What was recorded so far; a request still in flight is left out.
    pub fn cassette(&self) -> Cassette {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        Cassette { version: CASSETTE_VERSION, exchanges: slots.iter().flatten().cloned().collect() }
    }
}

impl Servers for Recorder {
    fn call(&self, mut request: CallRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            slots.push(None);
            slots.len() - 1
        };
        let target = request.target.clone();
        let heard: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let passed = request.progress.take();
        let sink: ProgressSink = {
            let heard = heard.clone();
            Arc::new(move |p: Progress| {
                heard.lock().unwrap_or_else(PoisonError::into_inner).push(p.clone());
                if let Some(passed) = &passed {
                    passed(p);
                }
            })
        };
        request.progress = Some(sink);
        let asked: Arc<Mutex<Vec<Asked>>> = Arc::default();
        if let Some(ask) = &mut request.ask {
            let (passed, asked) = (ask.sink.clone(), asked.clone());
            ask.sink = Arc::new(move |question: Question| {
                let (passed, asked) = (passed.clone(), asked.clone());
                Box::pin(async move {
                    let answer = passed(question.clone()).await;
                    let kept = Asked { question, answer: answer.clone().into() };
                    asked.lock().unwrap_or_else(PoisonError::into_inner).push(kept);
                    answer
                })
            });
        }
        let sampled: Arc<Mutex<Vec<Sampled>>> = Arc::default();
        if let Some(passed) = request.sample.take() {
            let sampled = sampled.clone();
            request.sample = Some(Arc::new(move |sample: SampleRequest| {
                let (passed, sampled) = (passed.clone(), sampled.clone());
                Box::pin(async move {
                    let params = sample.params.clone();
                    let answer = passed(sample).await;
                    sampled
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(Sampled { params, answer: answer.clone().into() });
                    answer
                })
            }));
        }
        Box::pin(async move {
            let answer = self.inner.call(request).await;
            let secrets = (self.secrets)().await;
            let progress = std::mem::take(&mut *heard.lock().unwrap_or_else(PoisonError::into_inner));
            let outcome = match &answer {
                Ok(result) => Outcome::Result(result.clone()),
                Err(error) => Outcome::Error(error.clone()),
            };
            let asked = std::mem::take(&mut *asked.lock().unwrap_or_else(PoisonError::into_inner));
            let sampled = std::mem::take(&mut *sampled.lock().unwrap_or_else(PoisonError::into_inner));
            let exchange = Exchange { target, progress, asked, sampled, outcome };
            let exchange = hidden(&exchange, &secrets).unwrap_or(exchange);
            self.slots.lock().unwrap_or_else(PoisonError::into_inner)[slot] = Some(exchange);
            answer
        })
    }
}

/// Writes `cassette` to `path` whole (pretty JSON), replacing what was there.
pub fn write(path: &std::path::Path, cassette: &Cassette) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(cassette).map_err(std::io::Error::other)?;
    crate::files::write_whole(path, &(text + "\n"))
}

/// `exchange` with every string (keys too) redacted; `None` if it cannot be turned to JSON
/// and back (it always can: it was made from JSON).
fn hidden(exchange: &Exchange, secrets: &Secrets) -> Option<Exchange> {
    if secrets.is_empty() {
        return Some(exchange.clone());
    }
    let value = serde_json::to_value(exchange).ok()?;
    serde_json::from_value(redact(value, secrets)).ok()
}

/// Every string in `value` with `secrets` hidden.
pub fn redact(value: Value, secrets: &Secrets) -> Value {
    match value {
        Value::String(s) => Value::String(secrets.redact(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| redact(v, secrets)).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (secrets.redact(&k), redact(v, secrets))).collect::<Map<_, _>>())
        }
        other => other,
    }
}
