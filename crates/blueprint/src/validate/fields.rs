//! Field-level rules: numbers in range, schedules that parse, servers with one
//! transport, an inputs schema that is a schema, loop forms, argument shapes.

use super::{RESERVED, Validator, is_blueprint_id, is_step_id};
use crate::diagnostic::{Code, Diagnostic, pointer_push};
use crate::limits::{
    DEFAULT_MAX_VALUE_BYTES, DEFAULT_MAX_VALUE_DEPTH, MAX_MAX_VALUE_BYTES, MAX_MAX_VALUE_DEPTH, MIN_MAX_VALUE_BYTES,
};
use crate::model::{Retry, Step, StepKind};
use crate::plan::StepTemplates;
use crate::template::Template;
use serde_json::Value;
use std::str::FromStr;

const MAX_ATTEMPTS: u32 = 100;

fn limit(pointer: impl Into<String>, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::InvalidLimit, pointer, message)
}

impl Validator<'_> {
    pub(super) fn limits(&mut self) {
        let Some(l) = &self.bp.limits else { return };
        for (name, value) in [
            ("max_step_runs", l.max_step_runs),
            ("timeout_ms", l.timeout_ms),
            ("concurrency", l.concurrency.map(u64::from)),
        ] {
            if value == Some(0) {
                self.push(
                    limit(format!("/limits/{name}"), format!("`limits.{name}` must be at least 1"))
                        .with_hint("remove it to use the default"),
                );
            }
        }
        if let Some(bytes) = l.max_value_bytes
            && !(MIN_MAX_VALUE_BYTES..=MAX_MAX_VALUE_BYTES).contains(&bytes)
        {
            self.push(
                limit(
                    "/limits/max_value_bytes",
                    format!(
                        "`limits.max_value_bytes` is {bytes}; it must be {MIN_MAX_VALUE_BYTES} (1 KB) to {MAX_MAX_VALUE_BYTES} (1 GB)"
                    ),
                )
                .with_hint(format!("remove it to use the default ({DEFAULT_MAX_VALUE_BYTES} bytes, 64 MB)")),
            );
        }
        if let Some(depth) = l.max_value_depth
            && !(1..=MAX_MAX_VALUE_DEPTH).contains(&depth)
        {
            self.push(
                limit(
                    "/limits/max_value_depth",
                    format!("`limits.max_value_depth` is {depth}; it must be 1 to {MAX_MAX_VALUE_DEPTH}"),
                )
                .with_hint(format!("remove it to use the default ({DEFAULT_MAX_VALUE_DEPTH} levels)")),
            );
        }
    }

    pub(super) fn retry(&mut self, r: &Retry, pointer: &str, step: Option<&str>) {
        let mut found = Vec::new();
        if r.attempts == 0 || r.attempts > MAX_ATTEMPTS {
            found.push(
                limit(
                    pointer_push(pointer, "attempts"),
                    format!("`retry.attempts` is {}; it counts every try and must be 1 to {MAX_ATTEMPTS}", r.attempts),
                )
                .with_hint("1 means no retry"),
            );
        }
        if let (Some(d), Some(m)) = (r.delay_ms, r.max_delay_ms)
            && d > m
        {
            found.push(limit(
                pointer_push(pointer, "max_delay_ms"),
                format!("`retry.max_delay_ms` ({m}) is below `retry.delay_ms` ({d})"),
            ));
        }
        for d in found {
            self.push(match step {
                Some(s) => d.with_step(s),
                None => d,
            });
        }
    }

    pub(super) fn inputs_schema(&mut self) {
        let Some(schema) = &self.bp.inputs else { return };
        match schema.get("type") {
            // `{"names": {"type": "array"}}`: the properties written without their schema
            // around them. JSON Schema ignores unknown keywords, so it would check nothing.
            None if !schema.contains_key("properties") => {
                let names: Vec<&str> =
                    schema.keys().map(String::as_str).filter(|k| !SCHEMA_KEYWORDS.contains(k)).collect();
                if !names.is_empty() {
                    let list = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
                    self.push(
                        Diagnostic::new(
                            Code::InvalidInputsSchema,
                            "/inputs",
                            format!("`inputs` is not an object schema: {list} are not JSON Schema keywords"),
                        )
                        .with_hint(format!(
                            "write the inputs as properties: {{\"type\": \"object\", \"properties\": {{\"{}\": …}}}}",
                            names[0]
                        )),
                    );
                    return;
                }
            }
            None => {}
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => {
                self.push(
                    Diagnostic::new(
                        Code::InvalidInputsSchema,
                        "/inputs/type",
                        format!("`inputs` must describe an object, but its type is {other}"),
                    )
                    .with_hint("inputs are named: write {\"type\": \"object\", \"properties\": {…}}"),
                );
                return;
            }
        }
        if let Err(message) = compile_schema(&Value::Object(schema.clone())) {
            self.push(
                Diagnostic::new(
                    Code::InvalidInputsSchema,
                    "/inputs",
                    format!("`inputs` is not a valid JSON Schema: {message}"),
                )
                .with_hint("see https://json-schema.org; `mcpflow schema` shows the blueprint format itself"),
            );
        }
    }

    /// `output_schema`: an object schema (MCP's `outputSchema` must describe an object).
    pub(super) fn output_schema(&mut self) {
        let Some(schema) = &self.bp.output_schema else { return };
        if schema.get("type") != Some(&Value::String("object".into())) {
            let found = schema.get("type").map_or_else(|| "missing".to_owned(), Value::to_string);
            self.push(
                Diagnostic::new(
                    Code::InvalidOutputSchema,
                    "/output_schema/type",
                    format!(
                        "`output_schema` must describe an object (an MCP tool's output is one), but its type is {found}"
                    ),
                )
                .with_hint("write {\"type\": \"object\", \"properties\": {…}} and make `output` an object"),
            );
            return;
        }
        if let Err(message) = compile_schema(&Value::Object(schema.clone())) {
            self.push(
                Diagnostic::new(
                    Code::InvalidOutputSchema,
                    "/output_schema",
                    format!("`output_schema` is not a valid JSON Schema: {message}"),
                )
                .with_hint("see https://json-schema.org"),
            );
        }
    }

    pub(super) fn schedule(&mut self) {
        let Some(s) = &self.bp.schedule else { return };
        let set = [s.cron.is_some(), s.every.is_some(), s.at.is_some()].iter().filter(|b| **b).count();
        let bad = |field: &str, message: String, hint: &str| {
            Diagnostic::new(Code::InvalidSchedule, format!("/schedule{field}"), message).with_hint(hint)
        };
        if set != 1 {
            self.push(bad(
                "",
                format!("`schedule` needs exactly one of `cron`, `every`, `at` ({set} given)"),
                "for example {\"cron\": \"0 9 * * *\", \"timezone\": \"Europe/Berlin\"} or {\"every\": \"5m\"}",
            ));
        }
        if let Some(cron) = &s.cron {
            let fields = cron.split_whitespace().count();
            if !cron.trim_start().starts_with('@') && fields != 5 {
                self.push(bad(
                    "/cron",
                    format!("`{cron}` has {fields} fields; cron here has 5 (minute hour day month weekday)"),
                    "for example \"0 9 * * 1-5\" is 09:00 on weekdays",
                ));
            } else if let Err(e) = croner::Cron::from_str(cron) {
                self.push(bad(
                    "/cron",
                    format!("`{cron}` is not a valid cron expression: {e}"),
                    "fields: minute hour day month weekday",
                ));
            }
        }
        if let Some(tz) = &s.timezone {
            if s.cron.is_none() {
                self.push(bad("/timezone", "`timezone` applies only to `cron`".into(), "remove it or add `cron`"));
            } else if chrono_tz::Tz::from_str(tz).is_err() {
                self.push(bad(
                    "/timezone",
                    format!("unknown timezone `{tz}`"),
                    "use an IANA name such as \"UTC\", \"Europe/Berlin\" or \"America/New_York\"",
                ));
            }
        }
        if let Some(every) = &s.every {
            match humantime::parse_duration(every) {
                Ok(d) if d.as_secs() >= 1 => {}
                Ok(_) => self.push(bad(
                    "/every",
                    format!("`every` is {every}; the shortest interval is 1s"),
                    "use 1s or more",
                )),
                Err(e) => self.push(bad(
                    "/every",
                    format!("`{every}` is not an interval: {e}"),
                    "write it like \"30s\", \"5m\", \"1h 30m\", \"1d\"",
                )),
            }
        }
        if let Some(at) = &s.at
            && chrono::DateTime::parse_from_rfc3339(at).is_err()
        {
            self.push(bad(
                "/at",
                format!("`{at}` is not an RFC 3339 time"),
                "write it like \"2026-12-01T09:00:00Z\" or with an offset, \"2026-12-01T09:00:00+01:00\"",
            ));
        }
    }

    pub(super) fn servers(&mut self) {
        for (name, cfg) in &self.bp.servers {
            let ptr = pointer_push("/servers", name);
            let bad = |message: String, hint: &str| Diagnostic::new(Code::InvalidServer, &ptr, message).with_hint(hint);
            let mut found = Vec::new();
            match (&cfg.command, &cfg.url) {
                (None, None) => found.push(bad(
                    format!("server `{name}` has neither `command` nor `url`"),
                    "stdio servers have \"command\" (and \"args\"); HTTP servers have \"url\"",
                )),
                (Some(_), Some(_)) => found.push(bad(
                    format!("server `{name}` has both `command` and `url`"),
                    "keep one: \"command\" for stdio, \"url\" for streamable HTTP",
                )),
                (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => found.push(bad(
                    format!("server `{name}`: `{url}` is not an http(s) URL"),
                    "write \"http://127.0.0.1:PORT/mcp\"",
                )),
                _ => {}
            }
            if let Some(t) = &cfg.transport
                && !matches!(t.as_str(), "stdio" | "http" | "streamable-http" | "streamableHttp")
            {
                found.push(bad(
                    format!("server `{name}`: transport `{t}` is not supported"),
                    "use \"stdio\" or \"http\" (streamable HTTP); the old SSE transport is not supported",
                ));
            }
            for (field, map) in [("env", &cfg.env), ("headers", &cfg.headers)] {
                if let Some((k, _)) = map.iter().find(|(_, v)| !v.is_string()) {
                    found.push(bad(
                        format!("server `{name}`: `{field}.{k}` must be a string"),
                        "secrets stay in the environment: write \"${env:NAME}\"",
                    ));
                }
            }
            if cfg.max_concurrency == Some(0) || cfg.timeout_ms == Some(0) {
                found.push(limit(
                    &ptr,
                    format!("server `{name}`: `max_concurrency` and `timeout_ms` must be at least 1"),
                ));
            }
            self.diags.extend(found);
        }
    }

    /// Rules on one step's own fields (before the step joins the arena).
    pub(super) fn step_fields(&mut self, step: &Step, ptr: &str, templates: &StepTemplates) {
        let id = step.id();
        let diag = |code: Code, field: &str, message: String| {
            Diagnostic::new(code, format!("{ptr}{field}"), message).with_step(id)
        };
        let mut found = Vec::new();
        if step.common.timeout_ms == Some(0) {
            found.push(
                diag(Code::InvalidLimit, "/timeout_ms", "`timeout_ms` must be at least 1".into())
                    .with_hint("remove it for no step timeout"),
            );
        }
        if let Some(r) = &step.common.retry {
            self.retry(r, &format!("{ptr}/retry"), Some(id));
        }
        if let Some(name) = &step.common.save {
            if !is_step_id(name) {
                found.push(
                    diag(Code::InvalidValue, "/save", format!("`save` name `{name}` is not allowed"))
                        .with_hint("use letters, digits and `_`; it is read as `saved.<name>`"),
                );
            } else if let Some(other) = self.saved_names.get(name) {
                found.push(
                    diag(Code::InvalidValue, "/save", format!("`saved.{name}` is already written by step `{other}`"))
                        .with_hint("give each saved value its own name"),
                );
            } else {
                self.saved_names.insert(name.clone(), id.to_owned());
            }
        }
        match templates {
            StepTemplates::Tool { args } | StepTemplates::Prompt { args } | StepTemplates::Workflow { args } => {
                let failed = self.diags.iter().any(|d| d.pointer.starts_with(&format!("{ptr}/args")));
                if let Some(t) = args
                    && !matches!(t, Template::Expr(_) | Template::Object(_) | Template::Literal(Value::Object(_)))
                    && !failed
                {
                    found.push(
                        diag(Code::InvalidType, "/args", "`args` must be an object or one whole template".into())
                            .with_hint("write {\"name\": value, …} or \"{{ some.object }}\""),
                    );
                }
            }
            _ => {}
        }
        if let StepKind::Tool(t) = &step.kind
            && t.tool.trim().is_empty()
        {
            found.push(
                diag(Code::InvalidValue, "/tool", format!("step `{id}` names no tool: `tool` is empty"))
                    .with_hint("write the name of the tool this step calls"),
            );
        }
        if let StepKind::Workflow(w) = &step.kind
            && !is_blueprint_id(&w.workflow)
        {
            // A reference is an id, never a path: `../evil` or `/etc/x` must not reach a file.
            found.push(
                diag(Code::InvalidId, "/workflow", format!("`workflow` `{}` is not a blueprint id", w.workflow))
                    .with_hint(
                        "name the blueprint by its `id` (lowercase letters, digits, `-` and `_`, starting with a \
                         letter or digit), not by a file name or path",
                    ),
            );
        } else if let StepKind::Workflow(w) = &step.kind
            && w.workflow == self.bp.id
        {
            found.push(
                diag(
                    Code::WorkflowRecursion,
                    "/workflow",
                    format!("step `{id}` runs blueprint `{}`, which is the blueprint it is in", w.workflow),
                )
                .with_hint("a blueprint cannot call itself; use a loop instead"),
            );
        }
        if let StepKind::Loop(l) = &step.kind {
            found.extend(self.loop_fields(id, l, templates, &diag));
        }
        if let StepKind::Input(i) = &step.kind {
            found.extend(input_fields(id, i, step.common.timeout_ms, &diag));
        }
        self.diags.extend(found);
    }

    fn loop_fields(
        &self,
        id: &str,
        l: &crate::model::LoopStep,
        templates: &StepTemplates,
        diag: &dyn Fn(Code, &str, String) -> Diagnostic,
    ) -> Vec<Diagnostic> {
        let mut found = Vec::new();
        match (&l.for_each, &l.until) {
            (None, None) => found.push(
                diag(Code::LoopInvalid, "", format!("loop `{id}` has neither `for_each` nor `until`"))
                    .with_hint("iterate a list with \"for_each\": \"{{ … }}\" or repeat with \"until\": \"{{ … }}\""),
            ),
            (Some(_), Some(_)) => found.push(
                diag(Code::LoopInvalid, "", format!("loop `{id}` has both `for_each` and `until`"))
                    .with_hint("keep one: a loop either iterates a list or repeats until a condition"),
            ),
            _ => {}
        }
        if let StepTemplates::Loop { for_each: Some(t), .. } = templates
            && !matches!(t, Template::Expr(_) | Template::Array(_) | Template::Literal(Value::Array(_)))
            && !matches!(t, Template::Literal(Value::Null))
        {
            found.push(
                diag(Code::LoopInvalid, "/for_each", "`for_each` must be one whole template or an array".into())
                    .with_hint("write \"for_each\": \"{{ list.items }}\" with nothing around the braces"),
            );
        }
        if l.until.is_none() && l.for_each.is_some() && l.on_exhausted.is_some() {
            found.push(
                diag(Code::LoopInvalid, "/on_exhausted", "`on_exhausted` applies to `until` loops only".into())
                    .with_hint("remove `on_exhausted`: a `for_each` ends with its list"),
            );
        }
        if l.until.is_some() && l.concurrency.is_some_and(|c| c > 1) {
            found.push(
                diag(Code::LoopInvalid, "/concurrency", "`until` loops run one iteration at a time".into())
                    .with_hint("remove `concurrency`, or iterate a list with `for_each`"),
            );
        }
        if let Some(name) = &l.as_name {
            let problem = if !is_step_id(name) {
                Some(format!("loop variable `{name}` is not a valid name"))
            } else if name != "item" && (RESERVED.contains(&name.as_str()) || name == "last") {
                Some(format!("loop variable `{name}` is a reserved name"))
            } else if self.bp_has_step(name) {
                Some(format!("loop variable `{name}` has the same name as a step"))
            } else {
                None
            };
            if let Some(p) = problem {
                found.push(
                    diag(Code::LoopInvalid, "/as", p)
                        .with_hint("pick another name; it is how the body reads the current element"),
                );
            }
        }
        if l.concurrency == Some(0) {
            found.push(
                diag(Code::InvalidLimit, "/concurrency", "`concurrency` must be at least 1".to_owned())
                    .with_hint("remove it to run one iteration at a time"),
            );
        }
        if l.max_iterations == Some(0) {
            found.push(
                diag(Code::InvalidLimit, "/max_iterations", "`max_iterations` must be at least 1".to_owned()).with_hint(
                    "remove it: a `for_each` then runs over its whole list, an `until` stops after 1,000 iterations",
                ),
            );
        }
        if l.steps.is_empty() {
            found.push(
                diag(Code::LoopInvalid, "/steps", format!("loop `{id}` has an empty body"))
                    .with_hint("add the steps to run per iteration"),
            );
        }
        found
    }

    fn bp_has_step(&self, name: &str) -> bool {
        fn walk(steps: &[Step], name: &str) -> bool {
            steps.iter().any(|s| s.id() == name || matches!(&s.kind, StepKind::Loop(l) if walk(&l.steps, name)))
        }
        walk(&self.bp.steps, name)
    }
}

