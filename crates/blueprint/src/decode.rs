//! Turning a parsed JSON value into [`Blueprint`] types, reporting every shape problem
//! (unknown fields, wrong types, missing fields, unknown kinds) with a JSON Pointer.
//!
//! serde stops at the first error, so each object is decoded in rounds: after an error
//! the offending field is dropped (or, when required, replaced by a placeholder) and the
//! object is decoded again, so one pass reports every independent problem.

use crate::diagnostic::{Code, Diagnostic, did_you_mean, pointer_push};
use crate::limits::{MAX_LOOP_DEPTH, MAX_STEPS};
use crate::model::{
    Blueprint, COMMON_KEYS, Common, FORMAT_VERSION, InputStep, KINDS, LoopStep, PromptStep, ResourceStep, Step,
    StepKind, SwitchStep, ToolStep, TransformStep, WaitStep, WorkflowStep,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// Decodes a whole document. Returns the blueprint when its shape is sound.
pub fn decode(value: Value) -> (Option<Blueprint>, Vec<Diagnostic>) {
    let mut d = Decoder { diagnostics: Vec::new(), steps_seen: 0, steps_limit_reported: false, lenient: false };
    let bp = d.blueprint(value);
    (bp, d.diagnostics)
}

/// Decodes a whole document as [`decode`] does (the same diagnostics), but returns a
/// blueprint also when its shape has errors, repaired: a wrong field left out, a missing
/// one given a placeholder, a step of unknown kind a `wait` step — so validation can find
/// the rest (an `UNKNOWN_KIND` hides nothing). Never run a repaired blueprint.
pub fn decode_repaired(value: Value) -> (Option<Blueprint>, Vec<Diagnostic>) {
    let mut d = Decoder { diagnostics: Vec::new(), steps_seen: 0, steps_limit_reported: false, lenient: true };
    let bp = d.blueprint(value);
    (bp, d.diagnostics)
}

/// Decodes one step (and its body, for loops) found at `pointer`.
pub fn decode_step(value: Value, pointer: &str) -> (Option<Step>, Vec<Diagnostic>) {
    let mut d = Decoder { diagnostics: Vec::new(), steps_seen: 0, steps_limit_reported: false, lenient: false };
    let step = d.step(value, pointer, 0);
    (step, d.diagnostics)
}

struct Decoder {
    diagnostics: Vec<Diagnostic>,
    steps_seen: usize,
    steps_limit_reported: bool,
    /// Return what could be decoded, repaired, also after errors (see [`decode_repaired`]).
    lenient: bool,
}

impl Decoder {
    fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn blueprint(&mut self, value: Value) -> Option<Blueprint> {
        let Value::Object(mut top) = value else {
            self.push(
                Diagnostic::new(
                    Code::InvalidType,
                    "",
                    format!("a blueprint is a JSON object, found {}", kind_of(&value)),
                )
                .with_hint("start from an example in workflows/ or run `mcpflow schema`"),
            );
            return None;
        };
        match top.get("blueprint") {
            None => self.push(
                Diagnostic::new(Code::VersionMissing, "", "the `blueprint` format version is missing")
                    .with_hint("add \"blueprint\": 1 at the top of the document"),
            ),
            Some(Value::Number(n)) if n.as_u64() == Some(FORMAT_VERSION) => {}
            Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > FORMAT_VERSION) => {
                self.push(
                    Diagnostic::new(
                        Code::VersionUnsupported,
                        "/blueprint",
                        format!(
                            "this blueprint was made by a newer mcpflow (format {n}); this mcpflow reads format {FORMAT_VERSION}"
                        ),
                    )
                    .with_hint("upgrade mcpflow to open it"),
                );
                return None;
            }
            Some(other) => self.push(
                Diagnostic::new(
                    Code::VersionUnsupported,
                    "/blueprint",
                    format!("`blueprint` must be the number {FORMAT_VERSION}, found {}", describe(other)),
                )
                .with_hint("write \"blueprint\": 1"),
            ),
        }
        let steps_value = top.shift_remove("steps");
        top.insert("blueprint".into(), json!(FORMAT_VERSION));
        let head: Option<Blueprint> = self.rounds(top, "", "the blueprint", &[("id", json!("x"))], &["steps"]);
        let steps = match steps_value {
            None => {
                self.push(
                    Diagnostic::new(Code::MissingField, "", "the blueprint has no `steps`")
                        .with_hint("add \"steps\": [ … ] with at least one step"),
                );
                None
            }
            Some(v) => self.step_list(v, "/steps", 0),
        };
        let mut bp = head?;
        bp.steps = steps?;
        (self.lenient || !self.diagnostics.iter().any(Diagnostic::is_error)).then_some(bp)
    }

    fn step_list(&mut self, value: Value, pointer: &str, loop_depth: usize) -> Option<Vec<Step>> {
        let Value::Array(items) = value else {
            self.push(Diagnostic::new(
                Code::InvalidType,
                pointer,
                format!("`steps` must be an array of steps, found {}", kind_of(&value)),
            ));
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.into_iter().enumerate() {
            self.steps_seen += 1;
            if self.steps_seen > MAX_STEPS {
                if !self.steps_limit_reported {
                    self.steps_limit_reported = true;
                    self.push(
                        Diagnostic::new(
                            Code::LimitSteps,
                            pointer_push(pointer, &i.to_string()),
                            format!("more than {MAX_STEPS} steps"),
                        )
                        .with_hint("split the blueprint into sub-workflows (`kind: workflow`) or use a loop"),
                    );
                }
                return None;
            }
            match self.step(item, &pointer_push(pointer, &i.to_string()), loop_depth) {
                Some(s) => out.push(s),
                None => ok = false,
            }
        }
        (ok || self.lenient).then_some(out)
    }

    fn step(&mut self, value: Value, pointer: &str, loop_depth: usize) -> Option<Step> {
        let Value::Object(obj) = value else {
            self.push(Diagnostic::new(
                Code::InvalidType,
                pointer,
                format!("a step is a JSON object, found {}", kind_of(&value)),
            ));
            return None;
        };
        let step_id = obj.get("id").and_then(Value::as_str).map(str::to_owned);
        let with_step = |d: Diagnostic| match &step_id {
            Some(id) => d.with_step(id.clone()),
            None => d,
        };
        let kind = match obj.get("kind") {
            None => {
                self.push(with_step(
                    Diagnostic::new(Code::MissingField, pointer, "the step has no `kind`")
                        .with_hint(format!("add \"kind\": one of {}", KINDS.join(", "))),
                ));
                None
            }
            Some(Value::String(k)) if KINDS.contains(&k.as_str()) => KINDS.iter().copied().find(|n| n == k),
            Some(Value::String(k)) => {
                let hint = match did_you_mean(k, KINDS.iter().copied()) {
                    s if s.is_empty() => format!("the kinds are {}", KINDS.join(", ")),
                    s => s,
                };
                self.push(with_step(
                    Diagnostic::new(
                        Code::UnknownKind,
                        pointer_push(pointer, "kind"),
                        format!("unknown step kind `{k}`"),
                    )
                    .with_hint(hint),
                ));
                None
            }
            Some(other) => {
                self.push(with_step(Diagnostic::new(
                    Code::InvalidType,
                    pointer_push(pointer, "kind"),
                    format!("`kind` must be a string, found {}", kind_of(other)),
                )));
                None
            }
        };
        let mut common = Map::new();
        let mut rest = Map::new();
        let mut body = None;
        for (k, v) in obj {
            if COMMON_KEYS.contains(&k.as_str()) {
                common.insert(k, v);
            } else if k == "steps" && kind == Some("loop") {
                body = Some(v);
            } else if k != "kind" {
                rest.insert(k, v);
            }
        }
        let before = self.diagnostics.len();
        let common: Option<Common> = self.rounds(common, pointer, "a step", &[("id", json!("_"))], &[]);
        let Some(kind) = kind else {
            // Repaired (see `decode_repaired`): a step of no known kind waits.
            let placeholder = StepKind::Wait(WaitStep { ms: 0 });
            return if self.lenient { Some(Step { common: common?, kind: placeholder }) } else { None };
        };
        let what = format!("a {kind} step");
        let kind_allowed: Vec<&str> = COMMON_KEYS.iter().copied().chain(["kind", "steps"]).collect();
        let kind = match kind {
            "tool" => {
                let mark = self.diagnostics.len();
                let step = self.rounds::<ToolStep>(rest, pointer, &what, &[("tool", json!("_"))], &kind_allowed);
                // A missing tool name is the `tool` field's problem: point at it, as
                // the studio shows it in that field.
                for d in &mut self.diagnostics[mark..] {
                    if d.code == Code::MissingField && d.pointer == pointer && d.message.ends_with("`tool`") {
                        d.pointer = format!("{pointer}/tool");
                        d.hint = Some("add \"tool\" with the name of the tool to call".to_owned());
                    }
                }
                step.map(StepKind::Tool)
            }
            "resource" => self
                .rounds::<ResourceStep>(
                    rest,
                    pointer,
                    &what,
                    &[("server", json!("_")), ("uri", json!("_"))],
                    &kind_allowed,
                )
                .map(StepKind::Resource),
            "prompt" => self
                .rounds::<PromptStep>(
                    rest,
                    pointer,
                    &what,
                    &[("server", json!("_")), ("prompt", json!("_"))],
                    &kind_allowed,
                )
                .map(StepKind::Prompt),
            "transform" => self
                .rounds::<TransformStep>(rest, pointer, &what, &[("value", Value::Null)], &kind_allowed)
                .map(StepKind::Transform),
            "switch" => self
                .rounds::<SwitchStep>(rest, pointer, &what, &[("cases", json!([]))], &kind_allowed)
                .map(StepKind::Switch),
            "workflow" => self
                .rounds::<WorkflowStep>(rest, pointer, &what, &[("workflow", json!("_"))], &kind_allowed)
                .map(StepKind::Workflow),
            "wait" => {
                self.rounds::<WaitStep>(rest, pointer, &what, &[("ms", json!(0))], &kind_allowed).map(StepKind::Wait)
            }
            "input" => self
                .rounds::<InputStep>(rest, pointer, &what, &[("prompt", json!("_"))], &kind_allowed)
                .map(StepKind::Input),
            _ => {
                let head = self.rounds::<LoopStep>(rest, pointer, &what, &[], &kind_allowed);
                let body_ptr = pointer_push(pointer, "steps");
                let steps = match body {
                    None => {
                        self.push(with_step(
                            Diagnostic::new(Code::MissingField, pointer, "the loop has no body (`steps`)")
                                .with_hint("add \"steps\": [ … ] with the steps to run per iteration"),
                        ));
                        None
                    }
                    Some(_) if loop_depth + 1 > MAX_LOOP_DEPTH => {
                        self.push(with_step(
                            Diagnostic::new(
                                Code::LimitLoopNesting,
                                body_ptr,
                                format!("loops are nested more than {MAX_LOOP_DEPTH} deep"),
                            )
                            .with_hint("move the inner loops into a sub-workflow (`kind: workflow`)"),
                        ));
                        None
                    }
                    Some(v) => self.step_list(v, &body_ptr, loop_depth + 1),
                };
                // Repaired: a loop whose body could not be read keeps an empty one.
                let steps = if self.lenient { steps.or_else(|| Some(Vec::new())) } else { steps };
                head.zip(steps).map(|(mut l, s)| {
                    l.steps = s;
                    StepKind::Loop(l)
                })
            }
        };
        if let Some(id) = &step_id {
            for d in &mut self.diagnostics[before..] {
                if d.step.is_none() {
                    d.step = Some(id.clone());
                }
            }
        }
        let kind = match kind {
            None if self.lenient => StepKind::Wait(WaitStep { ms: 0 }),
            kind => kind?,
        };
        Some(Step { common: common?, kind })
    }

    /// Decodes `obj` into `T`, reporting every independent error (see the module docs).
    /// `required` gives placeholders for required fields so decoding can go on.
    fn rounds<T: DeserializeOwned>(
        &mut self,
        mut obj: Map<String, Value>,
        pointer: &str,
        what: &str,
        required: &[(&str, Value)],
        also_allowed: &[&str],
    ) -> Option<T> {
        let mut failed = false;
        let mut value = Value::Object(std::mem::take(&mut obj));
        for _ in 0..64 {
            let result: Result<T, _> = serde_path_to_error::deserialize(&value);
            match result {
                Ok(v) => return (!failed || self.lenient).then_some(v),
                Err(e) => {
                    failed = true;
                    let segments: Vec<String> = e.path().iter().map(segment_token).collect();
                    let d = shape_diagnostic(&e.inner().to_string(), pointer, &segments, what, also_allowed);
                    let field = segments.first().cloned().or_else(|| named_field(&d.message));
                    self.push(d);
                    let field = field?;
                    let obj = value.as_object_mut()?;
                    match required.iter().find(|(k, _)| *k == field) {
                        Some((_, placeholder)) => {
                            if obj.get(&field) == Some(placeholder) {
                                return None;
                            }
                            obj.insert(field, placeholder.clone());
                        }
                        None => {
                            obj.shift_remove(&field)?;
                        }
                    }
                }
            }
        }
        None
    }
}

fn segment_token(seg: &serde_path_to_error::Segment) -> String {
    use serde_path_to_error::Segment;
    match seg {
        Segment::Seq { index } => index.to_string(),
        Segment::Map { key } => key.clone(),
        Segment::Enum { variant } => variant.clone(),
        Segment::Unknown => "?".into(),
    }
}

/// The field a serde message is about: `unknown field `x`` or `missing field `x``.
fn named_field(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_owned())
}

