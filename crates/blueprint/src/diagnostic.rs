//! Diagnostics: what is wrong with a blueprint, where (JSON Pointer, step id) and what to do.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How bad a diagnostic is. Errors block save and run; warnings never block; notes
/// tell what changed without asking for anything (`validate --locked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        })
    }
}

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $level:ident $name:literal ),* $(,)?) => {
        /// Stable diagnostic codes. The text form (`DEPENDENCY_CYCLE`) is what users,
        /// scripts and the studio match on; never rename one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code { $( $(#[$doc])* $variant ),* }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The level a diagnostic with this code always has.
            pub fn level(self) -> Level {
                match self { $(Code::$variant => Level::$level),* }
            }

            /// The stable `SCREAMING_SNAKE_CASE` name.
            pub fn name(self) -> &'static str {
                match self { $(Code::$variant => $name),* }
            }
        }
    };
}

codes! {
    // Reading the document.
    /// The text is not well-formed JSON.
    JsonSyntax = Error "JSON_SYNTAX",
    /// The bytes are not valid UTF-8.
    JsonInvalidUtf8 = Error "JSON_INVALID_UTF8",
    /// An object names the same key twice.
    JsonDuplicateKey = Error "JSON_DUPLICATE_KEY",
    /// The file starts with a UTF-8 byte order mark (ignored).
    JsonBom = Warning "JSON_BOM",
    /// The document is larger than 5 MB.
    LimitSize = Error "LIMIT_SIZE",
    /// JSON nesting deeper than 64 levels.
    LimitNesting = Error "LIMIT_NESTING",
    /// More than 10,000 steps.
    LimitSteps = Error "LIMIT_STEPS",
    /// Loops nested deeper than the limit.
    LimitLoopNesting = Error "LIMIT_LOOP_NESTING",
    /// An expression longer than 4 KB or nested too deeply.
    LimitExpression = Error "LIMIT_EXPRESSION",
    // Shape.
    /// `"blueprint": 1` is missing.
    VersionMissing = Error "VERSION_MISSING",
    /// A format version this mcpflow does not read.
    VersionUnsupported = Error "VERSION_UNSUPPORTED",
    /// A field the format does not have.
    UnknownField = Error "UNKNOWN_FIELD",
    /// A required field is missing.
    MissingField = Error "MISSING_FIELD",
    /// A field has the wrong JSON type or shape.
    InvalidType = Error "INVALID_TYPE",
    /// A field has the right type but a value that is not allowed.
    InvalidValue = Error "INVALID_VALUE",
    /// An id does not follow the id pattern.
    InvalidId = Error "INVALID_ID",
    /// A step `kind` the format does not have.
    UnknownKind = Error "UNKNOWN_KIND",
    /// Two steps share an id.
    DuplicateStepId = Error "DUPLICATE_STEP_ID",
    /// A step id is one of the reserved scope names.
    ReservedStepId = Error "RESERVED_STEP_ID",
    /// `after`, `fallback` or a switch target names no step.
    UnknownStep = Error "UNKNOWN_STEP",
    /// `after` names a step in another list (switch targets and fallbacks have their own codes).
    StepOutOfScope = Error "STEP_OUT_OF_SCOPE",
    /// Steps depend on each other in a circle.
    DependencyCycle = Error "DEPENDENCY_CYCLE",
    /// A step's `fallback` is not usable as a fallback.
    FallbackInvalid = Error "FALLBACK_INVALID",
    /// A switch names targets it cannot route to.
    SwitchTargetInvalid = Error "SWITCH_TARGET_INVALID",
    /// A loop has neither or both of `for_each` / `until`, or a bad `as`.
    LoopInvalid = Error "LOOP_INVALID",
    /// An `input` step asks for something a form cannot show, or its timeout has no default.
    InputInvalid = Error "INPUT_INVALID",
    /// A `workflow` step reaches its own blueprint.
    WorkflowRecursion = Error "WORKFLOW_RECURSION",
    /// `limits`, `retry`, `timeout_ms` or a loop bound out of range.
    InvalidLimit = Error "INVALID_LIMIT",
    /// `inputs` is not a valid JSON Schema for an object.
    InvalidInputsSchema = Error "INVALID_INPUTS_SCHEMA",
    /// `output_schema` is not a valid JSON Schema for an object.
    InvalidOutputSchema = Error "INVALID_OUTPUT_SCHEMA",
    /// `schedule` cannot be understood.
    InvalidSchedule = Error "INVALID_SCHEDULE",
    /// A server entry has neither or both of `command` and `url`.
    InvalidServer = Error "INVALID_SERVER",
    // Templates.
    /// `{{ }}` or the JMESPath inside it does not parse.
    TemplateSyntax = Error "TEMPLATE_SYNTAX",
    /// A template reads a name that is not in scope anywhere.
    TemplateUnknownName = Error "TEMPLATE_UNKNOWN_NAME",
    /// A template reads a step that does not run before it.
    TemplateNotUpstream = Error "TEMPLATE_NOT_UPSTREAM",
    /// `prev` in a step that does not have exactly one dependency.
    TemplatePrev = Error "TEMPLATE_PREV",
    /// A loop variable (or `index`) outside its loop.
    TemplateLoopVariable = Error "TEMPLATE_LOOP_VARIABLE",
    /// `error` outside a fallback step.
    TemplateErrorOutsideFallback = Error "TEMPLATE_ERROR_OUTSIDE_FALLBACK",
    // Warnings that need the servers.
    /// A template reads a field of a tool step's output that the tool's output schema
    /// does not list (the schema allows others: it may still be there).
    TemplatePathUnknown = Warning "TEMPLATE_PATH_UNKNOWN",
    /// A template reads a field of a tool step's output that the tool's output schema
    /// rules out (`additionalProperties: false`).
    TemplatePathAbsent = Error "TEMPLATE_PATH_ABSENT",
    /// A templated tool argument whose type (from the output schema, inputs schema or
    /// value it reads) cannot be what the tool's input schema asks for.
    TemplateTypeMismatch = Error "TEMPLATE_TYPE_MISMATCH",
    /// A step names a server that is not configured.
    ServerUnknown = Warning "SERVER_UNKNOWN",
    /// A configured server could not be reached.
    ServerUnreachable = Warning "SERVER_UNREACHABLE",
    /// The blueprint declares a server under a name the studio already has configured;
    /// the configured one is used (the studio and `mcpflow serve`, never silently).
    ServerShadowed = Warning "SERVER_SHADOWED",
    /// The server does not have that tool.
    ToolUnknown = Warning "TOOL_UNKNOWN",
    /// The server does not have that prompt.
    PromptUnknown = Warning "PROMPT_UNKNOWN",
    /// A tool without `server` exists on several servers.
    ToolAmbiguous = Warning "TOOL_AMBIGUOUS",
    /// A literal argument violates the tool's input schema.
    ArgInvalid = Warning "ARG_INVALID",
    /// A required argument of the tool is missing.
    ArgMissing = Warning "ARG_MISSING",
    /// A step can never run.
    StepUnreachable = Warning "STEP_UNREACHABLE",
    /// `layout` names a step that does not exist.
    LayoutUnknownStep = Warning "LAYOUT_UNKNOWN_STEP",
    /// A `workflow` step names a blueprint that is not known.
    WorkflowUnknown = Warning "WORKFLOW_UNKNOWN",
    /// Servers a blueprint uses were not listed yet, so their tools were not checked
    /// (`mcpflow serve`'s `validate_workflow`; `check_tools: true` lists them first).
    ToolsNotChecked = Note "TOOLS_NOT_CHECKED",
    // Comparing the live servers with the lock (`--locked`).
    /// A tool, prompt or schema the blueprint relies on changed in a way that breaks it.
    LockBreakingChange = Error "LOCK_BREAKING_CHANGE",
    /// A tool, prompt or schema changed in a way the blueprint keeps working with.
    LockCompatibleChange = Note "LOCK_COMPATIBLE_CHANGE",
    /// The blueprint uses a tool or prompt the lock does not list.
    LockOutdated = Error "LOCK_OUTDATED",
    /// A locked server could not be listed, so its tools were not compared with the lock.
    LockUnchecked = Error "LOCK_UNCHECKED",
}

