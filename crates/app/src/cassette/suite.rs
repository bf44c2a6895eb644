//! `mcpflow test`: test files, each naming a blueprint, its inputs, a cassette and what
//! to expect, run over the cassette ([`Replay`]) without starting any server.
//!
//! ```json
//! {"blueprint": "../greet.json", "inputs": {"name": "Ada"}, "cassette": "greet.cassette.json",
//!  "match": {"args": "exact"},
//!  "expect": {"status": "succeeded", "output": {"greeting": "Hello, Ada"},
//!             "assert": [{"that": "greet.text", "equals": "Hello, Ada"}]}}
//! ```
//!
//! Paths are relative to the test file. An assertion's `that` is a template expression
//! (JMESPath, as in a blueprint's `{{ }}`) over the run's top-level step outputs by id,
//! `steps.<id>` (`{output, status}`) and the run's `output`.

use super::replay::{Matching, Replay};
use super::{CASSETTE_SIZE, Cassette, TEST_FILE_SIZE, read_json_file};
use crate::headless::{self, HeadlessRun};
use mcpflow_blueprint::limits::BLUEPRINT_SIZE;
use mcpflow_blueprint::template::{MapScope, Template, value_to_var};
use mcpflow_engine::{Envelope, EventKind, EventSink, RunEvent, RunStatus};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// A test file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestFile {
    /// The blueprint, relative to the test file.
    pub blueprint: String,
    #[serde(default)]
    pub inputs: Map<String, Value>,
    /// The cassette, relative to the test file.
    pub cassette: String,
    #[serde(default, rename = "match")]
    pub matching: Matching,
    #[serde(default)]
    pub expect: Expect,
}

/// What the run must give.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The run's status; `succeeded` unless said.
    #[serde(default)]
    pub status: Option<RunStatus>,
    /// The run's output, equal as JSON.
    #[serde(default)]
    pub output: Option<Value>,
    #[serde(default, rename = "assert")]
    pub assertions: Vec<Assertion>,
}

/// `that` (a template expression over the run's step outputs) equals `equals`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assertion {
    pub that: String,
    pub equals: Value,
}

/// How one test went.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub file: PathBuf,
    /// `None`: passed; else why it failed.
    pub failure: Option<String>,
    /// The run's envelope, when it ran.
    pub envelope: Option<Envelope>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// Runs the test in `file` over its cassette. Starts no server.
pub async fn run_test(file: &Path, cancel: CancellationToken) -> Verdict {
    match run_checked(file, cancel).await {
        Ok((envelope, failure)) => Verdict { file: file.to_owned(), failure, envelope: Some(envelope) },
        Err(failure) => Verdict { file: file.to_owned(), failure: Some(failure), envelope: None },
    }
}

/// The envelope and the first expectation it breaks; `Err`: the test could not run.
async fn run_checked(file: &Path, cancel: CancellationToken) -> Result<(Envelope, Option<String>), String> {
    let test: TestFile = serde_json::from_value(read_json_file(file, &TEST_FILE_SIZE)?)
        .map_err(|e| format!("TEST_INVALID: {}: {e}", file.display()))?;
    let folder = file.parent().map_or_else(|| PathBuf::from("."), Path::to_owned);
    let cassette_path = folder.join(&test.cassette);
    let cassette = Cassette::from_value(read_json_file(&cassette_path, &CASSETTE_SIZE)?)
        .map_err(|e| format!("{}: {e}", cassette_path.display()))?;
    let blueprint_path = folder.join(&test.blueprint);
    let bytes = std::fs::File::open(&blueprint_path)
        .map_err(|e| e.to_string())
        .and_then(|f| mcpflow_blueprint::source::read_bounded(f, &BLUEPRINT_SIZE).map_err(|e| e.to_string()))
        .map_err(|e| format!("{}: cannot read the blueprint: {e}", blueprint_path.display()))?;
    let checked = headless::check(&bytes).map_err(|e| match e {
        headless::HeadlessError::Invalid(diagnostics) => format!(
            "BLUEPRINT_INVALID: {}: {}",
            blueprint_path.display(),
            diagnostics.iter().filter(|d| d.is_error()).map(ToString::to_string).collect::<Vec<_>>().join("; ")
        ),
        e => format!("{}: {}: {e}", e.code(), blueprint_path.display()),
    })?;
    let spec = HeadlessRun {
        folder: blueprint_path.parent().map(Path::to_owned),
        inputs: test.inputs.clone(),
        replay: Some(Arc::new(Replay::new(cassette, test.matching.clone()))),
        ..HeadlessRun::default()
    };
    let outputs: Arc<Mutex<BTreeMap<String, (Value, Value)>>> = Arc::default();
    let sink: EventSink = {
        let outputs = outputs.clone();
        Arc::new(move |e: &RunEvent| {
            if let EventKind::StepFinished { step, path, status, output, .. } = &e.kind
                && path.is_empty()
            {
                let output = output.clone().unwrap_or(Value::Null);
                let status = serde_json::to_value(status).unwrap_or(Value::Null);
                outputs.lock().unwrap_or_else(PoisonError::into_inner).insert(step.clone(), (output, status));
            }
        })
    };
    let envelope = headless::run(&checked, &spec, sink, cancel).await.map_err(|e| format!("{}: {e}", e.code()))?;
    let outputs = std::mem::take(&mut *outputs.lock().unwrap_or_else(PoisonError::into_inner));
    let failure = broken(&test.expect, &envelope, &outputs);
    Ok((envelope, failure))
}