/// Turns one serde error into a diagnostic with a pointer, a code and plain words.
fn shape_diagnostic(raw: &str, base: &str, segments: &[String], what: &str, also_allowed: &[&str]) -> Diagnostic {
    let mut pointer = base.to_owned();
    for s in segments {
        pointer = pointer_push(&pointer, s);
    }
    let place = if segments.is_empty() { what.to_owned() } else { format!("`{}`", segments.join(".")) };
    if let Some(rest) = raw.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or_default();
        let mut allowed = expected_list(rest);
        if segments.len() <= 1 {
            allowed.extend(also_allowed.iter().map(|s| (*s).to_owned()));
        }
        let hint = match did_you_mean(name, allowed.iter().map(String::as_str)) {
            s if !s.is_empty() => s,
            _ if allowed.is_empty() => "remove it".to_owned(),
            _ => format!("remove it; allowed here: {}", allowed.join(", ")),
        };
        // serde_path_to_error already ends the path with the unknown key.
        let (pointer, parent) = match segments.split_last() {
            Some((last, parent)) if last == name => (pointer, parent),
            _ => (pointer_push(&pointer, name), segments),
        };
        let in_what = if parent.is_empty() { what.to_owned() } else { format!("`{}`", parent.join(".")) };
        return Diagnostic::new(Code::UnknownField, pointer, format!("unknown field `{name}` in {in_what}"))
            .with_hint(hint);
    }
    if let Some(rest) = raw.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or_default();
        return Diagnostic::new(Code::MissingField, pointer, format!("{place} needs the field `{name}`"))
            .with_hint(format!("add \"{name}\""));
    }
    if let Some(rest) = raw.strip_prefix("unknown variant `") {
        let name = rest.split('`').next().unwrap_or_default();
        let allowed = expected_list(rest);
        return Diagnostic::new(Code::InvalidValue, pointer, format!("{place} cannot be `{name}`"))
            .with_hint(format!("use one of: {}", allowed.join(", ")));
    }
    let code = if raw.starts_with("invalid value") { Code::InvalidValue } else { Code::InvalidType };
    let message = humanize(raw);
    let hint = if message.starts_with("invalid type: string")
        && message.contains("expected a")
        && message.contains("number")
    {
        "write the number without quotes".to_owned()
    } else if message.contains("number `-") {
        "negative numbers are not allowed here".to_owned()
    } else {
        format!("see docs/blueprint.md or `mcpflow schema` for the shape of {place}")
    };
    Diagnostic::new(code, pointer, format!("{place}: {message}")).with_hint(hint)
}