/// Rules of an `input` step: a schema a form can show, and a timeout that knows what to do.
fn input_fields(
    id: &str,
    i: &crate::model::InputStep,
    timeout_ms: Option<u64>,
    diag: &dyn Fn(Code, &str, String) -> Diagnostic,
) -> Vec<Diagnostic> {
    use crate::model::OnTimeout;
    let mut found = Vec::new();
    if let Err(problem) = crate::ask::input_form(i.schema.as_ref(), i.is_approval(), &i.prompt) {
        found.push(diag(Code::InputInvalid, "/schema", format!("input `{id}`: {problem}")).with_hint(
            "ask for a string, number, integer, boolean or enum, or an object of these (one form field each)",
        ));
    }
    if i.on_timeout == Some(OnTimeout::Default) {
        if i.default.is_none() {
            found.push(
                diag(
                    Code::InputInvalid,
                    "/on_timeout",
                    format!("input `{id}` has `on_timeout: default` but no `default`"),
                )
                .with_hint("add \"default\" with the value to take when nobody answers in time"),
            );
        }
        if timeout_ms.is_none() {
            found.push(
                diag(Code::InputInvalid, "/on_timeout", format!("input `{id}` has `on_timeout` but no `timeout_ms`"))
                    .with_hint("add \"timeout_ms\": how long to wait for an answer"),
            );
        }
    }
    if i.prompt.trim().is_empty() {
        found.push(
            diag(Code::InputInvalid, "/prompt", format!("input `{id}` has an empty `prompt`"))
                .with_hint("say what the person is asked, e.g. \"Which namespace?\""),
        );
    }
    found
}

/// Compiles a JSON Schema, turning every failure (a panic included) into a message.
pub fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    let schema = schema.clone();
    match std::panic::catch_unwind(move || jsonschema::validator_for(&schema).map_err(|e| e.to_string())) {
        Ok(r) => r,
        Err(_) => Err("the schema could not be compiled".into()),
    }
}

/// The JSON Schema keywords an `inputs` schema may hold without `type` or `properties`.
const SCHEMA_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "$comment",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "minProperties",
    "maxProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "enum",
    "const",
    "deprecated",
    "readOnly",
    "writeOnly",
];
