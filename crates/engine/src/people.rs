//! People in the loop: the questions a run asks a person — an `input` step, an approval
//! gate, a server's elicitation — and the [`People`] trait through which a front door
//! answers them (the studio's form, a terminal prompt, an answers file, the client that
//! called `mcpflow serve`). The engine records each question (`StepWaiting`) and its
//! answer (`StepAnswered`) in the run's events.

use crate::event::IterationPath;
use crate::servers::CallError;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Who asks, and so how the question is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Asking {
    /// An `input` step asks for a value.
    Input,
    /// An `input` step with `approve: true`: Approve or Reject.
    Approval,
    /// A server asks through MCP elicitation, with a form.
    Elicitation,
    /// A server asks the person to visit a URL (elicitation in URL mode). The URL is
    /// opened only when the person chooses to; nothing is sent through it.
    ElicitationUrl,
}

/// One question to a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// Unique within the run (`q1`, `q2`, …): what an answer names. Set by the engine.
    #[serde(default)]
    pub id: String,
    /// The step that asks (for a server's elicitation: the step whose call it came from).
    pub step: String,
    pub path: IterationPath,
    pub asking: Asking,
    /// The server that asks, for an elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// What the person is asked (the step's `prompt`, the server's message).
    pub message: String,
    /// The form: an object schema of flat fields (see `mcpflow_blueprint::ask`). Absent
    /// in URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// The form's content offered (an `input` step's `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// URL mode: the page to visit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Approving a call (`confirm: "destructive"`): the tool and its resolved arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<Value>,
}

impl Question {
    /// The form's field names (empty in URL mode).
    pub fn fields(&self) -> Vec<String> {
        self.schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// What the question wants, in words: `to visit URL`, `an approval`, or `the field(s)
    /// a (required), b`.
    pub fn wanted(&self) -> String {
        match self.asking {
            Asking::ElicitationUrl => format!("to visit {}", self.url.as_deref().unwrap_or("a URL")),
            Asking::Approval => "an approval".to_owned(),
            _ => {
                let required: Vec<String> = self
                    .schema
                    .as_ref()
                    .and_then(|s| s.get("required"))
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                    .unwrap_or_default();
                let fields: Vec<String> = self
                    .fields()
                    .into_iter()
                    .map(|f| if required.contains(&f) { format!("{f} (required)") } else { f })
                    .collect();
                if fields.is_empty() { "an answer".to_owned() } else { format!("the field(s) {}", fields.join(", ")) }
            }
        }
    }

    /// `INPUT_REQUIRED`: nobody here can answer; names the step and the fields, and what
    /// to do.
    pub fn unanswerable(&self, why: &str) -> CallError {
        let what = self.wanted();
        let from = self.server.as_deref().map(|s| format!(" (server `{s}`)")).unwrap_or_default();
        let step = &self.step;
        let example = match (self.asking, self.fields().as_slice()) {
            (Asking::Approval | Asking::ElicitationUrl, _) => format!("{{\"{step}\": true}}"),
            (Asking::Input, [only]) if only == "value" => format!("{{\"{step}\": …}}"),
            (_, [first, ..]) => format!("{{\"{step}\": {{\"{first}\": …}}}}"),
            (_, []) => format!("{{\"{step}\": {{…}}}}"),
        };
        CallError::new(
            "INPUT_REQUIRED",
            format!(
                "step `{step}`{from} asks for {what}: {}; {why}. Answer it with `--answers FILE` ({example}), from a \
                 terminal, or in the studio",
                self.message
            ),
            false,
        )
    }
}

/// A person's answer, as MCP elicitation has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Answer {
    /// Answered: the form's content (an object; `{}` in URL mode).
    Accept { content: Value },
    /// Said no.
    Decline,
    /// Dismissed without saying.
    Cancel,
}

impl Answer {
    pub fn action(&self) -> &'static str {
        match self {
            Answer::Accept { .. } => "accept",
            Answer::Decline => "decline",
            Answer::Cancel => "cancel",
        }
    }
}

/// Answers questions. `ask` ends with the answer, or an error (`INPUT_REQUIRED` when
/// nobody here can answer); when `cancel` fires (the step or run ends first) it should
/// withdraw the question and end.
pub trait People: Send + Sync {
    fn ask(&self, question: Question, cancel: CancellationToken) -> BoxFuture<'static, Result<Answer, CallError>>;
}

/// Nobody: every question fails with `INPUT_REQUIRED` (a run with no one to ask, such as
/// a schedule's).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOne;

impl People for NoOne {
    fn ask(&self, question: Question, _cancel: CancellationToken) -> BoxFuture<'static, Result<Answer, CallError>> {
        Box::pin(async move { Err(question.unanswerable("nobody is there to answer")) })
    }
}

/// What a call hands a server's questions to: the driver records the question on the
/// call's step and asks the run's [`People`]. The pool fills in what the server sent;
/// `step` and `path` are filled in by the driver.
pub type AskSink = Arc<dyn Fn(Question) -> BoxFuture<'static, Result<Answer, CallError>> + Send + Sync>;