/// The names listed after "expected one of" in a serde message.
fn expected_list(message: &str) -> Vec<String> {
    let Some(i) = message.find("expected") else { return Vec::new() };
    message[i..].split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// serde's vocabulary in the words of JSON.
fn humanize(raw: &str) -> String {
    let mut s = raw.to_owned();
    for (from, to) in [
        ("expected u64", "expected a whole number ≥ 0"),
        ("expected u32", "expected a whole number ≥ 0"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected an object"),
        ("invalid type: map", "invalid type: object"),
        ("invalid type: sequence", "invalid type: array"),
        ("invalid type: unit value", "invalid type: null"),
        ("integer `", "number `"),
        ("floating point `", "number `"),
    ] {
        s = s.replace(from, to);
    }
    if let Some(i) = s.find("expected struct ") {
        s.replace_range(i.., "expected an object");
    }
    s
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Array(_) | Value::Object(_) => kind_of(v).to_owned(),
        other => other.to_string(),
    }
}

impl<'de> serde::Deserialize<'de> for Step {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let (step, diagnostics) = decode_step(value, "");
        match (step, diagnostics.into_iter().find(Diagnostic::is_error)) {
            (Some(s), None) => Ok(s),
            (_, Some(e)) => Err(serde::de::Error::custom(format!("{} at {}", e.message, e.pointer))),
            (None, None) => Err(serde::de::Error::custom("invalid step")),
        }
    }
}
