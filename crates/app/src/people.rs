//! Answering a run's questions without the studio: from an answers file (`--answers
//! FILE`, keyed by step id and field), else on the terminal (a prompt per field), else
//! `INPUT_REQUIRED` naming the step and the fields — never a silent wait.
//!
//! The file is a JSON object: for each step id, the answer of its questions —
//! - an `input` step with a primitive schema: the value (`"how_many": 3`);
//! - an approval gate: `true` (approve) or `false` (reject);
//! - a form (an object `input`, a server's elicitation): an object of its fields
//!   (`"deploy": { "name": "web", "replicas": 2 }`);
//! - a URL elicitation: `true` once the page was visited (`false` declines);
//! - any question: `{ "$action": "decline" }` or `{ "$action": "cancel" }` to say no.
//!
//! The same answer serves every question of its step (each iteration of a loop). A form's
//! fields the answer leaves out take their schema's `default` (`ask::complete`).

use futures::future::BoxFuture;
use mcpflow_blueprint::ask::{self, Form, VALUE_FIELD};
use mcpflow_engine::CallError;
use mcpflow_engine::people::{Answer, Asking, People, Question};
use serde_json::{Map, Value, json};
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Answers read from a file, by step id.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    file: PathBuf,
    by_step: Map<String, Value>,
}

impl Answers {
    /// The answers of `value`, read from `path` (the front door reads it within
    /// `mcpflow_blueprint::limits::ANSWERS_FILE_SIZE`): a JSON object keyed by step id.
    pub fn from_value(path: &Path, value: Value) -> Result<Answers, String> {
        match value {
            Value::Object(by_step) => Ok(Answers { file: path.to_owned(), by_step }),
            _ => Err(format!(
                "{}: the answers must be a JSON object keyed by step id, e.g. {{\"approve_delete\": true}}",
                path.display()
            )),
        }
    }

    /// The answer the file gives `question`, checked against its form; `None` when the
    /// file says nothing of its step.
    pub fn answer(&self, question: &Question) -> Option<Result<Answer, CallError>> {
        let given = self.by_step.get(&question.step)?;
        let form_question = matches!(question.asking, Asking::Input | Asking::Elicitation);
        let content = match given.get("$action").and_then(Value::as_str) {
            Some("decline") => return Some(Ok(Answer::Decline)),
            Some("cancel") => return Some(Ok(Answer::Cancel)),
            // Accepting a form without filling it in: its defaults, checked below.
            Some("accept") if form_question => ask::empty(),
            Some("accept") => return Some(Ok(Answer::Accept { content: json!({}) })),
            Some(other) => {
                return Some(Err(
                    self.invalid(question, &format!("`$action` is {other:?}; use decline, cancel or accept"))
                ));
            }
            None => match self.content(question, given) {
                Ok(content) => content,
                Err(answer) => return Some(answer),
            },
        };
        let form = Form { schema: question.schema.clone().unwrap_or_else(ask::empty), wrapped: false };
        // Fields left out take their schema's `default` (SEP-1034).
        Some(match ask::complete(&form, content) {
            Ok(content) => Ok(Answer::Accept { content }),
            Err(problems) => Err(self.invalid(question, &problems.join("; "))),
        })
    }

    /// The form's content the file gives `question` (`given`), or the whole answer when
    /// the question is no form (a URL, an approval answered wrongly).
    fn content(&self, question: &Question, given: &Value) -> Result<Value, Result<Answer, CallError>> {
        Ok(match question.asking {
            Asking::ElicitationUrl => {
                return Err(match given {
                    Value::Bool(true) => Ok(Answer::Accept { content: json!({}) }),
                    Value::Bool(false) => Ok(Answer::Decline),
                    _ => Err(self.invalid(question, "a URL question is answered with true (visited) or false")),
                });
            }
            Asking::Approval => match given {
                Value::Bool(b) => json!({ ask::APPROVE_FIELD: b }),
                _ => return Err(Err(self.invalid(question, "an approval is answered with true or false"))),
            },
            Asking::Input if is_wrapped(question) => json!({ VALUE_FIELD: given }),
            Asking::Input | Asking::Elicitation => given.clone(),
        })
    }

    fn invalid(&self, question: &Question, problem: &str) -> CallError {
        CallError::new(
            "INPUT_INVALID",
            format!(
                "{}: the answer for step `{}` does not fit its question ({}): {problem}",
                self.file.display(),
                question.step,
                question.message
            ),
            false,
        )
    }
}

/// An `input` step asking for one primitive: its form's one field is `value`.
fn is_wrapped(question: &Question) -> bool {
    question.asking == Asking::Input
        && question.schema.as_ref().is_some_and(|s| {
            s.get("properties").and_then(Value::as_object).is_some_and(|p| p.len() == 1 && p.contains_key(VALUE_FIELD))
        })
}

/// The headless front door's people: the answers file first, then the terminal.
#[derive(Debug, Clone, Default)]
pub struct Headless {
    pub answers: Option<Answers>,
    /// Ask on the terminal (stdin and stderr are one) when the file has no answer.
    pub terminal: bool,
    /// Only one prompt at a time on the terminal.
    prompting: Arc<tokio::sync::Mutex<()>>,
}