/// The first expectation `envelope` breaks.
fn broken(expect: &Expect, envelope: &Envelope, outputs: &BTreeMap<String, (Value, Value)>) -> Option<String> {
    let status = expect.status.unwrap_or(RunStatus::Succeeded);
    if envelope.status != status {
        let errors: Vec<String> = envelope
            .errors
            .iter()
            .map(|e| {
                let at = if e.step.is_empty() { String::new() } else { format!(" in step `{}`", e.step) };
                format!("error[{}]{at}: {}", e.code, e.message)
            })
            .collect();
        let why = if errors.is_empty() { String::new() } else { format!(" ({})", errors.join("; ")) };
        return Some(format!("status: expected {}, got {}{why}", word(&status), word(&envelope.status)));
    }
    if let Some(output) = &expect.output
        && *output != envelope.output
    {
        return Some(format!("output: expected {output}, got {}", envelope.output));
    }
    let mut scope = MapScope::new();
    scope.set_json("output", envelope.output.clone());
    for (id, (output, status)) in outputs {
        scope.set_step(id, value_to_var(output.clone()), value_to_var(json!({"output": output, "status": status})));
    }
    expect.assertions.iter().enumerate().find_map(|(i, a)| {
        let at = format!("assert[{i}] `{}`", a.that);
        let template = match Template::compile_str(&format!("{{{{ {} }}}}", a.that)) {
            Ok(t) => t,
            Err(errors) => {
                let why: Vec<String> = errors.iter().map(|e| format!("{}: {}", e.code, e.message)).collect();
                return Some(format!("{at}: not an expression: {}", why.join("; ")));
            }
        };
        match template.render(&scope) {
            Ok(got) if got == a.equals => None,
            Ok(got) => Some(format!("{at}: expected {}, got {got}", a.equals)),
            Err(e) => Some(format!("{at}: {}: {}", e.code, e.message)),
        }
    })
}

fn word(status: &RunStatus) -> String {
    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// JUnit XML for `verdicts` (one suite, one case per test file).
pub fn junit(verdicts: &[Verdict]) -> String {
    let failures = verdicts.iter().filter(|v| !v.passed()).count();
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"{n}\" failures=\"{failures}\">\n  <testsuite name=\"mcpflow test\" tests=\"{n}\" failures=\"{failures}\">\n",
        n = verdicts.len()
    );
    for v in verdicts {
        let name = escape(&v.file.display().to_string());
        match &v.failure {
            None => xml.push_str(&format!("    <testcase name=\"{name}\" classname=\"mcpflow\"/>\n")),
            Some(why) => xml.push_str(&format!(
                "    <testcase name=\"{name}\" classname=\"mcpflow\">\n      <failure message=\"{m}\">{m}</failure>\n    </testcase>\n",
                m = escape(why)
            )),
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Text for XML attributes and content: the five specials escaped, and the characters
/// XML 1.0 cannot hold at all (controls other than tab, newline, carriage return)
/// replaced with U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_escapes_what_xml_cannot_hold_as_is() {
        let v = Verdict { file: "a&b.test.json".into(), failure: Some("<\"x\"> 'y' \u{1}".into()), envelope: None };
        let xml = junit(&[v]);
        assert!(xml.contains("name=\"a&amp;b.test.json\""), "{xml}");
        assert!(xml.contains("message=\"&lt;&quot;x&quot;&gt; &apos;y&apos; \u{FFFD}\""), "{xml}");
        assert!(xml.contains("failures=\"1\""), "{xml}");
    }
}