impl Code {
    /// Parses the `SCREAMING_SNAKE_CASE` name back.
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.name() == name)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Code::from_name(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown diagnostic code `{name}`")))
    }
}

/// A position in a source file: 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Position {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// One finding about a blueprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub level: Level,
    pub code: Code,
    pub message: String,
    /// JSON Pointer (RFC 6901) to the offending value; `""` is the whole document.
    pub pointer: String,
    /// The id of the step the diagnostic is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// What to do about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The step whose output it is about, when that is not `step`: a template of `step`
    /// reads a field the producing step's tool does not give (`TEMPLATE_PATH_UNKNOWN`).
    /// Boxed: a diagnostic is the error of the parser's `Result`s, and stays small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer: Option<Box<String>>,
    /// Where the pointer lands in the source file, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
}

impl Diagnostic {
    pub fn new(code: Code, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            level: code.level(),
            code,
            message: message.into(),
            pointer: pointer.into(),
            step: None,
            hint: None,
            producer: None,
            position: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_step(mut self, step: impl Into<String>) -> Self {
        self.step = Some(step.into());
        self
    }

    pub fn with_producer(mut self, step: impl Into<String>) -> Self {
        self.producer = Some(Box::new(step.into()));
        self
    }

    pub fn at(mut self, position: Position) -> Self {
        self.position = Some(position);
        self
    }

    pub fn is_error(&self) -> bool {
        self.level == Level::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.level, self.code, self.message)?;
        if !self.pointer.is_empty() {
            write!(f, " (at {})", self.pointer)?;
        }
        Ok(())
    }
}