impl Headless {
    /// Answers from `answers`; prompts on the terminal when stdin and stderr are one.
    pub fn new(answers: Option<Answers>) -> Self {
        let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        Headless { answers, terminal, prompting: Arc::default() }
    }
}

impl People for Headless {
    fn ask(&self, question: Question, cancel: CancellationToken) -> BoxFuture<'static, Result<Answer, CallError>> {
        if let Some(found) = self.answers.as_ref().and_then(|a| a.answer(&question)) {
            return Box::pin(async move { found });
        }
        if !self.terminal {
            let why = match &self.answers {
                Some(a) => format!("{} has no answer for it and there is no terminal to ask on", a.file.display()),
                None => "there is no terminal to ask on and no --answers FILE".to_owned(),
            };
            return Box::pin(async move { Err(question.unanswerable(&why)) });
        }
        let prompting = self.prompting.clone();
        Box::pin(async move {
            let _one = prompting.lock().await;
            let asked = tokio::task::spawn_blocking(move || prompt(&question));
            tokio::select! {
                answer = asked => answer.unwrap_or_else(|e| Err(CallError::new("INPUT_REQUIRED", e.to_string(), false))),
                () = cancel.cancelled() => Err(CallError::cancelled()),
            }
        })
    }
}

/// Asks on the terminal: the message, then a line per field, its default shown in brackets
/// (the `input` step's, else the field's schema `default`); Enter takes the default, and
/// to a required field without one asks again. Reads stdin, writes stderr.
fn prompt(question: &Question) -> Result<Answer, CallError> {
    let mut err = std::io::stderr().lock();
    let from = question.server.as_deref().map(|s| format!(" (server `{s}`)")).unwrap_or_default();
    let _ = writeln!(err, "\n? step `{}`{from} asks: {}", question.step, question.message);
    let stdin = std::io::stdin();
    let mut line = String::new();
    let mut read = |err: &mut std::io::StderrLock<'_>, label: &str| -> Option<String> {
        let _ = write!(err, "  {label}: ");
        let _ = err.flush();
        line.clear();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    };
    match question.asking {
        Asking::ElicitationUrl => {
            let url = question.url.as_deref().unwrap_or_default();
            let _ = writeln!(err, "  open this page yourself (mcpflow sends nothing through it): {url}");
            return match read(&mut err, "done? [y/N]") {
                Some(a) if a.eq_ignore_ascii_case("y") || a.eq_ignore_ascii_case("yes") => {
                    Ok(Answer::Accept { content: json!({}) })
                }
                Some(_) => Ok(Answer::Decline),
                None => Ok(Answer::Cancel),
            };
        }
        Asking::Approval => {
            return match read(&mut err, "approve? [y/N]") {
                Some(a) if a.eq_ignore_ascii_case("y") || a.eq_ignore_ascii_case("yes") => {
                    Ok(Answer::Accept { content: json!({ ask::APPROVE_FIELD: true }) })
                }
                Some(_) => Ok(Answer::Decline),
                None => Ok(Answer::Cancel),
            };
        }
        Asking::Input | Asking::Elicitation => {}
    }
    let schema = question.schema.clone().unwrap_or_else(ask::empty);
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let form = Form { schema: schema.clone(), wrapped: false };
    let required = form.required();
    let default = question.default.clone().unwrap_or_else(ask::empty);
    let mut content = Map::new();
    for (name, field) in &props {
        let title = match field.get("title").and_then(Value::as_str) {
            // The one field of a primitive `input`: its title is the prompt, shown already.
            Some(t) if t == question.message => "answer",
            Some(t) => t,
            None => name,
        };
        let kind = field.get("type").and_then(Value::as_str).unwrap_or("choice");
        let choices = field
            .get("enum")
            .and_then(Value::as_array)
            .map(|o| format!(" one of {}", o.iter().map(Value::to_string).collect::<Vec<_>>().join(", ")))
            .unwrap_or_default();
        let field_default = default.get(name).or_else(|| ask::field_default(&form, name));
        let shown_default = field_default
            .map(|d| match d {
                Value::String(text) => format!(" [{text}]"),
                other => format!(" [{other}]"),
            })
            .unwrap_or_default();
        loop {
            let Some(text) = read(&mut err, &format!("{title} ({kind}{choices}){shown_default}")) else {
                return Ok(Answer::Cancel);
            };
            if text.is_empty() {
                if let Some(d) = field_default {
                    content.insert(name.clone(), d.clone());
                    break;
                }
                if required.contains(name) {
                    let _ = writeln!(err, "  {name} is required (Ctrl-D to cancel)");
                    continue;
                }
                break;
            }
            match ask::parse_field(field, &text) {
                Some(v) => {
                    let problems = ask::check_answer(
                        &Form { schema: json!({ "properties": { name.clone(): field.clone() } }), wrapped: false },
                        &json!({ name.clone(): v.clone() }),
                    );
                    if let Some(p) = problems.first() {
                        let _ = writeln!(err, "  {p}");
                        continue;
                    }
                    content.insert(name.clone(), v);
                    break;
                }
                None => {
                    let _ = writeln!(err, "  not a {kind}; try again");
                }
            }
        }
    }
    Ok(Answer::Accept { content: Value::Object(content) })
}