/// Appends a JSON Pointer token to a pointer, escaping `~` and `/`.
pub fn pointer_push(base: &str, token: &str) -> String {
    format!("{base}/{}", pointer_token(token))
}

/// A JSON Pointer reference token (RFC 6901): `~` written `~0`, `/` written `~1`.
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The nearest candidate to `name` by edit distance, if one is close enough to suggest.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(f64, &str)> = None;
    for cand in candidates {
        let score = strsim::jaro_winkler(name, cand);
        if score >= 0.75 && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, cand));
        }
    }
    best.map(|(_, c)| c)
}

/// [`nearest`], else a candidate that abbreviates `name` or that `name` abbreviates
/// (`args` for `arguments`, `description` for `desc`): same first three letters, the
/// shorter one's letters in order in the longer.
pub fn nearest_or_short<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str> + Clone) -> Option<&'a str> {
    nearest(name, candidates.clone()).or_else(|| candidates.into_iter().find(|c| abbreviates(name, c)))
}

fn abbreviates(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.len() < 3 || short == long || short.get(..3) != long.get(..3) {
        return false;
    }
    let mut rest = long.chars();
    short.chars().all(|c| rest.any(|l| l == c))
}

/// `", did you mean `x`?"` or nothing.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    nearest_or_short(name, candidates.iter().copied()).map(|c| format!("did you mean `{c}`?")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_or_long_field_name_gets_the_one_it_means() {
        assert_eq!(did_you_mean("arguments", ["server", "tool", "args"]), "did you mean `args`?");
        assert_eq!(did_you_mean("serer", ["server", "tool", "args"]), "did you mean `server`?");
        assert_eq!(did_you_mean("desc", ["description", "name"]), "did you mean `description`?");
        assert_eq!(did_you_mean("zzz", ["server", "tool", "args"]), "");
    }
}
